"""The decision loop: actor choice, repair, fallbacks, ablation switches, ordering, records."""

from __future__ import annotations

import asyncio
import json
import re

from compass.planner.vlm_planner import PlannerSettings
from compass.sandbox import SkillError
from compass.vlm import BackendError
from tests.planner.conftest import make_ctx, make_view
from tests.planner.scripted import FOCUS_SUBTASK, ScriptedVLM, detect_module


def _modules(decision) -> list[str]:
    return [r["module"] for r in decision.records if r.get("kind") == "vlm"]


async def test_start_runs_perception_reasoning_retrieval_actor(make_planner):
    planner, backend = make_planner(ScriptedVLM(synth_agent=None))
    decision = await planner.decide(make_ctx())
    assert _modules(decision) == ["perception", "task_reasoning", "actor"]
    assert decision.skill == "focus_fire" and decision.subtask == FOCUS_SUBTASK
    retrieval = next(r for r in decision.records if r["module"] == "retrieval")
    assert retrieval["query"] == FOCUS_SUBTASK and retrieval["hits"][0][0] == "focus_fire"
    perception = next(r for r in decision.records if r["module"] == "perception")
    assert perception["parsed"]["region_of_interest"].startswith("Enemy #")
    assert perception["n_images"] == 2 and len(backend.calls[0].images) == 2
    assert len(perception["key_prompt"]) == 64 and perception["cached"] is False
    assert perception["prompt_tokens"] > 500 and perception["completion_tokens"] > 0
    # Records are plain JSON and carry no wall-clock values (the trace must replay byte for byte).
    text = json.dumps(decision.records)
    assert "latency" not in text and "cost" not in text


async def test_actor_unknown_name_is_rejected_and_best_retrieval_used(make_planner):
    planner, _ = make_planner(ScriptedVLM(synth_agent=None, bad_actor=True))
    decision = await planner.decide(make_ctx())
    assert {
        "module": "actor",
        "kind": "rejected",
        "skill": "teleport_behind_enemy",
        "reason": "not among the retrieved skills",
    } in decision.records
    retrieval = next(r for r in decision.records if r["module"] == "retrieval")
    assert decision.skill == retrieval["hits"][0][0]
    assert planner.usage_for_episode(0)["events"]["actor_rejected"] == 1


async def test_skill_error_is_repaired_into_a_new_version(make_planner, library):
    planner, backend = make_planner(ScriptedVLM())
    # The first statement of the nested score_target raises, whatever the library's text is.
    broken_code = re.sub(
        r"^(\s*)def score_target\(unit\):\n",
        r"\g<0>\1    raise KeyError('boom')\n",
        library.get("race_adaptive_combat").code,
        count=1,
        flags=re.M,
    )
    assert "boom" in broken_code
    from compass.skills.skill import parse_skill_source

    broken = parse_skill_source(
        broken_code.replace("def race_adaptive_combat(", "def broken_combat("), "combat", name="broken_combat"
    )
    broken.meta = {"provenance": "generated", "parent": "race_adaptive_combat", "subtask": "win"}
    library.add(broken)
    error = SkillError(
        "broken_combat: KeyError: 'boom'",
        "broken_combat",
        "runtime",
        "Traceback (skill frames):\n  File x, line 33, in score_target\n    raise KeyError('boom')",
    )
    ctx = make_ctx(trigger="skill_error", current_skill="broken_combat", subtask="win", last_error=error)
    decision = await planner.decide(ctx)
    assert _modules(decision) == ["skill_repair"]
    assert decision.skill == "broken_combat_v2" and decision.subtask == "win"
    fixed = library.get("broken_combat_v2")
    assert (
        fixed.parent == "broken_combat" and fixed.provenance == "generated" and fixed.meta["subtask"] == "win"
    )
    assert "boom" not in fixed.code
    repair = next(r.prompt for r in backend.calls if detect_module(r.prompt) == "skill_repair")
    assert "raise KeyError('boom')" in repair and "in score_target" in repair  # code and traceback
    assert "Step 5. You are Ally #0" in repair  # the observation it failed on
    attempt = next(r for r in decision.records if r.get("kind") == "attempt")
    assert attempt["ok"] is True and attempt["attempt"] == 1


