"""Small statistics for results: win-rate intervals and bootstrap CIs of means."""

from __future__ import annotations

import math

import numpy as np


def wilson_interval(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate (well behaved at 0 and 1, unlike the normal one)."""
    if n == 0:
        return (0.0, 0.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean_ci(
    values: list[float], n_boot: int = 10_000, alpha: float = 0.05, seed: int = 0
) -> tuple[float, float, float]:
    """Mean and percentile-bootstrap (1 - alpha) CI."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return (0.0, 0.0, 0.0)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(x.mean()), float(lo), float(hi)


def summarize_outcomes(episodes: list[dict]) -> dict:
    """Win rate with its Wilson CI, mean return with a bootstrap CI, mean steps."""
    n = len(episodes)
    wins = sum(1 for e in episodes if e["outcome"] == "win")
    lo, hi = wilson_interval(wins, n)
    mean_ret, r_lo, r_hi = bootstrap_mean_ci([e["return"] for e in episodes])
    return {
        "episodes": n,
        "wins": wins,
        "win_rate": wins / n if n else 0.0,
        "win_rate_ci95": [lo, hi],
        "mean_return": mean_ret,
        "mean_return_ci95": [r_lo, r_hi],
        "mean_steps": float(np.mean([e["steps"] for e in episodes])) if n else 0.0,
    }


def seed_bootstrap_ci(
    values: list[float] | np.ndarray,
    seeds: list[int] | np.ndarray | None = None,
    strata: list | np.ndarray | None = None,
    n_boot: int = 10_000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean and percentile-bootstrap CI, resampling whole seeds within each stratum.

    Episodes of one seed move together (a cluster: e.g. repeats of a seed), and each stratum (e.g.
    an environment) keeps its number of seeds in every resample, so a pooled figure is not skewed
    by one scenario drawing more seeds than another. With one stratum and one episode per seed
    this is the ordinary percentile bootstrap of the mean.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return (0.0, 0.0, 0.0)
    seeds_a = np.arange(x.size) if seeds is None else np.asarray(seeds)
    strata_a = np.zeros(x.size, dtype=int) if strata is None else np.asarray(strata)
    rng = np.random.default_rng(seed)
    total_sum = np.zeros(n_boot)
    total_n = np.zeros(n_boot)
    for h in sorted(set(strata_a.tolist()), key=str):
        in_h = strata_a == h
        clusters = sorted(set(seeds_a[in_h].tolist()))
        sums = np.array([x[in_h & (seeds_a == c)].sum() for c in clusters])
        counts = np.array([(in_h & (seeds_a == c)).sum() for c in clusters], dtype=np.float64)
        pick = rng.integers(0, len(clusters), size=(n_boot, len(clusters)))
        total_sum += sums[pick].sum(axis=1)
        total_n += counts[pick].sum(axis=1)
    means = total_sum / total_n
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(x.mean()), float(lo), float(hi)


def sign_test(a_only: int, b_only: int) -> float:
    """Two-sided exact sign test on discordant pairs (seeds one side won and the other did not)."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def stratified_bootstrap_ci(
    scores: list[float] | list[list[float]] | np.ndarray,
    reps: int = 10_000,
    size: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean over all runs and tasks, and rliable's stratified-bootstrap percentile CI of it.

    ``scores`` is rliable's ``(num_runs, num_tasks)`` matrix (a 1-D list is one task). As in
    ``rliable.library.get_interval_estimates(..., method="percentile")`` with the mean as the
    aggregate, each resample draws ``num_runs`` runs with replacement within every task column
    (a task never borrows another's runs), and the CI is the ``(1 - size) / 2`` and
    ``(1 + size) / 2`` percentiles of the resampled means. ALEM's leaderboard
    (``scripts/make_submission.py``) calls it with one column per difficulty and 10,000 reps.
    rliable draws from numpy's global generator, so its own intervals are not reproducible
    draw-for-draw; this one is (``seed``).
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.size == 0:
        raise ValueError(f"scores must be a non-empty (num_runs, num_tasks) matrix, got shape {x.shape}")
    runs, tasks = x.shape
    # Each (run, task) cell is its own cluster, each task column a stratum: seed_bootstrap_ci then
    # resamples runs within tasks, which is rliable's StratifiedBootstrap.
    cells = np.arange(x.size)
    strata = np.tile(np.arange(tasks), runs)
    mean, lo, hi = seed_bootstrap_ci(x.ravel(), cells, strata, n_boot=reps, alpha=1 - size, seed=seed)
    return mean, lo, hi
