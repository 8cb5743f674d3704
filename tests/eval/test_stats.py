"""The bootstrap CI code against references on known data, and the paired comparison."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from compass.eval.report import paired_comparison, summarize
from compass.eval.stats import seed_bootstrap_ci, sign_test

# Efron & Tibshirani's law school LSAT sample (n = 15), a textbook bootstrap data set.
LSAT = [576, 635, 558, 578, 666, 580, 555, 661, 651, 605, 653, 575, 545, 572, 594]


def test_one_stratum_matches_scipys_percentile_bootstrap():
    mean, lo, hi = seed_bootstrap_ci(LSAT, n_boot=40_000, seed=1)
    ref = sps.bootstrap((np.array(LSAT),), np.mean, n_resamples=40_000, method="percentile", random_state=2)
    assert mean == pytest.approx(np.mean(LSAT))
    assert lo == pytest.approx(ref.confidence_interval.low, abs=1.5)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=1.5)
    # and against the normal approximation with the plug-in standard error (same order for n = 15)
    se = np.std(LSAT) / np.sqrt(len(LSAT))
    assert (hi - lo) == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_win_rate_interval_on_known_bernoulli_data():
    wins = [1] * 43 + [0] * 57  # 100 seeds, 43 wins
    mean, lo, hi = seed_bootstrap_ci(wins, n_boot=40_000)
    half = 1.96 * np.sqrt(0.43 * 0.57 / 100)
    assert mean == pytest.approx(0.43)
    assert lo == pytest.approx(0.43 - half, abs=0.015)
    assert hi == pytest.approx(0.43 + half, abs=0.015)


def test_strata_keep_their_seed_counts():
    """Two scenarios, one always won, one never: stratified resampling keeps 20 seeds of each, so
    the pooled mean cannot move; resampling the pooled 40 seeds would give a wide interval."""
    values = [1.0] * 20 + [0.0] * 20
    seeds = list(range(20)) * 2
    strata = ["a"] * 20 + ["b"] * 20
    mean, lo, hi = seed_bootstrap_ci(values, seeds, strata)
    assert (mean, lo, hi) == (0.5, 0.5, 0.5)
    _, plo, phi = seed_bootstrap_ci(values)
    assert phi - plo > 0.25


def test_stratified_width_matches_the_analytic_standard_error():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 200), rng.normal(5, 3, 200)
    mean, lo, hi = seed_bootstrap_ci(
        np.r_[a, b], list(range(200)) * 2, ["a"] * 200 + ["b"] * 200, n_boot=20_000
    )
    se = 0.5 * np.sqrt(np.var(a) / 200 + np.var(b) / 200)  # stratified mean = average of the two
    assert (hi - lo) == pytest.approx(2 * 1.96 * se, rel=0.08)


def test_repeats_of_a_seed_move_together():
    # 10 seeds, each played 5 times with identical results: the effective sample is 10, not 50.
    per_seed = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
    values = [v for v in per_seed for _ in range(5)]
    seeds = [s for s in range(10) for _ in range(5)]
    _, lo, hi = seed_bootstrap_ci(values, seeds)
    _, lo10, hi10 = seed_bootstrap_ci(per_seed)
    assert (lo, hi) == pytest.approx((lo10, hi10), abs=0.02)


def test_sign_test_known_values():
    assert sign_test(0, 0) == 1.0
    assert sign_test(6, 0) == pytest.approx(2 / 64)
    assert sign_test(26, 1) == pytest.approx(2 * 28 / 2**27)
    assert sign_test(3, 3) == 1.0


def _row(config, seed, win, env="e"):
    return {
        "config": config,
        "env": env,
        "seed": seed,
        "win": win,
        "outcome": "win" if win else "loss",
        "metrics": {},
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": 0.0,
        "wall_s": 1.0,
        "steps": 10,
        "skill_errors": 0,
    }


def test_paired_comparison_uses_only_common_seeds():
    rows = [_row("a", s, 1) for s in range(10)] + [_row("b", s, s < 4) for s in range(5, 20)]
    p = paired_comparison(rows, "a", "b", ["win"])
    assert p["pairs"] == 5  # seeds 5..9
    assert p["win"]["diff"] == 1.0 and p["wins_only_a"] == 5 and p["wins_only_b"] == 0
    s = summarize(rows, ["a", "b"])
    assert s["envs"]["e"]["configs"]["a"]["win"]["mean"] == 1.0
    assert s["envs"]["e"]["configs"]["b"]["episodes"] == 15


@pytest.mark.parametrize("df", [1, 3, 9, 19, 59])
def test_student_t_tail_and_quantile_match_scipy(df):
    from compass.eval.stats import t_ppf, t_sf

    for t in (-4.0, -1.3, 0.0, 0.4, 1.7, 2.5, 8.0):
        assert t_sf(t, df) == pytest.approx(sps.t.sf(t, df), rel=1e-9, abs=1e-14)
    for q in (0.9, 0.95, 0.975):
        assert t_ppf(q, df) == pytest.approx(sps.t.ppf(q, df), abs=1e-7)


def test_paired_test_matches_scipys_paired_t_and_its_ci():
    from compass.eval.stats import paired_test

    rng = np.random.default_rng(3)
    base = rng.normal(1.0, 1.0, 24)
    cand = base + rng.normal(0.4, 0.8, 24)
    r = paired_test(list(cand), list(base), alpha=0.05)
    ref = sps.ttest_rel(cand, base, alternative="greater")
    assert r["n"] == 24 and r["mean_diff"] == pytest.approx(np.mean(cand - base))
    assert r["p_better"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert r["p_worse"] == pytest.approx(sps.ttest_rel(cand, base, alternative="less").pvalue, rel=1e-9)
    lo, hi = ref.confidence_interval(0.95)  # one-sided 95 % lower bound = the 90 % CI's lower end
    assert r["ci"][0] == pytest.approx(lo, rel=1e-7) and r["ci_level"] == pytest.approx(0.9)
    assert r["verdict"] == ("better" if ref.pvalue < 0.05 else "tie")


def test_paired_test_verdicts_and_degenerate_differences():
    from compass.eval.stats import paired_test

    same = [0.5, 1.0, 2.0, 0.0, 3.0]
    assert paired_test(same, same)["verdict"] == "tie"  # a behaviour-identical copy is never "better"
    assert paired_test(same, same)["p_better"] == 1.0
    up = [x + 1.0 for x in same]
    assert paired_test(up, same)["verdict"] == "better"  # 5 equal gains: sign test p = 1/32
    assert paired_test(up[:4], same[:4])["verdict"] == "tie"  # 4 of them: p = 1/16 is not enough
    assert paired_test(same, up)["verdict"] == "worse"
    with pytest.raises(ValueError, match="one candidate and one incumbent figure per seed"):
        paired_test([1.0, 2.0], [1.0])


def _win_rows(config: str, wins: list[int]) -> list[dict]:
    return [
        {
            "config": config,
            "env": "e",
            "seed": s,
            "win": w,
            "metrics": {},
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost_usd": 0.0,
            "wall_s": 1.0,
            "steps": 10,
            "skill_errors": 0,
        }
        for s, w in enumerate(wins)
    ]


def test_eval_win_rates_use_the_wilson_interval_like_compass_run():
    """2 wins of 2: a percentile bootstrap over 2 seeds said [100, 100]; Wilson says [34, 100],
    the interval `compass run` prints for the same episodes."""
    from compass.eval.report import markdown
    from compass.eval.stats import summarize_outcomes, wilson_interval

    s = summarize(_win_rows("a", [1, 1]) + _win_rows("b", [1, 0, 0, 1, 0]), ["a", "b"])
    a = s["envs"]["e"]["configs"]["a"]["win"]
    assert a["mean"] == 1.0 and a["ci95"] == pytest.approx([0.342, 1.0], abs=1e-3)
    run = summarize_outcomes([{"outcome": "win", "return": 1.0, "steps": 1}] * 2)
    assert a["ci95"] == pytest.approx(run["win_rate_ci95"])
    assert s["envs"]["e"]["configs"]["b"]["win"]["ci95"] == pytest.approx(list(wilson_interval(2, 5)))
    md = markdown(s, "t")
    assert "| a | 2 | 100.0 [34.2, 100.0] |" in md
    assert "Wilson score interval" in md  # the report says which interval
    # b minus a on seeds 0-1: b won seed 0 like a, lost seed 1 which only a won
    assert "| config | pairs | Δ win % | seeds won only by it / only by `a` | sign test p |" in md
    assert "| b | 2 | -50.0 " in md and "| 0 / 1 | 1 |" in md


def test_runs_show_on_a_plain_run_has_no_made_up_wall_time(tmp_path):
    import json

    from typer.testing import CliRunner

    from compass.cli import app

    run = tmp_path / "r1"
    run.mkdir()
    episodes = [
        {"episode": i, "seed": i, "outcome": o, "return": 1.0, "steps": 50, "skill_errors": 0, "decisions": 3}
        for i, o in enumerate(["win", "loss"])
    ]
    summary = {"run_id": "r1", "env": "smax:protoss_5_vs_5", "planner": "library", "episodes": episodes}
    (run / "summary.json").write_text(json.dumps(summary))
    r = CliRunner().invoke(app, ["runs", "show", "r1", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    (row,) = [ln for ln in r.stdout.splitlines() if ln.startswith("| r1 |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "50.0 [9.5, 90.5]"  # Wilson, 1 of 2
    assert cells[5] == "-"  # wall s/ep: not recorded by compass run, not 0.00


def test_rliable_style_ci_matches_scipys_percentile_bootstrap_on_one_task():
    """One task column (how the ALEM leaderboard calls rliable): the ordinary percentile bootstrap."""
    from compass.eval.stats import stratified_bootstrap_ci

    mean, lo, hi = stratified_bootstrap_ci(LSAT, reps=40_000, seed=1)
    ref = sps.bootstrap((np.array(LSAT),), np.mean, n_resamples=40_000, method="percentile", random_state=3)
    assert mean == pytest.approx(np.mean(LSAT))
    assert lo == pytest.approx(ref.confidence_interval.low, abs=1.5)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=1.5)
    # a column vector is the same one-task matrix
    assert stratified_bootstrap_ci(np.array(LSAT)[:, None], reps=2000, seed=4) == stratified_bootstrap_ci(
        LSAT, reps=2000, seed=4
    )


def test_rliable_style_ci_resamples_runs_within_each_task():
    """rliable's StratifiedBootstrap draws runs per task column: a task scoring 0 on every run and
    one scoring 100 keep their runs in every resample, so the mean over both cannot move; pooling
    the 40 cells would give a wide interval."""
    from compass.eval.stats import stratified_bootstrap_ci

    m = np.column_stack([np.zeros(20), np.full(20, 100.0)])
    assert stratified_bootstrap_ci(m, reps=5000) == (50.0, 50.0, 50.0)
    _, plo, phi = stratified_bootstrap_ci(m.ravel(), reps=5000)
    assert phi - plo > 20
    # reference computation of the same procedure, written out: per task, runs drawn with replacement
    rng = np.random.default_rng(7)
    x = rng.normal(10, 3, size=(12, 3))
    draws = rng.integers(0, 12, size=(20_000, 12, 3))
    ref = np.quantile(
        np.take_along_axis(np.broadcast_to(x, draws.shape), draws, axis=1).mean(axis=(1, 2)), [0.025, 0.975]
    )
    _, lo, hi = stratified_bootstrap_ci(x, reps=20_000, seed=8)
    assert lo == pytest.approx(ref[0], abs=0.15) and hi == pytest.approx(ref[1], abs=0.15)
    with pytest.raises(ValueError):
        stratified_bootstrap_ci([])
