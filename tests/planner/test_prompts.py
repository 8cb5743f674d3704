"""Prompt templates load per family, name only known placeholders, and fill completely."""

from __future__ import annotations

import re

import pytest

from compass.planner.modules import common_values, skill_listing
from compass.planner.observation import build_observation
from compass.planner.prompts import PLACEHOLDERS, REQUIRED, TemplateError, load_templates, parse_template
from tests.planner.conftest import make_view


def test_combat_templates_load_with_known_placeholders():
    templates = load_templates("combat")
    assert set(REQUIRED) <= set(templates)
    for t in templates.values():
        assert set(t.placeholders) <= PLACEHOLDERS
        assert "unitid" not in t.text and "\u2019" not in t.text  # the paper's extraction garbage is fixed
        assert "<<<unit_id>>>" in t.text and "<<<unit_type>>>" in t.text
    # The formats the parsers expect are what the templates ask for.
    assert "##Game_situation##" in templates["perception"].text
    assert "##Success##" in templates["reflection"].text and "##Critique##" in templates["reflection"].text
    assert "##Skill_guidance##" in templates["task_reasoning"].text
    assert "##Skill_generation##" in templates["skill_synthesis"].text
    assert "obs='current'" in templates["actor"].text


def test_unknown_placeholder_fails_at_load_time():
    with pytest.raises(TemplateError, match="unknown placeholder.*<<<enemy_count>>>"):
        parse_template("combat", "perception", "Hello <<<unit_id>>>, <<<enemy_count>>> enemies")


def test_family_without_templates_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown game family .nosuch."):
        load_templates("nosuch")


def test_fill_needs_every_value_and_does_not_rescan_values():
    t = parse_template("combat", "actor", "Unit <<<unit_id>>>: <<<task_description>>>")
    with pytest.raises(TemplateError, match="no value for task_description"):
        t.fill({"unit_id": "1"})
    assert t.fill({"unit_id": "1", "task_description": "say <<<unit_id>>>"}) == "Unit 1: say <<<unit_id>>>"


def test_assembled_prompts_have_no_leftover_placeholders(library):
    view = make_view(relayed=True)
    obs = build_observation(view)
    values = common_values(
        unit_type="stalker",
        unit_id=0,
        scenario="protoss_5_vs_5",
        task="Kite zealots",
        overall_task="Defeat all enemy units",
        obs=obs,
        ally_tasks={1: "focus fire"},
        reward=0.25,
        history="None.",
        last_reasoning="",
        situation="",
        reflection="",
        current=library.get("focus_fire"),
    )
    values["skill_library"] = skill_listing([library.get("kite_melee"), library.get("regroup")])
    for module, template in load_templates("combat").items():
        prompt = template.fill(values)
        assert not re.search(r"<<<\w+>>>", prompt), module
        assert "<<<" not in prompt and ">>>" not in prompt
    perception = load_templates("combat")["perception"].fill(values)
    assert "Enemy #4 zealot" in perception  # relayed entity in the minimap text
    assert "Enemy #0: zealot" in perception  # the text observation
    assert "Ally #1: focus fire" in perception or "Ally #1: focus fire" in values["ally_task"]
    assert "def kite_melee(obs: str):  # Kite melee enemies" in values["skill_library"]
    assert len(obs.images) == 2  # ego frame + minimap


def test_no_image_observation_block_says_so():
    obs = build_observation(make_view(), images=False)
    assert obs.images == () and "No screenshot is attached" in obs.introduction()


def test_perception_does_not_list_relayed_units_twice():
    obs = build_observation(make_view(relayed=True))
    assert "[relayed by Ally #2" in obs.text and "Enemy #4 zealot" in obs.minimap
    assert obs.minimap_for_perception().startswith(
        "The units relayed by allies are listed in the description"
    )
    plain = build_observation(make_view())
    assert plain.minimap_for_perception() == plain.minimap == "No shared information beyond your own sight."
