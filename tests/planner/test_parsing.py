"""The ``##Section##:`` parser tolerates what models actually send, and says NoAnswer otherwise."""

from __future__ import annotations

import pytest

from compass.planner.parsing import (
    ActorChoice,
    NoAnswer,
    Perception,
    Reflection,
    SkillCode,
    TaskPlan,
    code_block,
    is_null,
    parse_actor,
    parse_bool,
    parse_perception,
    parse_reflection,
    parse_repair,
    parse_sections,
    parse_synthesis,
    parse_task,
)

CANONICAL = """##Game_situation##:
1. I am unit 0, a stalker.
2. Two zealots are close.
##Region_of_interest##:
Enemy #3
##Reasoning_of_region_of_interest##:
1. It is the closest threat."""


@pytest.mark.parametrize(
    "reply",
    [
        CANONICAL,
        CANONICAL.replace("##Game_situation##:", "**Game_situation**:").replace(
            "##Region_of_interest##:", "**Region of interest:**"
        ),
        CANONICAL.replace("##Game_situation##:", "### Game Situation").replace(
            "##Region_of_interest##:", "## REGION-OF-INTEREST ##:"
        ),
        CANONICAL.replace("##Game_situation##:", "##game_situation##"),
        "Sure! Here is my analysis.\n\n" + CANONICAL + "\n\nLet me know if you need more.",
        "```markdown\n" + CANONICAL + "\n```",
        # sections in another order
        "##Region_of_interest##: Enemy #3\n##Reasoning_of_region_of_interest##:\n1. closest\n"
        "##Game_situation##:\n1. I am unit 0, a stalker.\n2. Two zealots are close.",
        "**##Game_situation##:**\n1. I am unit 0, a stalker.\n2. Two zealots are close.\n"
        "**##Region_of_interest##:** Enemy #3",
    ],
)
def test_perception_tolerates_format_drift(reply):
    result = parse_perception(reply)
    assert isinstance(result, Perception)
    assert "unit 0" in result.situation and "zealots" in result.situation
    assert result.region_of_interest == "Enemy #3"
    assert "##" not in result.situation and "Enemy #3" not in result.situation


def test_missing_required_section_and_garbage_are_no_answers():
    assert isinstance(parse_perception("##Region_of_interest##:\nEnemy #3"), NoAnswer)
    for parse in (parse_perception, parse_reflection, parse_task, parse_synthesis, parse_repair):
        result = parse("ñ@@ lorem ipsum \x00 \n\n 12345 ###")
        assert isinstance(result, NoAnswer) and result.reason
        assert not result  # falsy, so callers can write `if not result`
    assert isinstance(parse_actor("ñ@@ lorem ipsum", ["focus_fire"]), NoAnswer)
    assert isinstance(parse_perception(""), NoAnswer)


def test_missing_optional_section_is_fine():
    result = parse_perception("##Game_situation##:\n1. quiet")
    assert isinstance(result, Perception) and result.region_of_interest == "" and result.reasoning == ""


def test_header_lookalikes_inside_code_fences_are_content():
    reply = (
        "##Skill_generation##:\n```python\n# ##Skill_guidance##: not a header\ndef score_target(unit):\n"
        "    return 1.0\n```"
    )
    result = parse_synthesis(reply)
    assert isinstance(result, SkillCode) and "not a header" in result.code


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("True", True),
        ("false", False),
        ("**False**", False),
        ("False.", False),
        ("[True]", True),
        ("yes, it fits", True),
        ("No - a new skill is needed", False),
        ("maybe", None),
        ("", None),
    ],
)
def test_bool_parsing(text, value):
    assert parse_bool(text) is value


@pytest.mark.parametrize("text", ["null", "'null'", "`null`", "NULL.", "None", "```python\nnull\n```", "  "])
def test_null_variants(text):
    assert is_null(text)


def test_task_reasoning_variants():
    plan = parse_task("##Task_guidance##:\n[Focus fire on Enemy #3]\n##Skill_guidance##:\n**False**")
    assert plan == TaskPlan("Focus fire on Enemy #3", False, "")
    inline = parse_task(
        "Task guidance: Kite the zealots at max range\nSkill guidance: True\n"
        "Reasoning of task: they are melee"
    )
    assert isinstance(inline, TaskPlan) and inline.subtask == "Kite the zealots at max range"
    assert inline.skill_fits is True and inline.reasoning == "they are melee"
    keep = parse_task("##Task_guidance##:\nnull\n##Skill_guidance##:\nTrue")
    assert isinstance(keep, TaskPlan) and keep.subtask is None and keep.skill_fits is True
    no_bool = parse_task("##Task_guidance##:\nRegroup")
    assert isinstance(no_bool, TaskPlan) and no_bool.skill_fits is None


def test_reflection_variants():
    assert parse_reflection("##Success##: False\n##Critique##:\n1. Too far.") == Reflection(
        False, "1. Too far."
    )
    assert parse_reflection("**Critique**: fine\n**Success**: true") == Reflection(True, "fine")
    assert isinstance(parse_reflection("##Critique##:\nno verdict"), NoAnswer)


def test_synthesis_variants():
    code = "def score_target(unit):\n    return 2.0"
    assert parse_synthesis(f"##Skill_generation##:\n```python\n{code}\n```").code == code
    assert parse_synthesis(f"Here you go:\n```python\n{code}\n```").code == code  # no header
    assert parse_synthesis(f"##skill generation##:\n{code}").code == code  # no fence
    assert parse_synthesis("##Skill_generation##:\nnull") == SkillCode(None)
    assert parse_synthesis("null") == SkillCode(None)
    assert isinstance(parse_synthesis("##Skill_generation##:\nmake it better"), NoAnswer)
    assert isinstance(parse_repair("##Fixed_code##:\nnull"), NoAnswer)


def test_actor_variants():
    names = ["focus_fire", "kite_melee"]
    assert parse_actor("##Skills##:\n```python\nkite_melee(obs='current')\n```", names) == ActorChoice(
        "kite_melee"
    )
    assert parse_actor("##skills##: focus_fire(obs='current')", names) == ActorChoice("focus_fire")
    assert parse_actor("I would use kite_melee here.", names) == ActorChoice("kite_melee")
    assert parse_actor("##Skills##:\n```python\nteleport(obs='current')\n```", names) == ActorChoice(
        "teleport"
    )


def test_code_block_prefers_python():
    text = "```text\nnot code\n```\n```python\ndef f(obs):\n    return 1\n```"
    assert code_block(text).startswith("def f(obs)")


def test_parse_sections_first_nonempty_wins():
    out = parse_sections("##Success##:\n\n##Success##: True\n##Critique##: x", ("success", "critique"))
    assert out == {"success": "True", "critique": "x"}
