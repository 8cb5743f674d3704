"""Whole episodes with the VLM planner: the fake HTTP server through the real ``openai`` client,
replay of the recorded run, and a tiny random local model that answers noise."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from compass.config import RunConfig
from compass.core.family import get_family
from compass.episode.session import run
from compass.episode.trace import read_trace
from compass.skills.library import SkillLibrary
from compass.vlm.backends.base import PROBE_PROMPT
from tests.fakes.fake_vlm_server import FakeVLMServer
from tests.planner.scripted import ScriptedVLM, detect_module

MODULES = {"perception", "reflection", "task_reasoning", "skill_synthesis", "actor", "skill_repair"}


def _library_copy(root: Path) -> Path:
    shutil.copytree(
        get_family("combat").seed_skills_dir, root / "combat", ignore=shutil.ignore_patterns("_stats.json")
    )
    return root


def _cfg(tmp_path: Path, vlm: str, run_id: str, lib: Path) -> RunConfig:
    return RunConfig(
        env="smax:protoss_5_vs_5",
        planner="vlm",
        vlm=vlm,
        library=lib,
        out=tmp_path,
        run_id=run_id,
        max_steps=30,
        decision_interval=4,
        seed=0,
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, smax_protoss):
    """One scripted episode through the fake OpenAI server (shared by the tests below)."""
    tmp = tmp_path_factory.mktemp("e2e")
    script = ScriptedVLM(synth_agent=0, fail_after=2)
    with FakeVLMServer(responder=lambda request: script(request.text)) as server:
        cfg = _cfg(tmp, server.spec("openai", "test-model"), "live", _library_copy(tmp / "lib"))
        summary = run(cfg)
        # The run's one-token probe comes first; the rest are the planner's calls.
        assert server.requests[0].text == PROBE_PROMPT and server.requests[0].body["max_tokens"] == 1
        requests = list(server.requests)[1:]
    return tmp, summary, requests


def test_episode_uses_all_modules_synthesis_and_repair(recorded):
    tmp, summary, requests = recorded
    assert {r.model for r in requests} == {"test-model"}
    assert {detect_module(r.text) for r in requests} == MODULES
    trace = read_trace(tmp / "live")
    decisions = [r for r in trace if r["kind"] == "decision"]
    called = {rec["module"] for d in decisions for rec in d["records"] if rec.get("kind") == "vlm"}
    assert called == MODULES

    # A synthesized skill was added with provenance and then run by an agent.
    added = [rec for d in decisions for rec in d["records"] if rec.get("kind") == "added"]
    synthesized = next(rec["skill"] for rec in added if rec["module"] == "skill_synthesis")
    repaired = next(rec for rec in added if rec["module"] == "skill_repair")
    lib = SkillLibrary(tmp / "lib", "combat")
    assert (
        lib.get(synthesized).provenance == "generated"
        and lib.get(synthesized).parent == "race_adaptive_combat"
    )
    assert lib.get(synthesized).meta["model"].startswith("openai:test-model@http://127.0.0.1:")
    steps = [r for r in trace if r["kind"] == "step"]
    assert any(synthesized in s["skills"] for s in steps)

    # Its injected fault surfaced as a skill error, the planner repaired it, the fix ran.
    errors = [e for s in steps for e in s.get("errors", []) if e["skill"] == synthesized]
    assert errors and "zigzag table not initialised" in errors[0]["message"]
    fix = next(d for d in decisions if d["trigger"] == "skill_error")
    assert fix["skill"] == repaired["skill"] == f"{synthesized}_v2" and repaired["parent"] == synthesized
    assert lib.get(repaired["skill"]).parent == synthesized
    assert any(repaired["skill"] in s["skills"] for s in steps if s["t"] > fix["t"])

    # Tokens are accounted per episode and for the run, in summary.json.
    on_disk = json.loads((tmp / "live" / "summary.json").read_text())
    usage = on_disk["vlm_usage"]
    assert (
        usage["calls"] == len(requests) and usage["prompt_tokens"] > 1000 and usage["completion_tokens"] > 0
    )
    assert on_disk["episodes"][0]["vlm"]["total_tokens"] == usage["total_tokens"]
    assert set(usage["by_module"]) == MODULES
    assert [a["skill"] for a in usage["skills_added"]] == [synthesized, repaired["skill"]]
    # Every call is also a top-level vlm line (what replay reads).
    assert len([r for r in trace if r["kind"] == "vlm"]) == len(requests)


def test_replay_reproduces_the_trace(recorded, tmp_path):
    tmp, _, requests = recorded
    # The same library, in the same place (skill-error tracebacks in the trace name its files).
    shutil.rmtree(tmp / "lib")
    cfg = _cfg(tmp_path, f"replay:{tmp / 'live'}", "replayed", _library_copy(tmp / "lib"))
    summary = run(cfg)
    live = (tmp / "live" / "trace.jsonl").read_text().splitlines()
    again = (tmp_path / "replayed" / "trace.jsonl").read_text().splitlines()
    assert json.loads(live[0])["kind"] == "run_start"
    assert live[1:] == again[1:]  # byte-identical but for the config line naming the spec
    assert summary["vlm_usage"]["calls"] == len(requests)


@pytest.mark.slow
def test_tiny_random_local_model_does_not_crash_an_episode(tmp_path, smax_protoss, monkeypatch):
    pytest.importorskip("transformers")
    from compass.comm import CommProtocol
    from compass.episode.runner import EpisodeRunner
    from compass.episode.trace import RunWriter
    from compass.planner.vlm_planner import PlannerSettings, VLMPlanner
    from compass.vlm import VLMClient, VLMConfig
    from tests.fakes.tiny_vlm import build_tiny_llava

    model = build_tiny_llava(tmp_path / "tiny")
    lib = SkillLibrary(_library_copy(tmp_path / "lib"), "combat")
    client = VLMClient.from_spec(f"hf:{model}", VLMConfig(max_retries=0))
    settings = PlannerSettings(max_tokens={m: 8 for m in MODULES})
    planner = VLMPlanner(lib, client, settings=settings)
    monkeypatch.setattr(smax_protoss, "max_steps", 8)
    cfg = RunConfig(planner="vlm", vlm=f"hf:{model}", decision_interval=4)
    writer = RunWriter(tmp_path / "run")
    comm = CommProtocol("multihop", seed=0)
    comm.reset(0)
    result = asyncio.run(EpisodeRunner(smax_protoss, planner, cfg, writer, comm=comm).run_episode(0, 0))
    writer.close()
    assert result.steps == 8 and result.decisions >= 5
    trace = read_trace(tmp_path / "run")
    records = [rec for r in trace if r["kind"] == "decision" for rec in r["records"]]
    # The model answered (garbage, from random weights): calls completed, not only errors. A
    # backend whose every call fails would still play the episode on its fallbacks; that is not
    # what this test is for.
    assert any(rec.get("kind") == "vlm" for rec in records)
    assert planner.usage_summary()["calls"] > 0
    assert all(r["skill"] in lib for r in trace if r["kind"] == "decision")
