"""``bench_alem.py``'s batched episodes (the leaderboard mode's default): each seed's row equals
playing it alone, timings aside (tuning seeds, the overworld, a short horizon)."""

from __future__ import annotations

import pytest
from alem_testlib import needs_alem

import benchmarks.bench_alem as bench

pytestmark = [needs_alem, pytest.mark.slow]

TIMINGS = {"seconds", "skill_ms_per_agent_step", "adapter_ms_per_step"}


def _untimed(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in TIMINGS}


@pytest.mark.parametrize("team", ["retrieval", "random"])
def test_batched_rows_equal_one_by_one(alem_overworld, team):
    skills = ("alem_role_policy", "alem_role_policy", "alem_role_policy") if team == "retrieval" else ()
    policies = [bench.load_skill(n) for n in skills] or None
    seeds = [0, 1]
    alone = [
        _untimed(bench.run_episode(alem_overworld(30, text=False), team, s, policies).as_dict())
        for s in seeds
    ]
    envs = [alem_overworld(30, text=False) for _ in seeds]
    batched = [_untimed(r.as_dict()) for r in bench.run_episodes(envs, team, seeds, policies)]
    assert batched == alone
    assert alone[0] != alone[1]  # two different episodes, not one played twice


def test_jobs_are_batched_per_group():
    jobs = [
        bench.Job(d, "rl", "retrieval", s, 50, False, ("a",) * 3) for d in ("easy", "hard") for s in range(5)
    ]
    assert [len(c) for c in bench.job_batches(jobs, 20)] == [5, 5]
    assert [len(c) for c in bench.job_batches(jobs, 20, workers=2)] == [3, 2, 3, 2]
    assert [len(c) for c in bench.job_batches(jobs, 1)] == [1] * 10
    assert all(len({(j.difficulty, j.team) for j in c}) == 1 for c in bench.job_batches(jobs, 4))
