"""Generated helpers merge into their parent skill, compile, run, and reach the library with provenance."""

from __future__ import annotations

import ast

import pytest

from compass.planner.synthesis import (
    MergeError,
    build_candidate,
    generated_name,
    merge_nested,
    nested_functions,
    set_docstring,
    slug,
    try_skill,
    whole_skill,
)
from compass.planner.vlm_planner import PlannerSettings
from compass.sandbox import SkillError
from tests.planner.conftest import make_ctx, make_view
from tests.planner.scripted import GOOD_SCORE, SYNTH_SUBTASK, ScriptedVLM

NEW_CONTROL = """def control_logic():
    attackable = [e for e in obs_data.enemies if e.can_attack and (e.id + 6) in valid]
    if attackable:
        return attack(min(attackable, key=lambda e: e.health).id)
    return default_action(obs)
"""


def test_merge_replaces_only_the_nested_helper(library):
    parent = library.get("race_adaptive_combat")
    assert {"score_target", "control_logic"} <= nested_functions(parent.code, parent.name)
    merged, helper = merge_nested(parent.code, parent.name, GOOD_SCORE)
    assert helper == "score_target"
    old_score, old_control = (
        _nested_source(parent.code, "score_target"),
        _nested_source(parent.code, "control_logic"),
    )
    assert "# prefer weak, close targets" in merged and old_score not in merged
    assert "def control_logic():" in merged and old_control in merged  # the rest of the parent survives
    tree = ast.parse(merged)
    outer = tree.body[0]
    inner = [n for n in ast.walk(outer) if isinstance(n, ast.FunctionDef) and n.name == "score_target"]
    assert len(inner) == 1 and inner[0].col_offset == 4


def test_merge_control_logic_and_run_in_sandbox(library):
    parent = library.get("race_adaptive_combat")
    cand = build_candidate(
        NEW_CONTROL, parent, "race_adaptive_combat_weakest_first", "Attack the weakest first"
    )
    assert cand.replaced == "control_logic"
    assert cand.code.startswith("def race_adaptive_combat_weakest_first(obs: str) -> int:")
    assert '"""Attack the weakest first.' in cand.code and "Refines race_adaptive_combat" in cand.code
    assert try_skill(cand.code, cand.name, "combat", make_view()) is None


def test_whole_skill_replies_are_accepted_and_renamed(library):
    reply = "import math\n\ndef my_new_skill(obs):\n    obs_data = parse_obs(obs)\n    return default_action(obs)\n"
    code = whole_skill(reply, "focus_fire_new")
    assert code.startswith("def focus_fire_new(obs):") and "import math" not in code
    cand = build_candidate(reply, library.get("focus_fire"), "focus_fire_new", "Do nothing smartly")
    assert cand.replaced == "skill"
    assert try_skill(cand.code, "focus_fire_new", "combat", make_view()) is None


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("def score_target():\n    return 1", "exactly one parameter"),
        ("def control_logic(x):\n    return 1", "no parameters"),
        ("def score_target(unit):\n    return (", "does not parse"),
        ("x = 1", "defines no function"),
    ],
)
def test_bad_helpers_are_merge_errors(library, reply, message):
    with pytest.raises(MergeError, match=message):
        build_candidate(reply, library.get("race_adaptive_combat"), "x_y", "t")


def test_helper_for_a_parent_without_it_is_rejected(library):
    with pytest.raises(MergeError, match="focus_fire has no nested score_target"):
        build_candidate(GOOD_SCORE, library.get("focus_fire"), "focus_fire_x", "t")


def test_try_skill_reports_compile_runtime_and_action_errors():
    view = make_view()
    assert isinstance(
        try_skill("def s(obs):\n    import os\n    return 1\n", "s", "combat", view), SkillError
    )
    err = try_skill("def s(obs):\n    return 1 / 0\n", "s", "combat", view)
    assert isinstance(err, SkillError) and "ZeroDivisionError" in str(err) and "1 / 0" in err.traceback
    assert "not available" in str(try_skill("def s(obs):\n    return 99\n", "s", "combat", view))