async def test_failed_repairs_fall_back_without_the_broken_skill(make_planner, library):
    script = ScriptedVLM(synth_agent=None)
    script.skill_repair = lambda prompt: "##Fixed_code##:\n```python\ndef x(obs):\n    return 1 / 0\n```"  # type: ignore
    planner, backend = make_planner(script, max_repairs=2)
    error = SkillError("focus_fire: boom", "focus_fire", "runtime", "tb")
    ctx = make_ctx(trigger="skill_error", current_skill="focus_fire", last_error=error)
    decision = await planner.decide(ctx)
    attempts = [r for r in decision.records if r.get("kind") == "attempt"]
    assert [a["ok"] for a in attempts] == [False, False]
    assert decision.skill != "focus_fire"  # the broken skill is neither kept nor retrieved again
    assert all(
        "focus_fire" not in [h[0] for h in r["hits"]] for r in decision.records if r["module"] == "retrieval"
    )
    assert planner.usage_for_episode(0)["events"]["repair_failed"] == 1
    planner0, _ = make_planner(script, max_repairs=0)
    decision = await planner0.decide(
        make_ctx(trigger="skill_error", current_skill="focus_fire", last_error=error)
    )
    assert any(r.get("reason") == "repairs disabled" for r in decision.records)


async def test_garbage_answers_keep_the_current_skill(make_planner):
    planner, _ = make_planner(lambda req: "¯\\_(ツ)_/¯ lorem ipsum")
    decision = await planner.decide(
        make_ctx(trigger="new_enemy", current_skill="kite_melee", subtask="kite", step=20)
    )
    assert decision.skill == "kite_melee" and decision.subtask == "kite"
    perception = next(r for r in decision.records if r["module"] == "perception")
    assert perception["parsed"] == {"no_answer": "perception: no ##Game_situation## section"}
    assert decision.records[-1]["kind"] == "keep"
    # At the start there is no current skill: the best retrieval for the task.
    start = await planner.decide(make_ctx(make_view(agent_id=1)))
    assert start.skill in planner.library and start.records[-1]["kind"] == "fallback"


async def test_vlm_failures_are_no_answers(make_planner):
    def down(req):
        raise BackendError("service unavailable", status=503, retryable=False)

    planner, _ = make_planner(down)
    decision = await planner.decide(make_ctx(trigger="interval", current_skill="regroup", step=30))
    assert decision.skill == "regroup"
    failed = next(r for r in decision.records if r["module"] == "perception")
    assert failed["kind"] == "vlm_error" and "503" in failed["error"]
    assert planner.usage_for_episode(0)["errors"] >= 1


async def test_no_image_and_no_reflection_switches(make_planner):
    planner, backend = make_planner(ScriptedVLM(synth_agent=None), images=False, reflection=False)
    await planner.decide(make_ctx(step=0))
    for step in range(1, 12):
        planner.observe_step(0, step, [make_view(step=step)], 0.0)
    decision = await planner.decide(
        make_ctx(make_view(step=12), trigger="interval", current_skill="focus_fire", subtask=FOCUS_SUBTASK)
    )
    assert all(req.images == () for req in backend.calls)
    assert "reflection" not in [detect_module(req.prompt) for req in backend.calls]
    assert "reflection" not in _modules(decision)


async def test_reflection_sees_frames_and_reward_of_the_last_execution(make_planner):
    planner, backend = make_planner(ScriptedVLM(synth_agent=None))
    await planner.decide(make_ctx(step=0, view=make_view(step=0)))
    for step in range(0, 8):
        planner.observe_step(0, step, [make_view(step=step)], 0.5 if step == 3 else 0.0)
    ctx = make_ctx(make_view(step=8), trigger="interval", current_skill="focus_fire", subtask=FOCUS_SUBTASK)
    decision = await planner.decide(ctx)
    reflection_req = next(r for r in backend.calls if detect_module(r.prompt) == "reflection")
    assert len(reflection_req.images) == 2  # start and end of the execution
    assert "Cumulative reward for the executing skill:\n0.500" in reflection_req.prompt
    assert "Screenshot 1: step 0" in reflection_req.prompt and "Screenshot 2: step 8" in reflection_req.prompt
    # A positive reward: the scripted reflection says success, so the skill is kept without more calls.
    assert _modules(decision) == ["reflection"] and decision.skill == "focus_fire"
    assert decision.records[-1]["reason"] == "self-reflection: the current skill succeeds"


