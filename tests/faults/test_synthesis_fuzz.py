"""The synthesis and repair path turns every bad candidate into a recorded rejection.

Before: lone surrogates reached ``ast.parse`` as ``UnicodeEncodeError``, deep expressions raised
``RecursionError``, an unterminated string failed later in the renamer, and the planner did not
catch what escaped, so one bad reply ended the run.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from compass.core.family import get_family
from compass.games.combat.text import view_from_text
from compass.planner.parsing import NoAnswer, SkillCode, parse_repair, parse_synthesis
from compass.planner.synthesis import MergeError, apply_fix, build_candidate, try_skill, whole_candidate
from compass.sandbox import SkillError
from compass.skills.check import load_observations, observations_path
from compass.skills.library import SkillLibrary
from compass.skills.skill import rename_function
from tests.faults.fuzz import FUZZ, code_lines

CAUSES = {"shape", "syntax", "encoding", "recursion", "renaming", "docstring"}

LIB = SkillLibrary(None, "combat")
PARENT = LIB.get("race_adaptive_combat")
VIEW = next(
    v
    for v in (view_from_text(t) for t in load_observations(observations_path("combat"))[:50])
    if v.alive and v.enemies
)


def _candidate_or_rejection(code: str) -> tuple[str | None, MergeError | None]:
    try:
        return build_candidate(code, PARENT, "race_adaptive_combat_fuzz", "fuzz the synthesis").code, None
    except MergeError as exc:
        return None, exc


@FUZZ
@given(code=code_lines)
def test_synthesis_candidates_are_built_or_rejected_with_a_cause(code):
    for reply in (f"##Skill_generation##:\n```python\n{code}\n```", code):
        parsed = parse_synthesis(reply)
        assert isinstance(parsed, SkillCode | NoAnswer)
        if not isinstance(parsed, SkillCode) or parsed.code is None:
            continue
        built, rejected = _candidate_or_rejection(parsed.code)
        if rejected is not None:
            assert rejected.cause in CAUSES and str(rejected)
            continue
        error = try_skill(built, "race_adaptive_combat_fuzz", "combat", VIEW)
        assert error is None or isinstance(error, SkillError)


@FUZZ
@given(code=code_lines)
def test_whole_skill_candidates_are_built_or_rejected_with_a_cause(code):
    parsed = parse_synthesis(f"##Skill_generation##:\n```python\n{code}\n```")
    if not isinstance(parsed, SkillCode) or parsed.code is None:
        return
    try:
        candidate = whole_candidate(parsed.code, "fuzz the whole synthesis")
    except MergeError as exc:
        assert exc.cause in CAUSES and str(exc)
        return
    error = try_skill(candidate.code, candidate.name, "combat", VIEW)
    assert error is None or isinstance(error, SkillError)


@FUZZ
@given(code=code_lines)
def test_repair_candidates_are_applied_or_rejected_with_a_cause(code):
    base = rename_function(PARENT.code, PARENT.name, "race_adaptive_combat_fix")
    parsed = parse_repair(f"##Fixed_code##:\n```python\n{code}\n```")
    if not isinstance(parsed, SkillCode) or parsed.code is None:
        return
    try:
        fixed = apply_fix(parsed.code, base, "race_adaptive_combat_fix")
    except MergeError as exc:
        assert exc.cause in CAUSES
        return
    error = try_skill(fixed, "race_adaptive_combat_fix", "combat", VIEW)
    assert error is None or isinstance(error, SkillError)


HELPER = "def score_target(unit):\n    return {expr}\n"


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        (HELPER.format(expr="'\ud800'"), "encoding"),
        (HELPER.format(expr="+".join(["1"] * 20_000)), "recursion"),
        (HELPER.format(expr="'unterminated"), "syntax"),
        (HELPER.format(expr="1\x00"), "syntax"),
        ("def score_target(unit, other):\n    return 1\n", "shape"),
    ],
)
def test_known_crashers_are_rejections(code, cause):
    with pytest.raises(MergeError) as info:
        build_candidate(code, PARENT, "race_adaptive_combat_x", "x")
    assert info.value.cause == cause
    with pytest.raises(MergeError):
        apply_fix(code, rename_function(PARENT.code, PARENT.name, "p_fix"), "p_fix")


def test_a_skill_that_raises_system_exit_is_a_recorded_error():
    # SystemExit is not an Exception: it used to pass every handler and end the whole run.
    code = "def s(obs):\n    raise SystemExit(3)\n"
    error = try_skill(code, "s", "combat", VIEW)
    assert isinstance(error, SkillError) and "SystemExit" in str(error)
    assert get_family("combat").skill_api  # the family's API is what ran it


@pytest.mark.parametrize(
    ("expr", "cause"),
    [("'\ud800'", "encoding"), ("+".join(["1"] * 20_000), "recursion"), ("'unterminated", "syntax")],
)
def test_known_crashers_are_rejections_in_whole_mode(expr, cause):
    with pytest.raises(MergeError) as info:
        whole_candidate(f"def kite(obs):\n    return {expr}\n", "kite")
    assert info.value.cause == cause
