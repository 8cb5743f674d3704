"""Eval results: per-configuration metrics with 95% CIs, paired comparisons, markdown and PNG.

Win rates get the Wilson score interval over episodes, as ``compass run`` reports them: honest at
small n (2 wins of 2 is [0.34, 1.00], where a percentile bootstrap over 2 seeds says [1.00, 1.00]).
Other metrics get a percentile bootstrap over seeds; paired differences a bootstrap over the seeds
both configurations played.

Metrics per environment: the family's numeric episode metrics when it has a scorer (ALEM: Base,
Coord., Total %), otherwise the win rate. Costs per episode: VLM tokens, dollars and wall time.
Paired comparisons use only the seeds both configurations finished.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from compass.eval.stats import seed_bootstrap_ci, sign_test, wilson_interval
from compass.util.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text

_NOT_METRICS = {"steps"}


def metric_names(rows: list[dict[str, Any]]) -> list[str]:
    """What to report for these rows: the family's metrics, else ``win``."""
    names = sorted({k for r in rows for k in r["metrics"] if k not in _NOT_METRICS})
    return names or ["win"]


def metric_value(row: dict[str, Any], name: str) -> float:
    return float(row["win"]) if name == "win" else float(row["metrics"].get(name, np.nan))


#: What the report says about its intervals (printed under its title).
CI_NOTE = (
    "95% CIs: win rate by the Wilson score interval over episodes; other metrics by bootstrap "
    "over seeds; paired differences by bootstrap over common seeds."
)


def _ci(rows: list[dict[str, Any]], name: str, strata: bool = False) -> dict[str, Any]:
    if name == "win":
        wins, n = sum(int(r["win"]) for r in rows), len(rows)
        lo, hi = wilson_interval(wins, n)
        return {"mean": wins / n if n else 0.0, "ci95": [lo, hi], "interval": "wilson"}
    mean, lo, hi = seed_bootstrap_ci(
        [metric_value(r, name) for r in rows],
        [r["seed"] for r in rows],
        [r["env"] for r in rows] if strata else None,
    )
    return {"mean": mean, "ci95": [lo, hi]}


def ordered(values) -> list:
    return list(dict.fromkeys(values))


def summarize(rows: list[dict[str, Any]], config_order: list[str] | None = None) -> dict[str, Any]:
    """Numbers of the report: ``{"envs": {env: {"metrics": [...], "configs": {...}, "paired": [...]}}}``."""
    configs = ordered([*(config_order or []), *(r["config"] for r in rows)])
    out: dict[str, Any] = {"episodes": len(rows), "envs": {}}
    for env in ordered(r["env"] for r in rows):
        env_rows = [r for r in rows if r["env"] == env]
        names = metric_names(env_rows)
        per: dict[str, Any] = {}
        for c in configs:
            rs = [r for r in env_rows if r["config"] == c]
            if not rs:
                continue
            per[c] = {
                "episodes": len(rs),
                "seeds": len({r["seed"] for r in rs}),
                **{n: _ci(rs, n) for n in names},
                "tokens": float(np.mean([r["prompt_tokens"] + r["completion_tokens"] for r in rs])),
                "cost_usd": float(np.mean([r["cost_usd"] for r in rs])),
                "wall_s": float(np.mean([r["wall_s"] for r in rs])),
                "steps": float(np.mean([r["steps"] for r in rs])),
                "skill_errors": int(sum(r["skill_errors"] for r in rs)),
            }
        present = [c for c in configs if c in per]
        paired = [paired_comparison(env_rows, c, present[0], names) for c in present[1:]]
        out["envs"][env] = {"metrics": names, "configs": per, "paired": paired}
    return out


def paired_comparison(rows: list[dict[str, Any]], a: str, b: str, names: list[str]) -> dict[str, Any]:
    """``a`` minus ``b`` on the (env, seed) pairs both have: mean difference with a seed-bootstrap CI,
    and for the win rate the discordant seeds with an exact sign test."""
    ra = {(r["env"], r["seed"]): r for r in rows if r["config"] == a}
    rb = {(r["env"], r["seed"]): r for r in rows if r["config"] == b}
    common = sorted(set(ra) & set(rb), key=lambda k: (k[0], k[1]))
    out: dict[str, Any] = {"a": a, "b": b, "pairs": len(common)}
    for n in names:
        d = [metric_value(ra[k], n) - metric_value(rb[k], n) for k in common]
        mean, lo, hi = seed_bootstrap_ci(d, [k[1] for k in common], [k[0] for k in common])
        out[n] = {"diff": mean, "ci95": [lo, hi]}
    a_only = sum(ra[k]["win"] and not rb[k]["win"] for k in common)
    b_only = sum(rb[k]["win"] and not ra[k]["win"] for k in common)
    out["wins_only_a"], out["wins_only_b"], out["sign_test_p"] = a_only, b_only, sign_test(a_only, b_only)
    return out