async def test_paper_settings_run_every_module(make_planner):
    planner, _ = make_planner(ScriptedVLM(synth_agent=None), settings=PlannerSettings.paper())
    await planner.decide(make_ctx(step=0, view=make_view(step=0)))
    for step in range(0, 8):
        planner.observe_step(0, step, [make_view(step=step)], 0.1)
    decision = await planner.decide(
        make_ctx(make_view(step=8), trigger="interval", current_skill="focus_fire", subtask=FOCUS_SUBTASK)
    )
    assert sorted(_modules(decision)) == ["actor", "perception", "reflection", "task_reasoning"]


async def test_event_right_after_a_decision_keeps_the_skill(make_planner):
    planner, backend = make_planner(ScriptedVLM(synth_agent=None))
    await planner.decide(make_ctx(step=4, view=make_view(step=4)))
    calls = len(backend.calls)
    decision = await planner.decide(
        make_ctx(make_view(step=5), trigger="new_enemy", current_skill="focus_fire")
    )
    assert len(backend.calls) == calls and decision.skill == "focus_fire"
    assert decision.records == [
        {
            "module": "planner",
            "kind": "keep",
            "skill": "focus_fire",
            "reason": "new_enemy within 5 steps of the last VLM decision",
        }
    ]


async def test_additions_in_one_round_are_ordered_by_agent_id(make_planner, library):
    """Agent 0 answers last, yet gets the plain name: names do not depend on answer timing."""
    script = ScriptedVLM(synth_agent=None, fail_after=100)  # no repair: each agent's own code is added
    script.task_reasoning = lambda prompt: (  # type: ignore[method-assign]
        "##Task_guidance##:\nImplement zigzag blink micro\n##Skill_guidance##:\nFalse"
    )

    async def responder(req):
        if detect_module(req.prompt) == "skill_synthesis":
            agent = re.search(r"unit with ID (\d+)", req.prompt).group(1)
            if agent == "0":
                await asyncio.sleep(0.2)
            # Different code per agent (identical code would be one skill: see test_synthesis).
            return script(req.prompt).replace(
                "def score_target(unit):", f"def score_target(unit):\n    agent_bias = {agent}"
            )
        return script(req.prompt)

    planner, _ = make_planner(responder)
    ctxs = [
        make_ctx(make_view(agent_id=i, step=9), trigger="interval", current_skill="race_adaptive_combat")
        for i in range(3)
    ]
    decisions = await asyncio.gather(*(planner.decide(c) for c in ctxs))
    assert [d.skill for d in decisions] == [
        "race_adaptive_combat_zigzag_blink_micro",
        "race_adaptive_combat_zigzag_blink_micro_v2",
        "race_adaptive_combat_zigzag_blink_micro_v3",
    ]
    # Retrieval in that round did not see the siblings' new skills.
    for d in decisions:
        hits = [h[0] for r in d.records if r["module"] == "retrieval" for h in r["hits"]]
        assert not any("zigzag" in h for h in hits)


async def test_usage_per_episode_and_summary(make_planner):
    planner, _ = make_planner(ScriptedVLM(synth_agent=None))
    await planner.decide(make_ctx())
    await planner.decide(make_ctx(make_view(agent_id=1), episode=1))
    ep0, ep1 = planner.usage_for_episode(0), planner.usage_for_episode(1)
    assert ep0["calls"] == ep1["calls"] == 3 and ep0["decisions"] == 1
    assert ep0["prompt_tokens"] > 0 and set(ep0["by_module"]) == {"perception", "task_reasoning", "actor"}
    summary = planner.usage_summary()
    assert summary["episodes"] == 2 and summary["calls"] == 6 and summary["model"] == "fake:fake"
    assert summary["total_tokens"] == ep0["total_tokens"] + ep1["total_tokens"]
