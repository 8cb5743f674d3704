"""``compass run`` as a user runs it: success path, ``--skill``, replay, the VLM cache, traces
that do not depend on where the library lives, the isolated executor, 10-unit scenarios."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compass.cli import app
from compass.core.family import get_family
from compass.episode.trace import read_trace
from tests.fakes.fake_vlm_server import FakeVLMServer, Reply
from tests.planner.scripted import ScriptedVLM

# A skill that raises on every call: each step records an error with its traceback.
BROKEN = '''# provenance: human
def always_fails(obs: str) -> int:
    """Defeat all enemy units by dividing by zero."""
    d = parse_obs(obs)
    return len(d.enemies) // 0
'''


def _invoke(*args: str) -> object:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def _text(result: object, capfd: pytest.CaptureFixture) -> str:
    """Everything the command printed: rich writes to the CliRunner's streams or, while its
    progress bar is live, to the process's file descriptors."""
    captured = capfd.readouterr()
    return result.output + captured.out + captured.err


def _library(root: Path, extra: str | None = None) -> Path:
    shutil.copytree(
        get_family("combat").seed_skills_dir, root / "combat", ignore=shutil.ignore_patterns("_stats.json")
    )
    if extra is not None:
        (root / "combat" / "always_fails.py").write_text(extra)
    return root


def test_cli_run_success_writes_run_dir_and_prints_the_win_rate(tmp_path, capfd):
    r = _invoke("run", "--out", str(tmp_path), "--max-steps", "25", "--episodes", "2", "--seed", "3")
    out = _text(r, capfd)
    assert "episode 0 seed 3" in out and "episode 1 seed 4" in out
    assert "win rate" in out and "over 2 episode(s)" in out
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert [e["seed"] for e in summary["episodes"]] == [3, 4]
    start = read_trace(run_dir)[0]
    assert start["kind"] == "run_start" and start["config"]["task"] == "Defeat all enemy units"


def test_cli_skill_runs_the_named_skill_without_retrieval(tmp_path):
    _invoke("run", "--out", str(tmp_path), "--run-id", "named", "--max-steps", "20", "--skill", "focus_fire")
    decisions = [r for r in read_trace(tmp_path / "named") if r["kind"] == "decision"]
    assert decisions and {d["skill"] for d in decisions} == {"focus_fire"}
    assert all(d["records"] == [{"module": "named_skill", "skill": "focus_fire"}] for d in decisions)


def test_cli_skill_errors_name_the_skill_and_the_choices(tmp_path, capfd):
    r = CliRunner().invoke(
        app, ["run", "--out", str(tmp_path), "--skill", "no_such_skill", "--max-steps", "5"]
    )
    err = _text(r, capfd)
    assert r.exit_code == 2 and "no_such_skill" in err and "race_adaptive_combat" in err
    assert "Traceback" not in err
    r = CliRunner().invoke(app, ["run", "--out", str(tmp_path), "--skill", "regroup", "--vlm", "openai:x"])
    assert r.exit_code == 2 and "--skill" in _text(r, capfd)


def test_traces_do_not_depend_on_where_the_library_lives(tmp_path):
    """Two identical runs with a failing skill, libraries in different directories: same bytes."""
    for name in ("a", "b"):
        lib = _library(tmp_path / f"lib_{name}" / "deeper" if name == "b" else tmp_path / "lib_a", BROKEN)
        _invoke(
            "run",
            *("--out", str(tmp_path / "runs"), "--run-id", name, "--max-steps", "6"),
            *("--library", str(lib), "--skill", "always_fails"),
        )
    a = (tmp_path / "runs" / "a" / "trace.jsonl").read_bytes()
    b = (tmp_path / "runs" / "b" / "trace.jsonl").read_bytes()
    errors = [
        e for r in read_trace(tmp_path / "runs" / "a") if r["kind"] == "step" for e in r.get("errors", [])
    ]
    assert errors and "ZeroDivisionError" in errors[0]["traceback"]
    assert 'File "combat/always_fails.py", line 5' in errors[0]["traceback"]
    # The run_start line holds the config, whose --library differs; everything after is identical.
    assert str(tmp_path) not in b"\n".join(a.splitlines()[1:]).decode()
    assert a.splitlines()[1:] == b.splitlines()[1:]