def _fmt(name: str, m: dict[str, Any]) -> str:
    scale, unit = (100.0, "") if name == "win" else (1.0, "")
    lo, hi = m["ci95"]
    return f"{m['mean'] * scale:.1f}{unit} [{lo * scale:.1f}, {hi * scale:.1f}]"


def label(name: str) -> str:
    return "win %" if name == "win" else name


def markdown(summary: dict[str, Any], title: str) -> str:
    """The report as markdown (what ``compass runs show`` prints)."""
    lines = [f"# {title}", "", f"{summary['episodes']} episodes. {CI_NOTE}", ""]
    for env, e in summary["envs"].items():
        names = e["metrics"]
        lines += [f"## {env}", ""]
        head = [
            "config",
            "episodes",
            *map(label, names),
            "tokens/ep",
            "$/ep",
            "wall s/ep",
            "steps",
            "skill errors",
        ]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for c, m in e["configs"].items():
            cells = [c, str(m["episodes"]), *(_fmt(n, m[n]) for n in names)]
            wall = (
                "-" if np.isnan(m["wall_s"]) else f"{m['wall_s']:.2f}"
            )  # a plain run has no per-episode time
            cells += [f"{m['tokens']:.0f}", f"{m['cost_usd']:.4f}", wall, f"{m['steps']:.1f}"]
            cells += [str(m["skill_errors"])]
            lines.append("| " + " | ".join(cells) + " |")
        if e["paired"]:
            base = e["paired"][0]["b"]
            lines += ["", f"Paired on common seeds, each configuration minus `{base}`:", ""]
            wins = "win" in names
            head = ["config", "pairs", *(f"Δ {label(n)}" for n in names)]
            # which side each count is: "A / B" left the reader to guess
            head += [f"seeds won only by it / only by `{base}`", "sign test p"] if wins else []
            lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for p in e["paired"]:
                cells = [p["a"], str(p["pairs"])]
                for n in names:
                    s = 100.0 if n == "win" else 1.0
                    d = p[n]
                    cells.append(f"{d['diff'] * s:+.1f} [{d['ci95'][0] * s:+.1f}, {d['ci95'][1] * s:+.1f}]")
                if wins:
                    cells += [f"{p['wins_only_a']} / {p['wins_only_b']}", f"{p['sign_test_p']:.3g}"]
                lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot_png(summary: dict[str, Any], title: str) -> bytes:
    """Bars per configuration with 95% CI whiskers, one panel per environment."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    envs = list(summary["envs"].items())
    n_cfg = max(len(e["configs"]) for _, e in envs)
    fig, axes = plt.subplots(
        len(envs),
        1,
        figsize=(max(6.0, 0.9 * n_cfg + 2), 3.6 * len(envs)),
        squeeze=False,
        constrained_layout=True,
    )
    for ax, (env, e) in zip(axes[:, 0], envs, strict=True):
        configs, names = list(e["configs"]), e["metrics"]
        width = 0.8 / len(names)
        x = np.arange(len(configs))
        for k, n in enumerate(names):
            s = 100.0 if n == "win" else 1.0
            means = np.array([e["configs"][c][n]["mean"] for c in configs]) * s
            lo = np.array([e["configs"][c][n]["ci95"][0] for c in configs]) * s
            hi = np.array([e["configs"][c][n]["ci95"][1] for c in configs]) * s
            ax.bar(x + (k - (len(names) - 1) / 2) * width, means, width, label=label(n))
            ax.errorbar(
                x + (k - (len(names) - 1) / 2) * width,
                means,
                yerr=[means - lo, hi - means],
                fmt="none",
                ecolor="k",
                capsize=3,
            )
        ax.set_xticks(
            x, configs, rotation=30 if n_cfg > 3 else 0, ha="right" if n_cfg > 3 else "center", fontsize=8
        )
        ax.set_ylabel("%" if len(names) > 1 or names[0] != "win" else "win rate (%)")
        seeds = max(m["seeds"] for m in e["configs"].values())
        ax.set_title(f"{env} ({seeds} seeds, 95% CI)", fontsize=10)
        if len(names) > 1:
            ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=11)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def write_report(
    run_dir: str | Path, rows: list[dict[str, Any]], title: str, config_order=None
) -> dict[str, Any]:
    """Write ``summary.json``, ``report.md`` and ``report.png`` (each atomically); return the summary."""
    run_dir = Path(run_dir)
    summary = summarize(rows, config_order)
    summary["title"] = title
    atomic_write_bytes(run_dir / "report.png", plot_png(summary, title))
    atomic_write_text(run_dir / "report.md", markdown(summary, title) + "\n![results](report.png)\n")
    atomic_write_json(run_dir / "summary.json", summary)
    return summary