def test_names_and_docstrings():
    assert (
        slug("Implement zigzag blink micro against zealots when allies flank") == "zigzag_blink_micro_against"
    )
    assert slug("!!!") == "skill"
    name = generated_name("race_adaptive_combat_v3", "Adjust the scoring weight of colossi " * 5)
    assert name.startswith("race_adaptive_combat_scoring_weight") and len(name) <= 64
    assert name == name.lower() and "__" not in name
    code = set_docstring("def f(obs):\n    x = 1\n    return x\n", "f", 'New """doc"""\n\nMore.')
    assert ast.get_docstring(ast.parse(code).body[0]) == "New '''doc'''\n\nMore."


async def test_planner_synthesizes_merges_and_adds_with_provenance(make_planner, library):
    planner, backend = make_planner(ScriptedVLM(synth_agent=0, fail_after=100))
    ctx = make_ctx(trigger="interval", current_skill="race_adaptive_combat", subtask="Defeat all enemy units")
    decision = await planner.decide(ctx)
    assert decision.subtask == SYNTH_SUBTASK
    skill = library.get(decision.skill)
    assert decision.skill.startswith("race_adaptive_combat_zigzag")
    assert skill.provenance == "generated" and skill.parent == "race_adaptive_combat"
    assert skill.meta["subtask"] == SYNTH_SUBTASK and skill.meta["model"] == "fake:fake"
    assert skill.path is not None and skill.path.exists() and skill.meta.get("created")
    assert "zigzag" in skill.description  # retrievable by its sub-task
    modules = [r["module"] for r in decision.records if r.get("kind") == "vlm"]
    assert modules == ["perception", "task_reasoning", "skill_synthesis"]
    added = [r for r in decision.records if r.get("kind") == "added"]
    assert added == [
        {
            "module": "skill_synthesis",
            "kind": "added",
            "skill": decision.skill,
            "parent": "race_adaptive_combat",
            "replaced": "score_target",
        }
    ]
    assert planner.usage_for_episode(0)["events"]["synthesized"] == 1


async def test_synthesized_code_failing_its_test_is_repaired_before_it_is_added(make_planner, library):
    planner, _ = make_planner(ScriptedVLM(synth_agent=0, fail_after=0))  # raises at once
    ctx = make_ctx(trigger="interval", current_skill="race_adaptive_combat")
    decision = await planner.decide(ctx)
    kinds = [(r["module"], r.get("kind")) for r in decision.records]
    assert ("skill_synthesis", "test_failed") in kinds and ("skill_repair", "vlm") in kinds
    assert ("skill_synthesis", "added") in kinds
    assert "zigzag table" not in library.get(decision.skill).code


async def test_null_synthesis_falls_through_to_the_actor(make_planner, library):
    script = ScriptedVLM(synth_agent=0)
    script.skill_synthesis = lambda prompt: "##Skill_generation##:\nnull"  # type: ignore[method-assign]
    planner, _ = make_planner(script)
    before = set(library.names())
    decision = await planner.decide(make_ctx(trigger="interval", current_skill="race_adaptive_combat"))
    assert set(library.names()) == before
    assert decision.skill in before
    assert [r["module"] for r in decision.records if r.get("kind") == "vlm"][-1] == "actor"


async def test_synthesis_budget_and_no_enemy_rule(make_planner):
    planner, _ = make_planner(ScriptedVLM(synth_agent=0), settings=PlannerSettings(max_syntheses_per_agent=0))
    decision = await planner.decide(make_ctx(trigger="interval", current_skill="race_adaptive_combat"))
    assert {
        "module": "skill_synthesis",
        "kind": "skipped",
        "reason": "synthesis budget of this agent used up",
    } in decision.records
    planner, _ = make_planner(ScriptedVLM(synth_agent=0))
    quiet = make_ctx(make_view(enemies=False), trigger="interval", current_skill="race_adaptive_combat")
    decision = await planner.decide(quiet)
    assert any(r.get("reason") == "no enemy known" for r in decision.records)


def _nested_source(code: str, name: str) -> str:
    """Source text of the nested function ``name`` (comments included) in a skill."""
    node = next(n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.FunctionDef) and n.name == name)
    return "\n".join(code.splitlines()[node.lineno - 1 : node.end_lineno])
