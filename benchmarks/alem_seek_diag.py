"""Which descents a ladder-seeking variant gains and loses against a reference skill file, and what
its seeking agents did (docs/alem.md "Down armed, fifth pass"). Tuning seeds only.

    python benchmarks/alem_seek_diag.py main=compass/games/alem/skills/alem_role_policy.py \\
        seek=/tmp/seek/alem_role_policy.py --seeds 0-47 --steps 3000 --out /tmp/seek.json

The first variant is the reference. Per variant and episode: the team Total %, the first step on
level 1, the agent-steps on which an agent's action was ``seek_ladder_step(d, from_step, near=)``'s
(the reference's too: there it says how often its own choice coincided), and every death: step,
level, day step, the hostile creatures in view one step before, and whether the agent had sought
within the 30 steps before. Prints the episodes whose Total % or level-1 arrival changed, and the
overworld deaths from ``from_step`` by day and by night.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, write_out  # noqa: E402

RECENT = 30  # a death this many steps after a seeking step counts as the seek's
DUSK = 120


def _episode() -> dict:
    return {
        "level1": None,
        "seek_steps": [0, 0, 0],
        "last_seek": [None] * 3,
        "prev": [None] * 3,
        "deaths": [],
    }


def main(argv: list[str] | None = None) -> dict:
    """Play every variant on every seed; write and return ``{label: [row per seed]}``."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view
    from compass.games.alem.skill_api.progress import seek_ladder_step
    from compass.games.alem.skill_api.survival import time_of_day

    p = dev_parser(__doc__, seeds="0-47")
    p.add_argument("--from-step", type=int, default=1200, help="seek_ladder_step's from_step")
    p.add_argument("--near", default="path", help='seek_ladder_step\'s near ("none" for the plain frontier)')
    a = parse_dev_args(p, argv)
    near = None if a.near == "none" else a.near
    jobs = [(load_policy(path), s) for _, path in a.variants for s in a.seeds]
    recs = [_episode() for _ in jobs]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        r = recs[i]
        for k, v in enumerate(views):
            d = obs_data_from_view(v)
            if d.level >= 1 and r["level1"] is None:
                r["level1"] = d.step
            prev = r["prev"][k]
            if not d.alive:
                if prev is not None:  # this step it died (a revived agent dies again later)
                    last = r["last_seek"][k]
                    r["deaths"].append(
                        {
                            "agent": k,
                            "step": d.step,
                            "level": prev.level,
                            "day_step": time_of_day(d),
                            "in_view": sorted({m.name for m in prev.mobs if m.hostile}),
                            "sought_recently": last is not None and d.step - last <= RECENT,
                        }
                    )
                r["prev"][k] = None
                continue
            r["prev"][k] = d
            seek = seek_ladder_step(d, from_step=a.from_step, near=near)
            if seek is not None and seek == actions[k]:
                r["seek_steps"][k] += 1
                r["last_seek"][k] = d.step

    trackers = play(jobs, a.steps, on_step=on_step)
    out: dict = {label: [] for label, _ in a.variants}
    labels = [label for label, _ in a.variants for _ in a.seeds]
    for label, (_, seed), t, r in zip(labels, jobs, trackers, recs, strict=True):
        score = t.score().as_dict()
        out[label].append(
            {
                "seed": seed,
                "team_total_pct": score["team_total_pct"],
                "level1": r["level1"],
                "seek_steps": r["seek_steps"],
                "deaths": r["deaths"],
            }
        )
    write_out(a.out, out)
    ref_label = a.variants[0][0]
    for label, rows in out.items():
        late = [x for row in rows for x in row["deaths"] if x["step"] >= a.from_step and x["level"] == 0]
        night = sum(x["day_step"] >= DUSK for x in late)
        print(
            f"[{label}] team Total % {sum(r['team_total_pct'] for r in rows) / len(rows):.2f}, "
            f"on level 1 {sum(r['level1'] is not None for r in rows)} of {len(rows)}, "
            f"seeking agent-steps {sum(sum(r['seek_steps']) for r in rows)}, overworld deaths from step "
            f"{a.from_step} {len(late)} ({night} at night), of them within {RECENT} steps of a seek "
            f"{sum(x['sought_recently'] for x in late)}"
        )
        if label == ref_label:
            continue
        for ref, row in zip(out[ref_label], rows, strict=True):
            if ref["level1"] != row["level1"] or abs(ref["team_total_pct"] - row["team_total_pct"]) > 1e-9:
                print(
                    f"[{label}]   seed {row['seed']}: level 1 at {ref['level1']} -> {row['level1']}, "
                    f"{ref['team_total_pct']:.2f} -> {row['team_total_pct']:.2f}, seeking {row['seek_steps']}"
                )
    return out


if __name__ == "__main__":
    main()
