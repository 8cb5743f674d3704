"""Why teams do not reach level 1: where the overworld's ladder down lies, who sees it and when,
who is armed and when, and what an armed agent that knows the ladder does instead of walking there
(docs/alem.md "Down armed, third pass"). Tuning seeds only.

    python benchmarks/alem_ladder_diag.py compass/games/alem/skills/alem_role_policy.py \\
        --seeds 0-47 --steps 3000 --out /tmp/ladder/diag_main.json

Per episode: the ladder row's tiles (from the env's own state, which no agent sees) and their
walking distance from the spawn, the share of the overworld that is ``path`` (the only block a
ladder down is placed on), the team Total % and the first step on level 1. Per agent: the first step
it knew a ladder down, the first step it saw a ``path`` tile, the first step it held a pickaxe and
a sword and the first step ``armed_for_descent`` held, the share of the overworld it had seen at
steps 1,000 and at its end; and per armed agent-step with a ladder known, whether its action was
the walk to it (the library's ``descent_step(..., dig=True)``), in all, at energy 4 or more
(``armed_for_descent`` ignores energy) and asleep, with per agent the days it was found asleep so
and the days it walked, and the nearest it came to the ladder (docs/alem.md "Down armed, fourth
pass").

The relay counts (docs/alem.md "The ladder relayed"): who saw the ladder down first and when, which
agent's Descend took the team down and when it had first seen the ladder (the gap), and per
agent-step on the overworld: ``blind_armed``, an agent for which ``armed_for_descent`` holds knows
no ladder while a living teammate on the overworld knows one (``blind_armed_fit``: and that
teammate is fit for the descent itself, ``armed_for_descent`` without the tools;
``blind_armed_tools``: it holds a pickaxe and sword too); ``knower_unarmed``, an agent that knows
the ladder is not armed while a teammate is.

``--oracle-ladder`` is a bound, not a policy: every agent starts the episode remembering the
overworld's ladder tiles (written into its map memory from the env's state before anyone acts), as
if it had seen them. Played beside the same seeds without it, the difference is what finding the
ladder at no cost at all would be worth to the skill file (docs/alem.md, round 19).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, write_out  # noqa: E402


def _ladder_tiles(st):
    """Row and column indices of the overworld's ladder-down tiles in the env's numpy state."""
    import numpy as np

    from compass.games.alem.names import ITEM_NAMES

    ladder = next(i for i, name in ITEM_NAMES.items() if name == "ladder down")
    return np.nonzero(np.asarray(st.item_map)[0] == ladder)


def ladder_truth(seed: int, steps: int) -> dict:
    """The overworld's ladders down, the spawn, and the share of ``path`` tiles, read from the
    env's state after ``reset(seed)`` (no agent sees this: it says where the ladder was)."""
    import numpy as np

    from compass.games.alem.env import make_alem
    from compass.games.alem.names import BLOCK_NAMES

    env = make_alem("hard", max_steps=steps, text=False, preset="rl")
    env.reset(seed)
    st = env._np  # the numpy copy of the JAX state
    ladders = np.transpose(_ladder_tiles(st)).tolist()
    spawn = np.asarray(st.player_position)[0].tolist()
    blocks = np.asarray(st.map)[0]
    dist = min(abs(r - spawn[0]) + abs(c - spawn[1]) for r, c in ladders) if ladders else None
    return {
        "ladders": ladders,
        "spawn": spawn,
        "ladder_dist": dist,
        "path_share": round(float((blocks == BLOCK_NAMES.index("path")).mean()), 3),
    }


def tell_ladder(env) -> int:
    """Write the overworld's ladder-down tiles, as the env's state has them, into every agent's map
    memory (the oracle of ``--oracle-ladder``); returns how many tiles."""
    import numpy as np

    st = env._np
    rows, cols = _ladder_tiles(st)
    blocks = np.asarray(st.map)[0][rows, cols]
    items = np.asarray(st.item_map)[0][rows, cols]
    for mem in env._memories:
        mem.update(0, rows, cols, blocks, np.zeros(len(rows), np.int16), step=0, items=items)
    return len(rows)