def test_cli_isolated_executor_runs_a_whole_episode(tmp_path):
    _invoke(
        "run",
        *("--out", str(tmp_path), "--run-id", "iso", "--max-steps", "8", "--isolation", "process"),
        *("--skill", "race_adaptive_combat"),
    )
    summary = json.loads((tmp_path / "iso" / "summary.json").read_text())
    assert summary["episodes"][0]["steps"] == 8
    steps = [r for r in read_trace(tmp_path / "iso") if r["kind"] == "step"]
    errors = [e for s in steps for e in s.get("errors", [])]
    # The worker answered the skill's actions; on a busy machine a call may miss the worker's
    # wall-clock deadline (kind "budget"), but nothing else may go wrong.
    assert all(e["kind"] == "budget" for e in errors), errors
    assert len(errors) < sum(1 for s in steps for k in s["skills"] if k) / 2
    assert {k for s in steps for k in s["skills"] if k} == {"race_adaptive_combat"}


@pytest.mark.parametrize("scenario", ["zerg_10_vs_10", "terran_10_vs_11"])
def test_cli_runs_ten_unit_scenarios(tmp_path, scenario):
    _invoke("run", "--env", f"smax:{scenario}", "--out", str(tmp_path), "--run-id", "s", "--max-steps", "5")
    steps = [r for r in read_trace(tmp_path / "s") if r["kind"] == "step"]
    assert len(steps) == 5 and all(len(s["actions"]) == 10 for s in steps)


def _calls(server) -> list:
    """The server's requests without the probes ``compass run`` sends before each VLM run."""
    from compass.vlm.backends.base import PROBE_PROMPT

    return [r for r in server.requests if r.text != PROBE_PROMPT]


def test_cli_vlm_run_with_cache_then_replay(tmp_path):
    """A scripted VLM run through the CLI fills --vlm-cache; a second run is answered from the cache
    without one request to the server; replaying the first run through the CLI gives its trace."""
    script = ScriptedVLM(synth_agent=None)
    cache = tmp_path / "cache"
    common = ("--max-steps", "10", "--decision-interval", "5", "--out", str(tmp_path))
    with FakeVLMServer(responder=lambda req: script(req.text)) as server:
        spec = server.spec("openai", "gpt-4o-mini")
        _invoke("run", "--vlm", spec, "--run-id", "live", "--vlm-cache", str(cache), *common)
        live_requests = len(_calls(server))  # the run's one-token probe aside
        _invoke("run", "--vlm", spec, "--run-id", "cached", "--vlm-cache", str(cache), *common)
        assert len(_calls(server)) == live_requests > 0  # only the second run's probe reached it
    cached = json.loads((tmp_path / "cached" / "summary.json").read_text())["vlm_usage"]
    assert cached["calls"] == live_requests and cached["cached"] == live_requests
    assert cached["tokens"] == "reported"  # the server's usage, kept in the cache
    _invoke("run", "--vlm", f"replay:{tmp_path / 'live'}", "--run-id", "replayed", *common)
    live = (tmp_path / "live" / "trace.jsonl").read_text().splitlines()
    again = (tmp_path / "replayed" / "trace.jsonl").read_text().splitlines()
    assert live[1:] == again[1:]


def test_anthropic_backed_episode(tmp_path):
    """The whole planner over the Anthropic wire format (fake server, real ``anthropic`` SDK); the
    server reports no usage, so the summary says its tokens are estimated and which model decided."""
    script = ScriptedVLM(synth_agent=None)
    with FakeVLMServer(responder=lambda req: Reply(script(req.text), usage=False)) as server:
        _invoke(
            "run",
            *("--vlm", server.spec("anthropic", "claude-3-haiku-20240307"), "--run-id", "claude"),
            *("--max-steps", "6", "--out", str(tmp_path)),
        )
        requests = _calls(server)
    assert requests and {r.api for r in requests} == {"anthropic"}
    usage = json.loads((tmp_path / "claude" / "summary.json").read_text())["vlm_usage"]
    assert usage["calls"] == len(requests) and usage["prompt_tokens"] > 0
    assert usage["tokens"] == f"estimated for {len(requests)} of {len(requests)} calls"
    assert usage["decided_by"].startswith("anthropic:claude-3-haiku-20240307@http://127.0.0.1:")
