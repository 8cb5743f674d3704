"""How much of the map a team sees, when it first sees what it looks for, and how much freedom its
chores leave to choose a tile toward unseen ground (docs/alem.md "Chores toward unseen ground").
Tuning seeds only.

    python benchmarks/alem_explore_diag.py compass/games/alem/skills/alem_role_policy.py \\
        --seeds 0-47 --steps 1800 --out /tmp/explore/diag_main.json

Per episode: the share of the overworld each agent has seen (its own memory) and the team has seen
(the union) at each ``--at`` step; the first step any agent had seen a ladder down, coal, iron,
diamond, water. Every ``--every`` steps, per living agent on the overworld: whether its action was a
chore, ``act_on`` the ``nearest(d, block, solo=True)`` tile of a resource block (diamond, iron,
coal, stone, tree, as the library's goals go); for a chore, how many other tiles of that block lie at
the same distance or one or two steps farther, and whether ``nearest_frontier`` (slack 0 and 1)
would pick another tile; whether its action was ``explore(d)``'s, and whether ``explore(d,
wide=4.0)`` aims elsewhere.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, write_out  # noqa: E402

CHORES = ("diamond", "iron", "coal", "stone", "tree")  # the library's goals, first to last
FIRSTS = ("ladder down", "coal", "iron", "diamond", "water")
SLACKS = (0, 1, 2)


def chore_of(d, action: int) -> tuple[str, tuple[int, int]] | None:
    """The resource block and tile whose ``act_on`` the action was (the first of :data:`CHORES` the
    agent's pickaxe mines)."""
    from compass.games.alem.skill_api.knowledge import can_mine, nearest
    from compass.games.alem.skill_api.paths import act_on

    for block in CHORES:
        if not can_mine(d, block):
            continue
        tile = nearest(d, block, solo=True)
        if tile is not None and act_on(d, tile) == action:
            return block, tile
    return None


def alternatives(d, block: str, tile: tuple[int, int], slack: int) -> int:
    """Other tiles of ``block`` an agent could gather alone within ``slack`` steps of ``tile``'s distance."""
    from compass.games.alem.skill_api.knowledge import _approachable, _coordination_tile, distance

    reach = distance(d.position, tile) + slack
    return sum(
        1
        for p in d.memory.known(block)
        if p != tile
        and distance(d.position, p) <= reach
        and _approachable(d, p)
        and not _coordination_tile(d, p)
    )


def main(argv: list[str] | None = None) -> list[dict]:
    """Play the skill file on every seed; write and return one record per seed."""
    import numpy as np

    from compass.games.alem.skill_api.frontier import nearest_frontier, wide_frontier
    from compass.games.alem.skill_api.knowledge import obs_data_from_view
    from compass.games.alem.skill_api.paths import explore

    p = dev_parser(__doc__, seeds="0-47", variants=False)
    p.add_argument(
        "--at",
        default="300,900,1800",
        help="steps at which the seen shares are taken (the view after that many)",
    )
    p.add_argument("--every", type=int, default=3, help="look at chores and exploring every this many steps")
    a = parse_dev_args(p, argv)
    at = [int(x) for x in a.at.split(",")]
    policy = load_policy(a.skill_file)
    recs = [{"seed": s, "seen": {}, "team_seen": {}, "first": {}, "level1": None} for s in a.seeds]
    counts = [Counter() for _ in a.seeds]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        r, c = recs[i], counts[i]
        ds = [obs_data_from_view(v) for v in views]
        mems = [d.memory for d in ds if d.memory is not None]
        step = ds[0].step
        if step in at and mems:
            r["seen"][str(step)] = [round(float((m.blocks[0] >= 0).mean()), 3) for m in mems]
            union = np.logical_or.reduce([m.blocks[0] >= 0 for m in mems])
            r["team_seen"][str(step)] = round(float(union.mean()), 3)
        for name in FIRSTS:
            if name not in r["first"] and any(len(m._found(name)[0]) and m.level == 0 for m in mems):
                r["first"][name] = step
        for k, d in enumerate(ds):
            if d.level >= 1:
                r["level1"] = r["level1"] or d.step
            if step % a.every or not d.alive or d.sleeping or d.resting or d.level != 0 or d.memory is None:
                continue
            c["agent_steps"] += 1
            found = chore_of(d, actions[k])
            if found is not None:
                block, tile = found
                c["chore"] += 1
                c[f"chore_{block}"] += 1
                for s in SLACKS:
                    c[f"alt{s}"] += alternatives(d, block, tile, s) > 0
                for s in (0, 1):
                    c[f"changed{s}"] += nearest_frontier(d, block, slack=s, solo=True) != tile
                continue
            if explore(d, random.Random(0)) == actions[k]:
                c["explore"] += 1
                c["explore_aimed_elsewhere"] += wide_frontier(d, 4.0) != wide_frontier(d, 0.0)

    trackers = play([(policy, s) for s in a.seeds], a.steps, on_step=on_step)
    for r, c, tr in zip(recs, counts, trackers, strict=True):
        r["team_total_pct"] = tr.score().as_dict()["team_total_pct"]
        r["counts"] = dict(c)
    write_out(a.out, recs)
    for line in report(recs, at):
        print(line)
    return recs


def report(recs: list[dict], at: list[int]) -> list[str]:
    """The printed summary: seen shares, first sightings, chores' freedom, exploring."""
    import statistics

    n = len(recs)
    lines = []
    for s in map(str, at):
        agents = [x for r in recs for x in r["seen"].get(s, [])]
        team = [r["team_seen"][s] for r in recs if s in r["team_seen"]]
        if agents:
            lines.append(
                f"step {s}: seen per agent mean {statistics.mean(agents):.3f}, team union mean "
                f"{statistics.mean(team):.3f} ({len(team)} of {n} episodes running)"
            )
    for name in FIRSTS:
        steps = [r["first"][name] for r in recs if name in r["first"]]
        med = statistics.median(steps) if steps else None
        lines.append(f"first seen {name}: in {len(steps)} of {n} episodes, median step {med}")
    tot = Counter()
    for r in recs:
        tot.update(r["counts"])
    chore = tot["chore"] or 1
    lines.append(
        f"sampled overworld agent-steps {tot['agent_steps']}: chores {tot['chore']} "
        f"({', '.join(b + ' ' + str(tot['chore_' + b]) for b in CHORES)}), explore {tot['explore']}"
    )
    lines.append(
        "chores with another tile at the same distance {:.1%}, within +1 {:.1%}, within +2 {:.1%}; "
        "nearest_frontier picks another tile at slack 0 {:.1%}, slack 1 {:.1%}".format(
            *(tot[f"alt{s}"] / chore for s in SLACKS), *(tot[f"changed{s}"] / chore for s in (0, 1))
        )
    )
    lines.append(
        f"explore steps aimed elsewhere with wide=4: {tot['explore_aimed_elsewhere']} of {tot['explore']}"
    )
    return lines


if __name__ == "__main__":
    main()
