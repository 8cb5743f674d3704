"""Skill library: round trip, bad files reported and skipped, retrieval ranks the obvious skill first."""

from __future__ import annotations

import shutil

import pytest

from compass.core.family import get_family
from compass.skills.library import SkillLibrary
from compass.skills.skill import Skill, parse_skill_source

GOOD = '''def hold_position(obs: str) -> int:
    """Hold position: stop moving and shoot whatever is in range."""
    obs_data = parse_obs(obs)
    if 0 in obs_data.available_actions:
        return 0
    for e in obs_data.enemies:
        if e.can_attack:
            return attack(e.id)
    return 1
'''


@pytest.fixture()
def lib_copy(tmp_path):
    shutil.copytree(get_family("combat").seed_skills_dir, tmp_path / "combat")
    return tmp_path


def test_round_trip_keeps_code_and_metadata(lib_copy):
    lib = SkillLibrary(lib_copy, "combat")
    skill = Skill(
        "hold_position",
        "combat",
        GOOD,
        "",
        {"provenance": "generated", "parent": "focus_fire", "model": "openai:gpt-4o-mini", "subtask": "hold"},
    )
    lib.add(skill)
    again = SkillLibrary(lib_copy, "combat")
    s = again.get("hold_position")
    assert s.code == GOOD and s.provenance == "generated" and s.parent == "focus_fire"
    assert s.meta["model"] == "openai:gpt-4o-mini" and s.description.startswith("Hold position")
    assert "hold_position" in again.compiled
    # a second add with the same name never overwrites: it becomes a new version
    stored = again.add(Skill("hold_position", "combat", GOOD, "", {}))
    assert stored.name == "hold_position_v2" and (lib_copy / "combat" / "hold_position_v2.py").exists()
    assert "def hold_position_v2(" in stored.code


def test_hand_edited_file_with_syntax_error_is_reported_and_skipped(lib_copy):
    bad = lib_copy / "combat" / "broken_skill.py"
    bad.write_text("# provenance: human\n\ndef broken_skill(obs: str) -> int:\n    return (\n")
    escape = lib_copy / "combat" / "sneaky.py"
    escape.write_text(
        "# provenance: human\ndef sneaky(obs: str) -> int:\n    import os\n    return obs.__class__\n"
    )
    lib = SkillLibrary(lib_copy, "combat")
    problems = {p.path.name: p.message for p in lib.problems}
    assert "broken_skill" not in lib and "sneaky" not in lib
    assert "line 4" in problems["broken_skill.py"] and "syntax error" in problems["broken_skill.py"]
    assert "__class__" in problems["sneaky.py"] and "line 4" in problems["sneaky.py"]
    assert "race_adaptive_combat" in lib  # the rest still loads


def test_wrong_function_name_is_a_problem(lib_copy):
    (lib_copy / "combat" / "misnamed.py").write_text("def other(obs):\n    return 1\n")
    lib = SkillLibrary(lib_copy, "combat")
    assert any("misnamed" in str(p) and "other" in str(p) for p in lib.problems)


@pytest.mark.parametrize(
    "query,expected",
    [
        ("retreat when my health is low", "retreat_when_low"),
        ("kite zealots while my weapon cools down", "kite_melee"),
        ("move back to the centre of my allies and regroup", "regroup"),
        ("attack the nearest enemy", "attack_nearest"),
        ("concentrate fire on the enemy my allies are shooting", "focus_fire"),
    ],
)
def test_retrieval_ranks_the_obvious_skill_first(combat_library, query, expected):
    hits = combat_library.retrieve(query, k=3)
    assert hits[0].skill.name == expected, [(h.skill.name, round(h.score, 3)) for h in hits]
    assert hits[0].score >= hits[1].score


def test_parse_skill_source_reads_header():
    s = parse_skill_source("# provenance: bootstrap\n# parent: -\n" + GOOD, "combat", name="hold_position")
    assert s.provenance == "bootstrap" and s.parent is None