def main(argv: list[str] | None = None) -> list[dict]:
    from compass.games.alem.names import BLOCK_NAMES
    from compass.games.alem.skill_api.actions import descend
    from compass.games.alem.skill_api.knowledge import distance, nearest, obs_data_from_view
    from compass.games.alem.skill_api.progress import armed_for_descent, descent_step

    p = dev_parser(__doc__, seeds="0-47", variants=False)
    p.add_argument(
        "--oracle-ladder", action="store_true", help="every agent starts knowing the ladder (a bound)"
    )
    a = parse_dev_args(p, argv)
    policy = load_policy(a.skill_file)
    path_id = BLOCK_NAMES.index("path")
    recs = [{"seed": s, **ladder_truth(s, a.steps), "agents": {}, "level1": None} for s in a.seeds]
    walks = [Counter() for _ in a.seeds]
    relays = [Counter() for _ in a.seeds]
    last_descend: list[tuple[int, int] | None] = [None for _ in a.seeds]
    down = descend()

    def on_step(i: int, views: list, actions: list[int]) -> None:
        r = recs[i]
        ds = [obs_data_from_view(v) for v in views]
        _relay_counts(ds, relays[i])
        for k, d in enumerate(ds):
            ag = r["agents"].setdefault(str(k), {"role": d.role})
            if not d.alive:
                ag.setdefault("dead", d.step)
                continue
            ag.pop("dead", None)
            if d.level >= 1:
                if r["level1"] is None and last_descend[i] is not None:
                    r["descender"] = last_descend[i][1]
                r["level1"] = r["level1"] or d.step
                continue
            if actions[k] == down:
                last_descend[i] = (d.step, k)
            mem = d.memory
            if mem is not None:
                if "path" not in ag and (mem.blocks[0] == path_id).any():
                    ag["path"] = d.step
                seen = round(float((mem.blocks[0] >= 0).mean()), 3)
                ag["seen_end"] = seen
                if d.step == 1000:
                    ag["seen_1000"] = seen
            inv = d.inventory
            if nearest(d, "ladder down") is not None:
                ag.setdefault("ladder", d.step)
            if inv.get("pickaxe", 0) >= 1 and inv.get("sword", 0) >= 1:
                ag.setdefault("tools", d.step)
            if armed_for_descent(d, from_step=300):
                ag.setdefault("armed", d.step)
                if nearest(d, "ladder down") is not None:
                    # The library's walk since the dig (docs/alem.md "Down armed, third pass").
                    walk = descent_step(d, from_step=300, min_energy=0, seek_from=d.max_steps, dig=True)
                    walked = actions[k] == walk
                    walks[i]["armed_ladder_steps"] += 1
                    walks[i]["walked"] += walked
                    if d.sleeping or d.resting:
                        walks[i]["asleep_steps"] += 1
                        # A morning lost asleep: per agent and day, counted once.
                        ag.setdefault("asleep_days", [])
                        if d.step // 300 not in ag["asleep_days"]:
                            ag["asleep_days"].append(d.step // 300)
                    ag["walk_days"] = sorted(
                        set(ag.get("walk_days", [])) | ({d.step // 300} if walked else set())
                    )
                    ag["near"] = min(ag.get("near", 999), distance(d.position, nearest(d, "ladder down")))
                    # Energy below 4: asleep or about to be (armed_for_descent ignores energy).
                    if d.energy >= 4:
                        walks[i]["rested_steps"] += 1
                        walks[i]["rested_walked"] += walked

    told = (lambda i, env: tell_ladder(env)) if a.oracle_ladder else None
    trackers = play([(policy, s) for s in a.seeds], a.steps, on_step=on_step, on_reset=told)
    for r, w, rl, tr in zip(recs, walks, relays, trackers, strict=True):
        sc = tr.score().as_dict()
        r["team_total_pct"] = sc["team_total_pct"]
        r["walks"] = dict(w)
        r["relay"] = _relay_summary(r, rl)
        r["deaths"] = [(ag["steps_survived"], ag["death_cause"]) for ag in sc["agents"]]
    write_out(a.out, recs)
    for r in recs:
        ags = list(r["agents"].values())
        print(
            f"seed {r['seed']:3d} total {r['team_total_pct']:5.1f} level1 {r['level1']} "
            f"ladder_dist {r['ladder_dist']} seen_ladder {_first(ags, 'ladder')} armed {_first(ags, 'armed')} "
            f"path {_first(ags, 'path')} seen@1000 {[x.get('seen_1000') for x in ags]} walks {r['walks']}"
        )
    print(relay_report(recs))
    return recs


def _relay_counts(ds: list, c: Counter) -> None:
    """One step's relay counts (see the module docstring) from the team's observations."""
    from compass.games.alem.skill_api.knowledge import nearest
    from compass.games.alem.skill_api.progress import armed_for_descent

    up = [d for d in ds if d.alive and d.level == 0]
    knows = {d.agent_id: nearest(d, "ladder down") is not None for d in up}
    armed = {d.agent_id: armed_for_descent(d, from_step=300) for d in up}
    for d in up:
        mates = [t for t in up if t.agent_id != d.agent_id]
        knowers = [t for t in mates if knows[t.agent_id]]
        if armed[d.agent_id] and not knows[d.agent_id] and knowers:
            c["blind_armed"] += 1
            c.setdefault("blind_armed_first", d.step)
            if any(armed_for_descent(t, from_step=300, pickaxe=0, sword=0) for t in knowers):
                c["blind_armed_fit"] += 1
            if any(t.inventory.get("pickaxe", 0) >= 1 and t.inventory.get("sword", 0) >= 1 for t in knowers):
                c["blind_armed_tools"] += 1
        if knows[d.agent_id] and not armed[d.agent_id] and any(armed[t.agent_id] for t in mates):
            c["knower_unarmed"] += 1


def _relay_summary(r: dict, c: Counter) -> dict:
    """The episode's relay record: the first sighting by anyone, the descender's, the gap, the counts."""
    seen = {int(k): a["ladder"] for k, a in r["agents"].items() if "ladder" in a}
    first = min(seen.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    k = r.get("descender")
    out = {
        "first_seen": None if first is None else first[1],
        "first_seer": None if first is None else first[0],
        "descender": k,
        "descender_seen": seen.get(k),
        "gap": None if first is None or k not in seen else seen[k] - first[1],
    }
    out.update(c)
    return out


def relay_report(recs: list[dict]) -> str:
    """The relay counts over the episodes, as lines (docs/alem.md "The ladder relayed")."""
    rel = [r["relay"] for r in recs]
    seen = [r for r in recs if r["relay"]["first_seen"] is not None]
    down = [r for r in recs if r["level1"] is not None]
    seen_down = [r for r in seen if r["level1"] is not None]
    other = [r for r in seen_down if r["relay"]["descender"] != r["relay"]["first_seer"]]
    gaps = sorted(r["relay"]["gap"] for r in other if r["relay"]["gap"] is not None)
    blind = [r for r in recs if r["relay"].get("blind_armed")]
    lines = [
        f"episodes {len(recs)}: a ladder seen in {len(seen)}, the team down in {len(down)}, "
        f"seen and never down in {len(seen) - len(seen_down)}",
        f"down by another agent than the first seer: {len(other)}, gaps (steps) {gaps}",
        f"blind armed (armed, no ladder known, a teammate knows one): {len(blind)} episodes "
        f"({sum(1 for r in blind if r['level1'] is None)} never down), "
        f"{sum(x.get('blind_armed', 0) for x in rel)} agent-steps, "
        f"{sum(x.get('blind_armed_fit', 0) for x in rel)} with a fit knower, "
        f"{sum(x.get('blind_armed_tools', 0) for x in rel)} with a knower holding tools",
        f"knower unarmed while a teammate is armed: {sum(1 for x in rel if x.get('knower_unarmed'))} "
        f"episodes, {sum(x.get('knower_unarmed', 0) for x in rel)} agent-steps",
    ]
    return "\n".join(lines)


def _first(agents: list[dict], key: str) -> int | None:
    """The earliest step any agent's record holds for ``key``."""
    return min((a[key] for a in agents if key in a), default=None)


if __name__ == "__main__":
    main()
