"""Recording demonstrations: files per episode, replay to the same outcome, frames = steps, bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compass.cli import app
from compass.core.video import count_frames
from compass.demos.record import read_trajectory, replay_trajectory

SHIPPED = Path(__file__).resolve().parents[2] / "demos"


def test_record_writes_video_and_trajectory_per_episode(heuristic_demos):
    out, rows = heuristic_demos
    assert sorted(p.name for p in out.iterdir()) == [
        "ep_0003.jsonl",
        "ep_0003.mp4",
        "ep_0004.jsonl",
        "ep_0004.mp4",
    ]
    for row in rows:
        header, steps = read_trajectory(out / row["trajectory"])
        assert header["env"] == "smax:protoss_5_vs_5" and header["seed"] == row["seed"]
        assert header["policy_checksum"].startswith("heuristic:")
        assert header["outcome"] in ("win", "loss", "timeout")
        assert len(steps) == header["steps"] == count_frames(out / header["video"])
        unit = steps[0]["units"][0]
        assert unit["obs"].startswith("Step 0. You are Ally #0")
        assert unit["action_name"]  # e.g. "move East" / "attack Enemy #2"
        assert {"attacks", "damage_taken", "deaths"} <= set(steps[0])
        # something happens in a real fight: attacks with named attacker and target, damage taken
        assert any(s["attacks"] for s in steps) and any(s["damage_taken"] for s in steps)


def test_replay_reaches_the_recorded_outcome(heuristic_demos):
    out, rows = heuristic_demos
    for row in rows:
        r = replay_trajectory(out / row["trajectory"])
        assert r["match"], r


def test_replay_detects_a_tampered_trajectory(heuristic_demos, tmp_path):
    out, rows = heuristic_demos
    lines = (out / rows[0]["trajectory"]).read_text().splitlines()
    header = json.loads(lines[0])
    steps = [json.loads(x) for x in lines[1:]]
    for s in steps:  # everyone walks north into the map edge (SMAX kills units touching it)
        for u in s["units"]:
            u["action"] = 2
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [header, *steps]) + "\n")
    assert not replay_trajectory(path)["match"]


def test_replay_detects_a_step_count_that_does_not_match(heuristic_demos, tmp_path):
    """Same actions, same outcome, but the header claims one step more than the actions take."""
    out, rows = heuristic_demos
    lines = (out / rows[0]["trajectory"]).read_text().splitlines()
    header = json.loads(lines[0])
    header["steps"] += 1
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    r = replay_trajectory(path)
    assert r["replayed_outcome"] == r["recorded_outcome"]  # only the step count differs
    assert r["replayed_steps"] == r["recorded_steps"] - 1 and not r["match"]


def test_mappo_checkpoint_records_and_replays(tmp_path):
    from compass.demos.record import record_episodes

    ckpt = SHIPPED / "protoss_5_vs_5" / "checkpoint"
    rows = record_episodes("smax:protoss_5_vs_5", str(ckpt), 1, 11, tmp_path, max_steps=40)
    header, steps = read_trajectory(tmp_path / rows[0]["trajectory"])
    meta = json.loads((ckpt / "meta.json").read_text())
    assert header["policy_checksum"] == f"sha256:{meta['actor_sha256']}"
    assert count_frames(tmp_path / header["video"]) == len(steps)
    assert replay_trajectory(tmp_path / rows[0]["trajectory"])["match"]


def test_checkpoint_of_another_env_is_refused_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    ckpt = SHIPPED / "protoss_5_vs_5" / "checkpoint"
    # a real process: JAX's imports swap sys.stderr, which hides it from CliRunner's capture
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "compass.cli",
            "demos",
            "record",
            "--policy",
            str(ckpt),
            "--env",
            "smax:zerg_5_vs_5",
        ]
        + ["--episodes", "1", "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SHIPPED.parent), "COLUMNS": "60"},
        timeout=600,
    )
    assert res.returncode == 2
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "trained on smax:protoss_5_vs_5, not smax:zerg_5_vs_5" in errors[0]
    assert "Traceback" not in res.stderr
    assert not list(tmp_path.rglob("*.mp4")) and not list(tmp_path.rglob("*.jsonl"))


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["demos", "record", "--policy", "/no/such/ckpt"],
            "neither 'library', 'heuristic' nor an existing checkpoint",
        ),
        (["demos", "train", "--steps", "lots"], "--steps takes a number like 3M"),
        (["demos", "replay", "/no/such.jsonl"], "does not exist"),
    ],
)
def test_bad_cli_input_is_one_line_and_exit_2(args, message):
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split())
    assert "Traceback" not in res.output
