"""ALEM skill synthesis and repair end to end: a VLM run on the overworld (scripted answers served by
the fake HTTP server through the real ``openai`` client) writes a complete ALEM skill, validates
it, adds it with provenance, runs it, and repairs it when it fails."""

from __future__ import annotations

import shutil

import pytest
from alem_testlib import needs_alem

from compass.config import RunConfig
from compass.core.family import get_family
from compass.episode.session import run
from compass.episode.trace import read_trace
from compass.skills.library import SkillLibrary
from tests.fakes.fake_vlm_server import FakeVLMServer
from tests.planner.scripted import WHOLE_SKILL_NAME, ScriptedVLM, detect_module

pytestmark = [needs_alem, pytest.mark.slow]


@pytest.fixture(scope="module")
def alem_vlm_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("alem_synth")
    lib = tmp / "lib"
    shutil.copytree(
        get_family("alem").seed_skills_dir, lib / "alem", ignore=shutil.ignore_patterns("_stats.json")
    )
    script = ScriptedVLM(synth_agent=0, fail_after=3)
    with FakeVLMServer(responder=lambda request: script(request.text)) as server:
        cfg = RunConfig(
            env="alem:overworld",
            planner="vlm",
            vlm=server.spec("openai", "test-model"),
            library=lib,
            out=tmp,
            run_id="alem",
            max_steps=16,
            decision_interval=4,
            image=False,
            seed=0,
        )
        summary = run(cfg)
        requests = list(server.requests)
    return tmp, lib, summary, requests


def _records(trace: list[dict], module: str) -> list[dict]:
    return [
        rec for r in trace if r["kind"] == "decision" for rec in r["records"] if rec.get("module") == module
    ]


def test_alem_synthesis_adds_a_whole_skill_that_is_then_used(alem_vlm_run):
    tmp, lib_root, _, requests = alem_vlm_run
    trace = read_trace(tmp / "alem")
    synth = _records(trace, "skill_synthesis")
    assert not [r for r in synth if r.get("kind") == "skipped"], synth
    added = [r for r in synth if r.get("kind") == "added"]
    # Every agent whose sub-task no library skill fits writes one (the model's name is kept).
    assert added and added[0]["skill"] == WHOLE_SKILL_NAME
    assert all(r["skill"].startswith(WHOLE_SKILL_NAME) and r["replaced"] == "skill" for r in added)

    # The synthesis prompt that was sent is the ALEM one, with the API rendered from the code.
    prompt = next(r.text for r in requests if detect_module(r.text) == "skill_synthesis")
    assert "ALEM" in prompt and "- coordination_target(d: ObsData" in prompt
    assert "Sandbox rules" in prompt and "<<<" not in prompt
    # ... and tells the model how the team survives, with the survival API it needs.
    assert "- bunker_step(d: ObsData" in prompt and "- escort_step(d: ObsData" in prompt
    assert "How the team plays" in prompt and "never sleeps in the open" in prompt

    skill = SkillLibrary(lib_root, "alem").get(WHOLE_SKILL_NAME)
    assert skill.provenance == "generated"
    assert skill.meta["model"].startswith("openai:test-model@http://127.0.0.1:")
    assert skill.meta["replaced"] == "skill"
    assert "bunker_step(d, base)" in skill.code and "shelter_time(d)" in skill.code  # the new API
    steps = [r for r in trace if r["kind"] == "step"]
    assert any(WHOLE_SKILL_NAME in s["skills"] for s in steps)


def test_alem_synthesized_skill_fails_and_is_repaired(alem_vlm_run):
    tmp, lib_root, _, _ = alem_vlm_run
    trace = read_trace(tmp / "alem")
    steps = [r for r in trace if r["kind"] == "step"]
    errors = [e for s in steps for e in s.get("errors", []) if e["skill"] == WHOLE_SKILL_NAME]
    assert errors and "zigzag table not initialised" in errors[0]["message"]
    synthesized = {r["skill"] for r in _records(trace, "skill_synthesis") if r.get("kind") == "added"}
    repaired = [r for r in _records(trace, "skill_repair") if r.get("kind") == "added"]
    assert repaired and all(r["parent"] in synthesized for r in repaired)
    lib = SkillLibrary(lib_root, "alem")
    for r in repaired:
        assert r["skill"] not in synthesized and "raise" not in lib.get(r["skill"]).code
        assert lib.get(r["skill"]).parent == r["parent"]
    fix = next(r for r in trace if r["kind"] == "decision" and r["trigger"] == "skill_error")
    assert fix["skill"] in {r["skill"] for r in repaired}
    assert any(fix["skill"] in s["skills"] for s in steps if s["t"] > fix["t"])
