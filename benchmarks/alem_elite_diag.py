"""Play an ALEM skill file as the whole team on Hard tuning seeds and count the elite creatures and
large cows the team meets and what it does with them (docs/alem.md "Hunting together").

Per step, the creatures with ``coord`` > 0 that any living agent sees (an elite zombie, skeleton or
orc, a large cow), each once per step (by its id): agent-steps, by level, day or night (light below
0.35 or the library's night hours 120-264 of the 300-step day), ``coord`` (1 soft, 2 hard) and
``agents_required``; how many living agents stand within 4 tiles of it, next to it, and next to it
facing it; how many of them Do on that step (a hit). ``met`` counts the creatures (per episode, by
id and level) that ever had ``agents_required`` living agents within 4 tiles, ``adjacent`` those that
ever had them next to it, ``together`` those hit by that many agents on one step. It also scores
every episode (team Total %, the COORD_ELITE_* and COORD_LARGE_PASSIVE_KILL unlocks).

    python benchmarks/alem_elite_diag.py /tmp/elite/main/alem_role_policy.py --seeds 0-47 \\
        --steps 3000 --out /tmp/elite/diag.json
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, write_out  # noqa: E402

from compass.games.alem.skill_api.coordination import HUNT_UNLOCKS  # noqa: E402
from compass.games.alem.skill_api.survival import time_of_day  # noqa: E402


def count_step(r: dict, ds: list, actions: list[int]) -> None:
    """Add one step's counts for the living agents' observations ``ds`` (``actions`` by agent id)."""
    from compass.games.alem.names import DO
    from compass.games.alem.skill_api import distance
    from compass.games.alem.skill_api.survival import shelter_time

    c: Counter = r["counts"]
    seen = {}
    for d in ds:
        for m in d.mobs:
            if m.coord > 0:
                seen.setdefault(m.id, m)
    if not seen:
        return
    d0 = ds[0]
    night = d0.light < 0.35 or shelter_time(d0, 120, 265)
    for m in seen.values():
        xy = (m.x, m.y)
        cls = "large_cow" if m.kind == "passive" else f"elite_{m.kind}"
        key = f"{cls}_L{d0.level}_{'night' if night else 'day'}"
        need = max(2, m.agents_required)
        near = sum(distance(d.position, xy) <= 4 for d in ds)
        adj = [d for d in ds if distance(d.position, xy) == 1]
        facing = [d for d in adj if tuple(d.facing_xy) == xy]
        hits = sum(actions[d.agent_id] == DO for d in facing)
        c[f"{key}_steps"] += 1
        c[f"{key}_need_near4"] += near >= need
        c[f"{key}_need_adjacent"] += len(adj) >= need
        c[f"{key}_need_facing"] += len(facing) >= need
        c[f"{key}_hit_alone"] += 0 < hits < need
        c[f"{key}_hit_together"] += hits >= need
        ident = f"{d0.level}:{m.id}"
        info = r["mobs"].setdefault(
            ident, {"class": cls, "coord": m.coord, "need": need, "first": d0.step, "night": night}
        )
        # The call's diagnosis (docs/alem.md "Hunting together, second pass"): how long it stays in
        # anyone's view, how far it wanders, and where the team is when it is first seen.
        info["seen_steps"] = info.get("seen_steps", 0) + 1
        info["day_steps"] = info.get("day_steps", 0) + (not night)
        box = info.setdefault("box", [m.x, m.y, m.x, m.y])
        box[:] = [min(box[0], m.x), min(box[1], m.y), max(box[2], m.x), max(box[3], m.y)]
        if "first_team" not in info:
            info["first_team"] = sorted(distance(d.position, xy) for d in ds)
            info["first_hour"] = time_of_day(d0)
            info["first_alive"] = len(ds)
        far = sorted(distance(d.position, xy) for d in ds)
        if len(far) >= need and night is False:
            info["min_day_need_dist"] = min(info.get("min_day_need_dist", 99), far[need - 1])
        info["max_near"] = max(info.get("max_near", 0), near)
        info["max_adjacent"] = max(info.get("max_adjacent", 0), len(adj))
        info["max_hits"] = max(info.get("max_hits", 0), hits)
        info["met"] = info.get("met", False) or near >= need
        info["last"] = d0.step
        info["min_health"] = min(info.get("min_health", m.health), m.health)


def record(path: Path, seeds: list[int], steps: int) -> list[dict]:
    """One record per seed for the skill file at ``path`` played by every agent."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    policy = load_policy(path)
    recs: list[dict] = [{"seed": s, "counts": Counter(), "mobs": {}} for s in seeds]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        ds = [obs_data_from_view(v) for v in views]
        count_step(recs[i], [d for d in ds if d.alive and not d.sleeping], actions)

    trackers = play([(policy, s) for s in seeds], steps, on_step=on_step)
    for r, tr in zip(recs, trackers, strict=True):
        sc = tr.score().as_dict()
        r["team_total_pct"] = sc["team_total_pct"]
        r["unlocks"] = sorted(a for a in sc["team_achievements"] if a in HUNT_UNLOCKS.values())
        r["counts"] = dict(r["counts"])
    return recs


def totals(recs: list[dict]) -> dict:
    """Sums over episodes: the per-step counts, and per creature class the creatures seen, met
    (``agents_required`` agents within 4 tiles), with enough agents adjacent, hit together."""
    c: Counter = Counter()
    for r in recs:
        c.update(r["counts"])
        for m in r["mobs"].values():
            k = f"{m['class']}_coord{m['coord']}_need{m['need']}"
            c[f"mobs_{k}"] += 1
            c[f"met_{k}"] += m.get("met", False)
            c[f"adjacent_{k}"] += m.get("max_adjacent", 0) >= m["need"]
            c[f"together_{k}"] += m.get("max_hits", 0) >= m["need"]
        for a in r["unlocks"]:
            c[f"episodes_{a}"] += 1
    return dict(sorted(c.items()))


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__, seeds="0-47", variants=False)
    a = parse_dev_args(p, argv)
    recs = record(Path(a.skill_file), a.seeds, a.steps)
    out = {"seeds": a.seeds, "steps": a.steps, "totals": totals(recs), "episodes": recs}
    write_out(a.out, out)
    for k, v in out["totals"].items():
        print(f"{k:50s} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
