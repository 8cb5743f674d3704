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


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz, as in Numerical Recipes)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t > 0 else 1.0 - tail


def t_ppf(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t (bisection on :func:`t_sf`; 1e-10 is plenty for CIs)."""
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1.0 - t_sf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return (lo + hi) / 2


def paired_test(candidate: list[float], incumbent: list[float], alpha: float = 0.05) -> dict:
    """One-sided paired t-test of ``candidate`` against ``incumbent``, episode i of both on one seed.

    Returns n, the mean difference (candidate - incumbent), its two-sided ``1 - 2 alpha`` CI (whose
    lower end is the one-sided ``1 - alpha`` bound), ``p_better`` (H1: the candidate's mean is
    higher), ``p_worse`` (H1: lower) and the verdict at error rate ``alpha`` per side: "better"
    when ``p_better < alpha``, "worse" when ``p_worse < alpha``, else "tie". Differences that are
    all equal have no spread: all zero is a tie; all of one sign is judged by the exact sign test
    (p = 0.5 ** n).
    """
    c = np.asarray(candidate, dtype=np.float64)
    b = np.asarray(incumbent, dtype=np.float64)
    if c.shape != b.shape:
        raise ValueError(
            f"paired test needs one candidate and one incumbent figure per seed ({c.size} vs {b.size})"
        )
    d = c - b
    n = int(d.size)
    if n < 2:
        raise ValueError(f"paired test needs at least 2 seeds, got {n}")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd < 1e-12:
        half = 0.0
        sign = 0.5**n
        p_better = sign if mean > 1e-12 else 1.0
        p_worse = sign if mean < -1e-12 else 1.0
    else:
        se = sd / math.sqrt(n)
        t = mean / se
        p_better, p_worse = t_sf(t, n - 1), t_sf(-t, n - 1)
        half = t_ppf(1 - alpha, n - 1) * se
    verdict = "better" if p_better < alpha else "worse" if p_worse < alpha else "tie"
    return {
        "test": "paired t, one-sided",
        "alpha": alpha,
        "n": n,
        "mean_diff": mean,
        "sd_diff": sd,
        "ci": [mean - half, mean + half],
        "ci_level": 1 - 2 * alpha,
        "p_better": float(p_better),
        "p_worse": float(p_worse),
        "verdict": verdict,
    }


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
