"""Play an ALEM skill file as the whole team on tuning seeds and count the coal and iron sync sites
an agent could mine with the crew (docs/alem.md "The mining sync sites, second pass: coal and
iron"): per episode, agent-steps on the overworld with a coal or iron sync site in view, split by
day/night, by whether the viewer's pickaxe mines it (and its role), by whether the agents the site
needs (``mine_sync_need``) are within 7 tiles of it, and the episodes where that happened by day;
who held which pickaxe; the COORD_MINE_COAL/IRON unlocks and coal/iron collected. Tuning seeds only.

    PYTHONPATH=$PWD python benchmarks/alem_mine_sync_diag.py compass/games/alem/skills/alem_role_policy.py \\
        --seeds 0-47 --steps 1500 --out /tmp/mine13/diag.json
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, write_out  # noqa: E402

ORES = ("coal", "iron")


def record(
    path: Path, seeds: list[int], steps: int, reach: int = 7, full: bool = False, anyone: bool = False
) -> list[dict]:
    """One record per seed for the skill file at ``path`` played by every agent. Also counts, per
    role, the agent-steps where the policy's action is ``mine_sync_step(d, reach, ores=coal/iron,
    full, anyone)`` while it names a site (the library's block acting, when the file has it)."""
    from compass.games.alem.skill_api import can_mine, distance, mine_sync_need, mine_sync_step, team_alive
    from compass.games.alem.skill_api.knowledge import obs_data_from_view
    from compass.games.alem.skill_api.survival import shelter_time

    policy = load_policy(path)
    recs: list[dict] = [{"seed": s, "c": Counter(), "pickaxe": {}, "first_day_crewed": {}} for s in seeds]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        r = recs[i]
        c = r["c"]
        for v, act in zip(views, actions, strict=True):
            d = obs_data_from_view(v)
            if not d.alive:
                continue
            if d.level == 0 and mine_sync_step(d, reach, ores=ORES, full=full, anyone=anyone) == act:
                c[f"block_{d.role}"] += 1
            pk = d.inventory.get("pickaxe", 0)
            if pk:
                r["pickaxe"].setdefault(f"{d.role}:{pk}", d.step)
            if d.level != 0:
                continue
            day = not (shelter_time(d, 120, 265) or d.light < 0.35)
            for s in d.coord_sites:
                if s.kind != "sync" or s.construction or s.name not in ORES:
                    continue
                xy = (s.x, s.y)
                tier = "soft" if s.soft else "hard"
                key = f"{s.name}_{tier}{s.required}"
                c[f"seen_{key}_{'day' if day else 'night'}"] += 1
                if not can_mine(d, s.name):
                    continue
                c[f"minable_{key}_{d.role}_{'day' if day else 'night'}"] += 1
                near = sum(distance((t.x, t.y), xy) <= reach for t in team_alive(d))
                if day and near >= mine_sync_need(s) - 1 and distance(d.position, xy) <= reach:
                    c[f"crewed_{key}_{d.role}"] += 1
                    r["first_day_crewed"].setdefault(key, d.step)

    trackers = play([(policy, s) for s in seeds], steps, on_step=on_step)
    for r, tr in zip(recs, trackers, strict=True):
        ach = set(tr.score().team_achievements)
        r["unlocks"] = sorted(
            a
            for a in ach
            if a.startswith(
                ("COORD_MINE_COAL", "COORD_MINE_IRON", "COLLECT_COAL", "COLLECT_IRON", "MAKE_STONE_PICKAXE")
            )
        )
        r["c"] = dict(r["c"])
    return recs


def main(argv: list[str] | None = None) -> None:
    p = dev_parser(__doc__, seeds="0-47", variants=False)
    p.add_argument("--full", action="store_true", help="count the block with mine_sync_step(full=True)")
    p.add_argument("--anyone", action="store_true", help="count the block with mine_sync_step(anyone=True)")
    args = parse_dev_args(p, argv)
    recs = record(Path(args.skill_file), args.seeds, args.steps, full=args.full, anyone=args.anyone)
    tot: Counter = Counter()
    eps: Counter = Counter()
    for r in recs:
        tot.update(r["c"])
        eps.update({k: 1 for k in r["c"]})
        eps.update({f"pickaxe {k}": 1 for k in r["pickaxe"]})
        eps.update({f"unlock {k}": 1 for k in r["unlocks"]})
    out = {
        "seeds": args.seeds,
        "steps": args.steps,
        "agent_steps": dict(tot),
        "episodes": dict(eps),
        "per_seed": recs,
    }
    write_out(args.out, out)
    for k in sorted(eps):
        print(f"{k:50s} episodes {eps[k]:3d}  agent-steps {tot.get(k, '')}")
    for ore in ORES:
        for who in ("", "_miner"):
            n = sum(any(k.startswith(f"crewed_{ore}") and k.endswith(who) for k in r["c"]) for r in recs)
            print(f"episodes with a {ore} site crewed by day (viewer{who or ' of any role'}): {n}")


if __name__ == "__main__":
    main()
