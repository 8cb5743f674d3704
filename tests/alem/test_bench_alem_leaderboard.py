"""``bench_alem.py --leaderboard``: the protocol it plays, what it refuses, and the results file it
writes through ``write_results`` (episodes replaced by a fake, so no ALEM env is needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import benchmarks._results as results_mod
import benchmarks.bench_alem as bench
from compass.games.alem.metrics import score_episode
from compass.games.alem.protocol import EVAL_BASES, episode_seeds

PLAYED: list = []


def fake_play(job):
    """An episode row as play_job returns it: the seed decides which achievements the team unlocked."""
    PLAYED.append(job)
    ach = np.zeros((3, 93), dtype=bool)
    ach[0, : 1 + job.seed % 5] = True
    ach[1, 70 : 71 + (job.preset == "harness")] = True
    score = score_episode(
        ach, [job.steps, 40, 30], job.steps, "loss", death_causes=[None, "zombie", "skeleton"]
    )
    row = bench.EpisodeResult(
        job.team, job.difficulty, job.seed, score, 1.0, 0.1, 0, {"env": 1.0}, job.preset, job.skills
    ).as_dict()
    return row, {"non_specialist_efficiency": 0.2 if job.preset == "harness" else 0.1}


@pytest.fixture
def bench_env(tmp_path, monkeypatch):
    PLAYED.clear()
    monkeypatch.setattr(bench, "play_job", fake_play)
    monkeypatch.setattr(bench, "play_jobs", lambda chunk: [fake_play(j) for j in chunk])
    monkeypatch.setattr(bench, "compass_pick", lambda n_agents=3: ("alem_role_policy",) * 3)
    monkeypatch.setattr(results_mod, "ROOT", tmp_path)
    monkeypatch.setattr(results_mod, "RESULTS_DIR", tmp_path / "results")
    clean = {"commit": "abc", "dirty": False}
    monkeypatch.setattr(results_mod, "git_commit", lambda: clean)
    monkeypatch.setattr(bench, "git_commit", lambda: clean)
    # tmp_path is no git checkout: write_results' own provenance checks (tested in
    # tests/test_published_figures.py) would refuse it; here only the protocol is under test.
    monkeypatch.setattr(results_mod, "provenance_problems", lambda: [])
    monkeypatch.setattr(results_mod, "input_hashes", lambda paths: ({}, []))
    return tmp_path / "results"


@pytest.mark.parametrize("base", ["leaderboard", "fresh"])
def test_full_protocol_writes_every_episode_through_write_results(bench_env, base, capsys):
    argv = ["--leaderboard", "--workers", "1"] + (["--eval-base", base] if base == "fresh" else [])
    assert bench.main(argv) == 0
    name = "bench_alem_leaderboard" + ("" if base == "leaderboard" else "_fresh")
    rec = json.loads((bench_env / f"{name}.json").read_text())
    seeds = episode_seeds(EVAL_BASES[base], 20)
    assert rec["seeds"] == seeds and rec["benchmark"] == name and rec["dirty"] is False
    res = rec["results"]
    # 3 difficulties x 2 presets x 20 seeds, one team (what compass run plays), every episode kept
    assert len(res["episodes"]) == 120 and len(PLAYED) == 120
    assert {(j.difficulty, j.preset) for j in PLAYED} == {
        (d, p) for d in ("easy", "medium", "hard") for p in ("rl", "harness")
    }
    assert {j.steps for j in PLAYED} == {10000} and {j.text for j in PLAYED} == {False}
    assert sorted({j.seed for j in PLAYED}) == seeds
    ep = res["episodes"][0]
    assert {"team_total_pct", "total_pct", "agents", "seed", "preset", "skills"} <= set(ep)
    assert ep["agents"][1]["death_cause"] == "zombie" and "achievements" in ep["agents"][0]
    hard = res["hard"]["harness"]["retrieval"]
    lb = hard["leaderboard"]["total"]
    team = [
        e["team_total_pct"] for e in res["episodes"] if (e["difficulty"], e["preset"]) == ("hard", "harness")
    ]
    assert lb[0] == round(float(np.mean(team)), 1) and lb[1] <= lb[0] <= lb[2]
    assert hard["agent_mean"]["total"][0] < lb[0]  # the agent mean is below the team score here
    assert res["hard"]["rl"]["retrieval"]["leaderboard"]["total"][0] < lb[0]  # harness unlocks one more
    assert res["env_config"]["hard"]["harness"]["non_specialist_efficiency"] == 0.2
    assert res["protocol"]["evaluation_seeds"] is True and res["compass_pick"] == ["alem_role_policy"] * 3
    assert "leaderboard: Gemini 3.7 Flash" in capsys.readouterr().out


def test_refuses_a_dirty_tree_and_reduced_runs_without_out(bench_env, monkeypatch):
    assert bench.main(["--leaderboard", "--episodes", "3"]) == 2
    assert bench.main(["--leaderboard", "--steps", "50"]) == 2
    assert bench.main(["--leaderboard", "--difficulties", "hard"]) == 2
    monkeypatch.setattr(bench, "git_commit", lambda: {"commit": "abc", "dirty": True})
    assert bench.main(["--leaderboard"]) == 2
    assert not PLAYED and not bench_env.exists()


def test_tuning_runs_refuse_evaluation_seeds(bench_env, tmp_path):
    for base in EVAL_BASES.values():
        assert bench.main(["--seed-base", str(base + 3)]) == 2
        assert bench.main(["--leaderboard", "--seed-base", str(base), "--out", str(tmp_path / "x.json")]) == 2
    assert not PLAYED


def test_smoke_run_on_tuning_seeds_goes_to_out(bench_env, tmp_path):
    out = tmp_path / "smoke" / "lb.json"
    argv = ["--leaderboard", "--seed-base", "0", "--episodes", "2", "--steps", "50", "--difficulties", "hard"]
    assert bench.main([*argv, "--workers", "1", "--out", str(out)]) == 0
    rec = json.loads(out.read_text())
    assert rec["seeds"] == [0, 1] and len(rec["episodes"]) == 4  # 2 seeds x 2 presets
    assert rec["results"]["protocol"]["evaluation_seeds"] is False
    assert not (bench_env / "bench_alem_leaderboard.json").exists()


def test_worker_pool_plays_every_job_once():
    jobs = [bench.Job("hard", "rl", "random", s, 10, False, ()) for s in range(5)]
    got = dict(bench.run_jobs(jobs, 2, fn=repr))  # spawn processes, as the benchmark's episodes run
    assert set(got) == set(jobs) and all(got[j] == repr(j) for j in jobs)
