"""Batched episodes (one vmapped env, one sandbox batch per step) give each seed the row and the
trace that playing it alone gives."""

from __future__ import annotations

import json
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


def _skill_errors(*roots: Path) -> str:
    """Every skill error the traces under ``roots`` record (finished or partial), for a failing
    comparison's message: a row that differs by a skill error says which and why."""
    lines = []
    for root in roots:
        for path in sorted(root.rglob("trace.jsonl*")):
            for line in path.read_text().splitlines():
                record = json.loads(line)
                for e in record.get("errors", ()) if record.get("kind") == "step" else ():
                    where = f"{path.relative_to(root.parent)} t={record['t']} agent {e['agent']}"
                    lines.append(f"{where}: {e['kind']}: {e['message']}")
    return "skill errors in the traces:\n" + ("\n".join(lines) or "none")


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
    assert _rows(batched) == serial, _skill_errors(tmp_path / "serial", tmp_path / "batched")
    a, b = _traces(tmp_path / "serial"), _traces(tmp_path / "batched")
    assert len(a) == 6 and a == b
    # the episodes end at different steps: ended ones were masked while the others played on
    print(sorted({r["steps"] for r in serial}))


def test_what_is_batched_and_what_plays_alone():
    """Library and scripted teams on SMAX are batched, per configuration, at most ``batch`` at a
    time and split so two workers both get work; a VLM planner, an enemy team driven by
    controllers and SMACv2 play one by one."""
    from compass.eval.driver import batches

    text = """\
envs: [smax:protoss_5_vs_5, smacv2:protoss_5_vs_5]
seeds: 5
base: {planner: library}
configs:
  - {name: lib}
  - {name: vlm, planner: vlm, vlm: "openai:test-model"}
  - {name: enemy, enemy: "0-4 random"}
"""
    jobs = parse_spec(text, "x.yaml").jobs()
    smax_lib = [j for j in jobs if j.config == "lib" and j.env.startswith("smax")]
    assert {batch_key(j) for j in smax_lib} == {("lib", "smax:protoss_5_vs_5", None)}
    assert all(batch_key(j) is None for j in jobs if j not in smax_lib)
    runs = batches(jobs, 16)
    assert [len(r) for r in runs if len(r) > 1] == [5]
    assert sum(len(r) for r in runs) == len(jobs) and len(runs) == len(jobs) - 4
    assert [len(r) for r in batches(smax_lib, 2)] == [2, 2, 1]
    assert [len(r) for r in batches(smax_lib, 16, workers=2)] == [3, 2]
    assert [len(r) for r in batches(smax_lib, 1)] == [1] * 5


ALEM_SPEC = """\
name: batched-alem
envs: [alem:overworld]
seeds: [0, 1]
max_steps: 25
traces: true
base: {planner: library, comm: multihop}
configs:
  - {name: library+random, team: "0 library, 1-2 random"}
"""


@pytest.mark.slow
def test_batched_alem_episodes_equal_serial_per_seed(tmp_path):
    """ALEM too (tuning seeds): the library agent, random teammates (their own seeded streams),
    the family's scorer (Base / Coord. / Total % in the row's metrics) and the trace."""
    pytest.importorskip("alem")
    jobs = parse_spec(ALEM_SPEC, "alem.yaml").jobs(tmp_path / "serial")
    serial = _rows([play_episode(j) for j in jobs])
    assert {batch_key(j) for j in jobs} == {("library+random", "alem:overworld", 25)}
    batched = _rows(play_batch([replace(j, trace_root=str(tmp_path / "batched" / "traces")) for j in jobs]))
    assert batched == serial, _skill_errors(tmp_path / "serial", tmp_path / "batched")
    assert all("total_pct" in r["metrics"] for r in serial)
    a, b = _traces(tmp_path / "serial"), _traces(tmp_path / "batched")
    assert len(a) == 2 and a == b


KILLED_SPEC = """\
name: killed
envs: [smax:protoss_5_vs_5]
seeds: [0, 1, 2]
max_steps: 60
traces: true
base: {planner: library, decision_interval: 4}
"""


@pytest.mark.slow
def test_a_batch_interrupted_after_an_episode_ended_is_replayed_whole(tmp_path, monkeypatch):
    """A batch's rows are appended when the whole batch ends: interrupted (Ctrl-C) after one of
    its episodes ended, it leaves no row and no ``trace.jsonl`` (only partial files) for any of
    them, and resuming replays the batch to the rows and traces of an uninterrupted eval."""
    from compass.eval.driver import prepare, run_eval
    from compass.eval.store import read_rows
    from compass.games.combat.smax import SmaxEnv

    whole = run_eval(prepare(parse_spec(KILLED_SPEC, "k.yaml"), tmp_path / "whole"), 1)
    first_end = min(r["steps"] for r in whole)
    assert first_end < max(r["steps"] for r in whole), "an episode should end before the others"

    steps = 0
    step_batch = SmaxEnv.step_batch

    def interrupted(self, inputs):
        nonlocal steps
        steps += any(x[1] is not None for x in inputs)  # (not the worker's compile of the step)
        if steps == first_end + 2:
            raise KeyboardInterrupt
        return step_batch(self, inputs)

    monkeypatch.setattr(SmaxEnv, "step_batch", interrupted)
    killed = tmp_path / "killed"
    with pytest.raises(KeyboardInterrupt):
        run_eval(prepare(parse_spec(KILLED_SPEC, "k.yaml"), killed), 1)
    run = killed / "killed"
    assert read_rows(run / "episodes.csv") == []
    assert not list(run.rglob("trace.jsonl")) and len(list(run.rglob("trace.jsonl.partial"))) == 3
    monkeypatch.setattr(SmaxEnv, "step_batch", step_batch)
    prepared = prepare(parse_spec(KILLED_SPEC, "k.yaml"), killed)
    assert prepared.store.rows == [] and len(prepared.todo) == 3
    assert _rows(run_eval(prepared, 1)) == _rows(whole), _skill_errors(tmp_path / "whole", killed)
    assert _traces(run) == _traces(tmp_path / "whole" / "killed") and len(_traces(run)) == 3


@pytest.mark.slow
def test_an_episode_that_fails_leaves_no_finished_trace(tmp_path, monkeypatch):
    """Played alone too: an episode that raises part-way keeps its trace as a partial file."""
    from compass.eval.episode import EpisodeError
    from compass.games.combat.smax import SmaxEnv

    def broken(self, actions):
        raise RuntimeError("device lost")

    (job,) = parse_spec(KILLED_SPEC.replace("[0, 1, 2]", "[0]"), "k.yaml").jobs(tmp_path)
    play_episode(job)  # compiles this worker's env before the step breaks
    monkeypatch.setattr(SmaxEnv, "step_begin", broken)
    for p in tmp_path.rglob("trace.jsonl"):
        p.unlink()
    with pytest.raises(EpisodeError, match="device lost"):
        play_episode(job)
    assert not list(tmp_path.rglob("trace.jsonl")) and len(list(tmp_path.rglob("trace.jsonl.partial"))) == 1
