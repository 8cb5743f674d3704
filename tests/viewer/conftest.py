"""A recorded VLM run (the fake OpenAI server answering with the scripted VLM), its library, and a
live viewer serving them on 127.0.0.1."""

from __future__ import annotations

import shutil
import socket
import threading
import time

import pytest

from compass.config import RunConfig
from compass.core.family import get_family
from compass.episode.session import run
from compass.episode.trace import read_trace
from tests.fakes.fake_vlm_server import FakeVLMServer
from tests.planner.scripted import ScriptedVLM, detect_module


@pytest.fixture(scope="session")
def recorded(tmp_path_factory):
    """runs/ with one scripted VLM episode (synthesis and repair happen in it), its library, and
    one logged prompt file (``prompts/<key_prompt>.json``: the request body the server received)."""
    tmp = tmp_path_factory.mktemp("viewer")
    lib = tmp / "lib"
    shutil.copytree(
        get_family("combat").seed_skills_dir, lib / "combat", ignore=shutil.ignore_patterns("_stats.json")
    )
    script = ScriptedVLM(synth_agent=0, fail_after=2)
    runs = tmp / "runs"
    with FakeVLMServer(responder=lambda request: script(request.text)) as server:
        cfg = RunConfig(
            env="smax:protoss_5_vs_5",
            planner="vlm",
            vlm=server.spec("openai", "test-model"),
            library=lib,
            out=runs,
            run_id="vlm-run",
            max_steps=30,
            decision_interval=4,
            seed=0,
        )
        run(cfg)
        requests = list(server.requests)
    # A second run of the same seed with the library planner, to compare side by side.
    run(
        RunConfig(
            env="smax:protoss_5_vs_5", planner="library", out=runs, run_id="lib-run", max_steps=30, seed=0
        )
    )
    # A `compass eval` result beside the runs (where eval writes by default), traces kept.
    _eval_into(runs, tmp)
    trace = read_trace(runs / "vlm-run")
    first = next(r for r in trace if r["kind"] == "vlm" and r["module"] == "perception")
    # As --log-prompts writes it (prompts/<prompt key>.txt): this run was recorded without it, so
    # the file is written here from a perception request the server received.
    req = next(r for r in requests if detect_module(r.text) == "perception")
    (runs / "vlm-run" / "prompts").mkdir()
    (runs / "vlm-run" / "prompts" / f"{first['key_prompt']}.txt").write_text(f"### prompt\n{req.text}\n")
    (runs / "vlm-run" / "images").mkdir()
    for k, png in enumerate(req.images):
        (runs / "vlm-run" / "images" / f"sent{k}.png").write_bytes(png)
    return {
        "runs": runs,
        "lib": lib,
        "prompt_key": first["key_prompt"],
        "prompt_t": first["t"],
        "prompt_agent": first["agent"],
    }


EVAL_SPEC = """name: mini-eval
envs: [smax:protoss_5_vs_5]
seeds: 2
workers: 1
max_steps: 12
traces: true
base:
  planner: library
grid:
  comm: [none, multihop]
"""


def _eval_into(runs, tmp) -> None:
    """``compass eval`` of a two-configuration spec (2 seeds, 12 steps) writing ``runs/mini-eval``."""
    from compass.eval.driver import prepare, run_eval
    from compass.eval.report import write_report
    from compass.eval.spec import load_spec

    spec = tmp / "mini-eval.yaml"
    spec.write_text(EVAL_SPEC)
    plan = load_spec(spec)
    prepared = prepare(plan, runs)
    rows = run_eval(prepared, plan.workers, None, lambda row: None)
    write_report(prepared.run_dir, rows, plan.name, [c.name for c in plan.configs])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def viewer_url(recorded):
    """``compass view`` over the recorded runs and library, in a thread of this process."""
    import uvicorn

    from compass.viewer.app import create_app

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(recorded["runs"], recorded["lib"]),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            log_config=None,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "viewer did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
