"""Play variants of an ALEM skill file as the whole team on the same tuning seeds, one after the
other in one process, and say which episodes changed (docs/alem.md "Below the overworld").

Each variant is ``LABEL=PATH`` (a skill file whose name matches its function). Episodes run
batched, as ``bench_alem.py`` plays them. Per episode it records the team and agent-mean Total %,
the team's achievements, survival and causes of death, the first step on each level below the
overworld, and per-agent-step counts there: a chest in view, a potion held, a bow held. The first
variant is the reference: for every later one the episodes whose score or survival differ are
listed with the achievements gained and lost, and a one-sided paired t-test on the team Total %
(``compass.eval.stats.paired_test``: the mean difference, its 90 % CI, up / down counts, the verdict
at 5 % per side) says whether 24 seeds can tell the two apart at all. ``--against FILE`` takes the
reference from an earlier run's report (its first variant, or ``FILE:LABEL``) on the same seeds,
steps and preset instead of replaying it: traces are reproducible, so its rows are the ones a
replay would give, and several people can judge against one measured reference.

    python benchmarks/alem_variants.py main=/tmp/v0/alem_role_policy.py \\
        v4=compass/games/alem/skills/alem_role_policy.py --seeds 0-23 --steps 3000 --out /tmp/v.json
    python benchmarks/alem_variants.py v5=/tmp/v5/alem_role_policy.py --against /tmp/v.json:main \
        --seeds 0-23 --steps 3000 --out /tmp/v5.json
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, summary, write_out  # noqa: E402


def play_variant(path: Path, seeds: list[int], steps: int, preset: str, **hooks) -> list[dict]:
    """One row per seed for the skill file at ``path`` played by every agent; ``hooks``
    (``on_reset``, ``on_result``) go to :func:`alem_dev.play` (a bound changes the game there)."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    policy = load_policy(path)
    below = [Counter() for _ in seeds]
    first: list[dict[str, int]] = [{} for _ in seeds]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        for d in (obs_data_from_view(v) for v in views):
            if d.alive and d.level >= 1:
                first[i].setdefault(f"level_{d.level}", d.step)
                below[i][f"agent_steps_level_{d.level}"] += 1
                below[i]["chest_in_view"] += any(b.name == "chest" for b in d.blocks)
                below[i]["potion_held"] += d.inventory.get("potions", 0) > 0
                below[i]["bow_held"] += d.inventory.get("bow", 0) > 0

    trackers = play([(policy, s) for s in seeds], steps, preset=preset, on_step=on_step, **hooks)
    return [
        tr.score().as_dict() | {"seed": seed, "first_step_below": f, "below": dict(c)}
        for seed, tr, f, c in zip(seeds, trackers, first, below, strict=True)
    ]


def changed(ref: list[dict], rows: list[dict]) -> list[str]:
    """A line per episode whose team Total % or survival differs from the reference's."""
    out = []
    for a, b in zip(ref, rows, strict=True):
        sa, sb = [x["steps_survived"] for x in a["agents"]], [x["steps_survived"] for x in b["agents"]]
        if a["team_total_pct"] == b["team_total_pct"] and sa == sb:
            continue
        ga, gb = set(a["team_achievements"]), set(b["team_achievements"])
        out.append(
            f"seed {a['seed']}: {a['team_total_pct']:.2f} -> {b['team_total_pct']:.2f} "
            f"+{sorted(gb - ga)} -{sorted(ga - gb)} survived {sa} -> {sb}"
        )
    return out


def paired_line(ref: list[dict], rows: list[dict]) -> str:
    """The paired comparison of team Total % per seed against the reference, as one line."""
    from compass.eval.stats import paired_test

    a = [r["team_total_pct"] for r in ref]
    b = [r["team_total_pct"] for r in rows]
    t = paired_test(b, a)
    up = sum(y > x for x, y in zip(a, b, strict=True))
    down = sum(y < x for x, y in zip(a, b, strict=True))
    lo, hi = t["ci"]
    return (
        f"paired: {t['mean_diff']:+.2f} team Total % [{lo:+.2f}, {hi:+.2f}] "
        f"({t['ci_level']:.0%} CI), {up} up / {down} down, sd {t['sd_diff']:.2f}, "
        f"p_better {t['p_better']:.2f}: {t['verdict']}"
    )


def comparison_lines(label: str, ref: list[dict], rows: list[dict]) -> list[str]:
    """What a run prints of a variant against its reference: the changed episodes, then the paired
    line (when there are two seeds or more to pair)."""
    lines = [f"[{label}]   {line}" for line in changed(ref, rows)]
    if len(rows) >= 2:
        lines.append(f"[{label}] {paired_line(ref, rows)}")
    return lines


def reference_rows(spec: str, seeds: list[int], steps: int, preset: str) -> tuple[str, list[dict]]:
    """The label and rows of ``FILE`` (its first variant) or ``FILE:LABEL`` from an earlier report.

    A report played on more seeds gives the rows of this run's seeds (an episode does not depend
    on the others played beside it). Refuses one played on other steps or preset, or lacking any of
    this run's seeds: its rows would not pair.
    """
    path, _, label = spec.partition(":")
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"--against {spec}: cannot read the report: {e}") from None
    for key, want in (("steps", steps), ("preset", preset)):
        if report.get(key) != want:
            raise SystemExit(f"--against {spec}: played with {key}={report.get(key)!r}, this run {want!r}")
    missing = sorted(set(seeds) - set(report.get("seeds", [])))
    if missing:
        raise SystemExit(
            f"--against {spec}: not played on seeds {missing[:5]} ({len(missing)} of this run's)"
        )
    variants = report.get("variants", {})
    label = label or next(iter(variants), "")
    if label not in variants:
        raise SystemExit(f"--against {spec}: no variant {label!r} (it has {sorted(variants)})")
    by_seed = {r["seed"]: r for r in variants[label]["rows"]}
    return label, [by_seed[s] for s in seeds]


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__, seeds="0-23")
    p.add_argument("--against", help="FILE or FILE:LABEL: the reference rows from an earlier report")
    p.add_argument("--preset", default="rl", choices=("rl", "harness"))
    a = parse_dev_args(p, argv)
    seeds = a.seeds
    report: dict = {"seeds": seeds, "steps": a.steps, "preset": a.preset, "variants": {}}
    ref = None
    if a.against:
        label, ref = reference_rows(a.against, seeds, a.steps, a.preset)
        report["against"] = {"report": a.against, "label": label}
        print(f"[{label}] reference from {a.against}: {json.dumps(summary(ref))}", flush=True)
    for label, path in a.variants:
        cpu = time.process_time()
        rows = play_variant(path, seeds, a.steps, a.preset)
        s = summary(rows) | {"cpu_seconds": time.process_time() - cpu}
        report["variants"][label] = {"path": str(path), "rows": rows, "summary": s}
        print(f"[{label}] {json.dumps(s)}", flush=True)
        if ref is None:
            ref = rows
        else:
            for line in comparison_lines(label, ref, rows):
                print(line, flush=True)
        write_out(a.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
