"""Batched episodes (one vmapped env, one sandbox batch per step) give each seed the row and the
trace that playing it alone gives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from compass.eval.episode import batch_key, play_batch, play_episode
from compass.eval.spec import parse_spec

SPEC = """\
name: batched
envs: [smax:protoss_5_vs_5]
seeds: [0, 1, 2]
max_steps: {steps}
traces: true
base: {{planner: library, decision_interval: 4}}
configs:
  - {{name: library, comm: multihop}}
  - {{name: heuristic, team: heuristic}}
"""


def _jobs(root: Path, steps: int):
    plan = parse_spec(SPEC.format(steps=steps), "batched.yaml")
    return plan.jobs(root)


def _rows(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]


def _traces(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("trace.jsonl"))}


@pytest.mark.slow
def test_batched_episodes_equal_serial_per_seed(tmp_path):
    jobs = _jobs(tmp_path / "serial", 60)
    serial = _rows([play_episode(j) for j in jobs])
    batched = []
    for config in ("library", "heuristic"):
        group = [
            replace(j, trace_root=str(tmp_path / "batched" / "traces")) for j in jobs if j.config == config
        ]
        assert len({batch_key(j) for j in group}) == 1 and batch_key(group[0]) is not None
        batched += play_batch(group)
    assert _rows(batched) == serial
    a, b = _traces(tmp_path / "serial"), _traces(tmp_path / "batched")
    assert len(a) == 6 and a == b
    # the episodes end at different steps: ended ones were masked while the others played on
    print(sorted({r["steps"] for r in serial}))
