"""JSON answers per module, the run-ending error budget, and no duplicate skills (dedupe by
normalised code, the episode's synthesis cap across concurrent agents, one repair per error)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from compass.planner.answers import answer_format
from compass.planner.vlm_planner import PlannerSettings, VLMPlanner
from compass.sandbox import SkillError
from compass.skills.skill import parse_skill_source
from compass.vlm import BackendError, FakeBackend, VLMClient, VLMConfig, VLMFatalError
from tests.planner.conftest import make_ctx, make_view
from tests.planner.scripted import ScriptedVLM

PERCEPTION = {"game_situation": "Two zealots close in on me.", "region_of_interest": "east",
              "reasoning_of_region_of_interest": "the enemy is there"}  # fmt: skip
TASK = {"task_guidance": "Focus fire the weakest zealot", "reasoning_of_task": "kill fast",
        "skill_guidance": False, "reasoning_of_skill": "-"}  # fmt: skip


def _planner(library, responder, structured=True, **kwargs) -> tuple[VLMPlanner, FakeBackend]:
    backend = FakeBackend(responder, structured=structured)
    client = VLMClient(backend, VLMConfig(max_retries=0, backoff_base_s=0.0))
    return VLMPlanner(library, client, structured=structured, **kwargs), backend


def _json(req) -> str:
    if req.schema_name == "perception":
        return json.dumps(PERCEPTION)
    if req.schema_name == "task_reasoning":
        return json.dumps(TASK)
    if req.schema_name == "skill_synthesis":
        return json.dumps({"skill_generation": "null"})
    if req.schema_name == "actor":
        return json.dumps({"skill": req.schema["properties"]["skill"]["enum"][1]})  # not the first hit
    raise AssertionError(req.schema_name)


async def test_json_mode_sends_schemas_and_uses_the_answers(library):
    planner, backend = _planner(library, _json)
    decision = await planner.decide(make_ctx(trigger="start"))
    modules = [c.schema_name for c in backend.calls]
    assert modules[:2] == ["perception", "task_reasoning"] and modules[-1] == "actor"
    for call in backend.calls:
        assert call.schema is not None and "Respond with ONE JSON object" in call.prompt
        assert "##Section##" not in call.prompt  # the text-format block is gone
    assert '"task_guidance" (string)' in backend.calls[1].prompt  # rendered from the answer model
    actor = backend.calls[-1]
    names = actor.schema["properties"]["skill"]["enum"]
    assert decision.skill == names[1] and decision.subtask == TASK["task_guidance"]
    vlm = [r for r in decision.records if r.get("kind") == "vlm"]
    assert {r["mode"] for r in vlm} == {"json"}
    assert vlm[0]["parsed"]["situation"] == PERCEPTION["game_situation"]
    usage = planner.usage_for_episode(0)["by_module"]
    assert usage["task_reasoning"]["usable"] == 1 and usage["task_reasoning"]["usable_rate"] == 1.0


async def test_a_text_reply_in_json_mode_falls_back_to_the_text_parser(library):
    script = ScriptedVLM(synth_agent=None)
    planner, _ = _planner(library, lambda req: script(req.prompt) if req.schema_name != "perception" else
                          "##Game_situation##:\nzealots east\n##Region_of_interest##:\neast")  # fmt: skip
    decision = await planner.decide(make_ctx(trigger="new_enemy", current_skill="kite_melee", step=20))
    perception = next(r for r in decision.records if r.get("module") == "perception")
    assert perception["mode"] == "text_fallback" and perception["parsed"]["situation"] == "zealots east"


def test_invalid_json_is_an_unusable_answer_with_the_reason():
    fmt = answer_format("reflection")
    assert (
        "success: Input should be a valid boolean" in fmt.parse('{"success": "maybe", "critique": ""}').reason
    )
    assert fmt.parse("I think it went well").reason == "reflection: the reply is not a JSON object"
    assert fmt.parse('```json\n{"success": true, "critique": "ok"}\n```').success is True


async def test_more_failed_calls_than_allowed_end_the_run(library):
    def down(req):
        raise BackendError("connection refused", retryable=False)

    planner, backend = _planner(library, down, structured=False, max_vlm_errors=2)
    for step in (0, 8):  # each decision: perception fails, the planner falls back
        await planner.decide(make_ctx(make_view(step=step), step=step, trigger="start"))
    with pytest.raises(VLMFatalError, match=r"3 VLM calls failed \(more than --max-vlm-errors 2\)"):
        await planner.decide(make_ctx(make_view(step=16), step=16, trigger="start"))


def _synthesizing_script() -> ScriptedVLM:
    script = ScriptedVLM(synth_agent=None, fail_after=100)
    script.task_reasoning = lambda prompt: (  # type: ignore[method-assign]
        "##Task_guidance##:\nImplement zigzag blink micro\n##Skill_guidance##:\nFalse"
    )
    return script


async def _round(planner, n=3, step=9):
    ctxs = [
        make_ctx(
            make_view(agent_id=i, step=step),
            step=step,
            trigger="interval",
            current_skill="race_adaptive_combat",
        )
        for i in range(n)
    ]
    return await asyncio.gather(*(planner.decide(c) for c in ctxs))


async def test_identical_skills_from_concurrent_agents_are_added_once(library):
    script = _synthesizing_script()
    planner, _ = _planner(library, lambda req: script(req.prompt), structured=False)
    before = set(library.names())
    decisions = await _round(planner)
    added = set(library.names()) - before
    assert len(added) == 1 and {d.skill for d in decisions} == added  # all three use the one skill
    dupes = [r for d in decisions[1:] for r in d.records if r.get("kind") == "duplicate"]
    assert [r["duplicate_of"] for r in dupes] == [added.pop()] * 2


async def test_the_episode_synthesis_cap_holds_across_concurrent_agents(library):
    script = _synthesizing_script()

    def responder(req):
        text = script(req.prompt)
        if "##Skill_generation##" in text:  # different code per agent: no duplicates here
            agent = req.prompt.split("unit with ID ", 1)[1].split()[0]
            text = text.replace(
                "def score_target(unit):", f"def score_target(unit):\n    agent_bias = {agent}"
            )
        return text

    settings = PlannerSettings(max_syntheses_per_episode=1)
    planner, _ = _planner(library, responder, structured=False, settings=settings)
    before = set(library.names())
    decisions = await _round(planner)
    assert len(set(library.names()) - before) == 1
    skipped = [
        r
        for d in decisions
        for r in d.records
        if r.get("reason") == "synthesis budget of this episode used up"
    ]
    assert len(skipped) == 2


async def test_one_repair_per_error_signature_and_the_child_keeps_the_docstring(library):
    script = ScriptedVLM(synth_agent=None)
    planner, backend = _planner(library, lambda req: script(req.prompt), structured=False)

    code = re.sub(  # a skill whose score_target raises (the scripted repair fixes score_target)
        r"^(\s*)def score_target\(unit\):\n",
        r"\g<0>\1    raise KeyError('boom')\n",
        library.get("race_adaptive_combat").code.replace("def race_adaptive_combat(", "def crashy("),
        count=1,
        flags=re.M,
    )
    crashy = parse_skill_source(code, "combat", name="crashy")
    crashy.meta = {"provenance": "generated", "parent": "race_adaptive_combat"}
    library.add(crashy)

    def broke(agent, step, value):  # the same error, numbers aside
        error = SkillError(f"crashy: KeyError: 'boom' at {value}", "crashy", "runtime", "tb")
        view = make_view(agent_id=agent, step=step)
        return make_ctx(view, step=step, trigger="skill_error", current_skill="crashy", last_error=error)

    before = set(library.names())
    same_round = await asyncio.gather(planner.decide(broke(0, 5, 3)), planner.decide(broke(1, 5, 4)))
    fixed = set(library.names()) - before
    assert len(fixed) == 1 and {d.skill for d in same_round} == fixed
    assert any(r.get("kind") == "reused" for r in same_round[1].records)
    repairs = sum(1 for c in backend.calls if "##Fixed_code##" in c.prompt)
    later = await planner.decide(broke(2, 13, 7))  # a later round: no new repair call at all
    assert later.skill in fixed and sum(1 for c in backend.calls if "##Fixed_code##" in c.prompt) == repairs
    assert [r["kind"] for r in later.records if r["module"] == "skill_repair"] == ["reused"]
    child = library.get(fixed.pop())
    assert child.description == library.get("crashy").description and child.parent == "crashy"


async def test_log_prompts_stores_prompt_images_and_response_once(library, tmp_path):
    from compass.vlm.prompt_log import PromptLog

    planner, backend = _planner(library, _json, prompt_log=PromptLog(tmp_path))
    decisions = [await planner.decide(make_ctx(trigger="start")) for _ in range(2)]  # same prompts twice
    records = [r for d in decisions for r in d.records if r.get("kind") == "vlm"]
    perception = records[0]
    files = perception["files"]
    assert files["prompt"] == f"prompts/{perception['key_prompt']}.txt"
    text = (tmp_path / files["prompt"]).read_text()
    assert backend.calls[0].prompt in text and '"game_situation"' in text  # prompt and schema
    assert [(tmp_path / p).read_bytes() for p in files["images"]] == list(backend.calls[0].images)
    assert (tmp_path / files["response"]).read_text() == perception["response"]
    assert len(list((tmp_path / "prompts").iterdir())) == len({r["key_prompt"] for r in records})
