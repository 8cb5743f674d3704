"""A full short episode through the CLI's session: trace, summary, video, reproducibility."""

from __future__ import annotations

import json

from compass.config import RunConfig
from compass.episode.session import run
from compass.episode.trace import read_trace


def test_library_episode_writes_trace_and_summary(tmp_path):
    cfg = RunConfig(
        env="smax:protoss_5_vs_5", episodes=2, seed=0, out=tmp_path, run_id="a", max_steps=60, video=True
    )
    summary = run(cfg)
    run_dir = tmp_path / "a"
    on_disk = json.loads((run_dir / "summary.json").read_text())
    assert on_disk["overall"]["episodes"] == 2
    assert {e["outcome"] for e in on_disk["episodes"]} <= {"win", "loss", "timeout"}
    records = read_trace(run_dir)
    kinds = {r["kind"] for r in records}
    assert {"run_start", "decision", "step", "episode_end"} <= kinds
    decisions = [r for r in records if r["kind"] == "decision"]
    # Retrieval from the neutral default task ("Defeat all enemy units") over skill summaries.
    assert all(d["skill"] == "race_adaptive_combat" for d in decisions)
    steps = [r for r in records if r["kind"] == "step"]
    assert len(steps) == sum(e["steps"] for e in summary["episodes"])
    from compass.core.video import count_frames

    for e in summary["episodes"]:  # one followable video per episode, a frame per step
        assert count_frames(run_dir / e["video"]) == e["steps"]
    assert not (run_dir / "trace.jsonl.partial").exists()


def test_same_seed_gives_byte_identical_trace(tmp_path):
    for rid in ("x", "y"):
        run(RunConfig(env="smax:terran_5_vs_5", seed=7, out=tmp_path, run_id=rid, max_steps=40))
    assert (tmp_path / "x" / "trace.jsonl").read_bytes() == (tmp_path / "y" / "trace.jsonl").read_bytes()


def test_cli_rejects_typos_with_the_valid_names(tmp_path):
    from typer.testing import CliRunner

    from compass.cli import app

    r = CliRunner().invoke(app, ["run", "--env", "smax:protos_5_vs_5", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "protoss_5_vs_5" in r.output
    r = CliRunner().invoke(app, ["run", "--env", "starcraft:x", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "smax" in r.output
    r = CliRunner().invoke(app, ["run", "--comm", "multihopp", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "multihop" in r.output


def test_skills_cli_list_search_show():
    from typer.testing import CliRunner

    from compass.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["skills", "list"])
    assert r.exit_code == 0 and "race_adaptive_combat" in r.output
    r = runner.invoke(app, ["skills", "search", "retreat when health is low"])
    assert r.exit_code == 0 and r.output.index("retreat_when_low") < r.output.index("regroup")
    r = runner.invoke(app, ["skills", "show", "nope"])
    assert r.exit_code == 2 and "no skill named" in r.output
