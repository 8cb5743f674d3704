"""Play an ALEM skill file as the whole team on tuning seeds and record what happens below the
overworld (docs/alem.md "Level 2: ..."): per episode, the step the team reaches each level, the
kills on level 1 (eight clear it and open its ladder down) and when the eighth came, whether any
living agent knew a ``ladder down`` on level 1 (when first, how far), every death below with its
level, step and cause, and, on a cleared level 1, what the agents did (counts of agent-steps with
a known ladder down, Descend chosen, food and drink at 3 or less); and (docs/alem.md "Below the
overworld, second pass") every achievement unlocked below (step, level, role), the living agent-steps
below per level and role with counts of what they did and had there, and the gap table: per level-1
and level-2 achievement, the teams on level 1 that got it and missed it. Tuning seeds only
(docs/alem.md "Seed protocol").

    PYTHONPATH=$PWD python benchmarks/alem_deeper_diag.py compass/games/alem/skills/alem_role_policy.py \\
        --seeds 0-47 --steps 3000 --out /tmp/deeper/diag.json
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, write_out  # noqa: E402


def record(path: Path, seeds: list[int], steps: int) -> list[dict]:
    """One record per seed for the skill file at ``path`` played by every agent."""
    from compass.games.alem.skill_api import distance, nearest
    from compass.games.alem.skill_api.knowledge import obs_data_from_view
    from compass.games.alem.skill_api.survival import DESCEND

    policy = load_policy(path)
    recs: list[dict] = [
        {
            "seed": s,
            "first_step": {},
            "kills": Counter(),
            "cleared_step": {},
            "deaths": [],
            "cleared": Counter(),
            "gained_below": [],
            "alive_below": Counter(),
            "seen_below": Counter(),
        }
        for s in seeds
    ]
    held: dict[tuple[int, int], frozenset[str]] = {}

    def on_step(i: int, views: list, actions: list[int]) -> None:
        r = recs[i]
        for j, v in enumerate(views):
            d = obs_data_from_view(v)
            if not d.alive:
                continue
            prev = held.get((i, j))
            held[(i, j)] = d.achievements
            if d.level >= 1:
                r["first_step"].setdefault(str(d.level), d.step)
                _below_step_counts(r, d, j, prev, actions[j])
                ladder = nearest(d, "ladder down")
                key = f"ladder_down_known_l{d.level}"
                if ladder is not None and key not in r:
                    r[key] = {"step": d.step, "agent": j, "dist": distance(d.position, ladder)}
                if d.level_cleared:
                    c = r["cleared"]
                    c[f"l{d.level}_agent_steps"] += 1
                    c[f"l{d.level}_ladder_known"] += ladder is not None
                    c[f"l{d.level}_descend_chosen"] += actions[j] == DESCEND
                    c[f"l{d.level}_food_le3"] += d.food <= 3
                    c[f"l{d.level}_drink_le3"] += d.drink <= 3

    def on_result(i: int, res) -> None:
        r, info = recs[i], res.info
        for ev in info.get("events", []):
            if ev.get("kind") == "kill":
                lv = ev["level"]
                r["kills"][str(lv)] += 1
                if r["kills"][str(lv)] == 8:
                    r["cleared_step"][str(lv)] = info["timestep"]
        for j, cause in enumerate(info["deaths"]):
            if cause is not None:
                r["deaths"].append(
                    {"agent": j, "step": info["timestep"], "level": info["level"], "cause": cause}
                )
        if res.done:
            r["end_step"] = info["timestep"]
            r["end_level"] = info["level"]

    trackers = play([(policy, s) for s in seeds], steps, on_step=on_step, on_result=on_result)
    for r, tr in zip(recs, trackers, strict=True):
        sc = tr.score().as_dict()
        r["team_total_pct"] = sc["team_total_pct"]
        r["below_achievements"] = sorted(
            a
            for a in sc["team_achievements"]
            if a.split("_")[0] in ("ENTER", "OPEN", "DRINK", "FIND", "FIRE", "DEFEAT", "EAT")
        )
        r["team_achievements"] = sorted(sc["team_achievements"])
        r["kills"], r["cleared"] = dict(r["kills"]), dict(r["cleared"])
        r["alive_below"], r["seen_below"] = dict(r["alive_below"]), dict(r["seen_below"])
    return recs


def _below_step_counts(r: dict, d, j: int, prev: frozenset[str] | None, action: int) -> None:
    """Count one living agent-step below the overworld into ``r``: alive per level and role, the
    library's night window (``shelter_time``) and walled in (``enclosed``), the action chosen, what
    it has in view (chests, fountains, snails, orcs), what it holds (potions, bow, arrows), and every
    achievement it unlocked since its last step (with step, level and role)."""
    from compass.games.alem.names import action_name
    from compass.games.alem.skill_api import enclosed, nearest
    from compass.games.alem.skill_api.below import held_potions
    from compass.games.alem.skill_api.survival import shelter_time

    lv = d.level
    alive, seen = r["alive_below"], r["seen_below"]
    alive[f"l{lv}"] += 1
    alive[f"l{lv}_{d.role}"] += 1
    seen[f"l{lv}_night_window"] += shelter_time(d, 120, 265)
    seen[f"l{lv}_enclosed"] += enclosed(d)
    seen[f"l{lv}_act_{action_name(action, j)}"] += 1
    seen[f"l{lv}_drink_le4"] += d.drink <= 4
    seen[f"l{lv}_food_le4"] += d.food <= 4
    seen[f"l{lv}_chest_known"] += nearest(d, "chest") is not None
    seen[f"l{lv}_fountain_known"] += nearest(d, "fountain") is not None
    seen[f"l{lv}_potion_held"] += bool(held_potions(d))
    seen[f"l{lv}_bow_held"] += d.inventory.get("bow", 0) >= 1
    seen[f"l{lv}_arrows_held"] += d.inventory.get("arrows", 0) >= 1
    for name in sorted({m.name for m in d.mobs if m.dist <= 8}):
        seen[f"l{lv}_{d.role}_near_{name}"] += 1
    if prev is not None:
        for a in sorted(d.achievements - prev):
            r["gained_below"].append(
                {"step": d.step, "level": lv, "agent": j, "role": d.role, "achievement": a}
            )


#: Below-the-overworld achievements (3 points each, 0.80 team Total %), by the level that has them.
BELOW_ACHIEVEMENTS = {
    1: (
        "ENTER_DUNGEON",
        "OPEN_CHEST",
        "DRINK_POTION",
        "FIND_BOW",
        "FIRE_BOW",
        "EAT_SNAIL",
        "DEFEAT_ORC_SOLIDER",
        "DEFEAT_ORC_MAGE",
    ),
    2: ("ENTER_GNOMISH_MINES", "DEFEAT_GNOME_WARRIOR", "DEFEAT_GNOME_ARCHER", "EAT_BAT"),
}


def gap_table(recs: list[dict]) -> list[dict]:
    """Per below-the-overworld achievement, over the teams that reached level 1: how many unlocked it
    (by any agent, at any time), how many missed it, and the missed team Total % per such team
    (weight 3 of 376) summed: where the points a team on level 1 could still take are."""
    from compass.games.alem.names import ACHIEVEMENT_WEIGHTS, ACHIEVEMENTS

    down = [r for r in recs if "1" in r["first_step"]]
    rows = []
    for lv, names in BELOW_ACHIEVEMENTS.items():
        for a in names:
            w = ACHIEVEMENT_WEIGHTS[ACHIEVEMENTS.index(a)]
            got = sum(a in r["team_achievements"] for r in down)
            rows.append(
                {
                    "achievement": a,
                    "level": lv,
                    "weight": w,
                    "teams_on_l1": len(down),
                    "got": got,
                    "missed": len(down) - got,
                    "missed_pct_per_team": round(100 * w / 376, 2),
                    "missed_pct_sum": round(100 * w * (len(down) - got) / 376, 2),
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__, seeds="0-47", variants=False)
    a = parse_dev_args(p, argv)
    recs = record(Path(a.skill_file), a.seeds, a.steps)
    gaps = gap_table(recs)
    write_out(a.out, {"episodes": recs, "gaps": gaps})
    down = [r for r in recs if "1" in r["first_step"]]
    print(
        f"{len(down)} of {len(recs)} teams reached level 1; "
        f"{sum('1' in r['cleared_step'] for r in down)} cleared it; "
        f"{sum('2' in r['first_step'] for r in recs)} reached level 2"
    )
    for r in down:
        deaths = [(x["step"], x["level"], x["cause"]) for x in r["deaths"] if x["level"] >= 1]
        print(
            r["seed"],
            r["first_step"],
            "kills",
            r["kills"],
            "cleared",
            r["cleared_step"],
            "ladder",
            r.get("ladder_down_known_l1"),
            "end",
            r.get("end_step"),
            r.get("end_level"),
            f"{r['team_total_pct']:.2f}",
            "deaths below",
            deaths,
            r["cleared"] or "",
        )
    print("achievement, weight, teams on level 1 that got it / missed it, missed team Total % summed")
    for g in gaps:
        print(
            f"{g['achievement']:22s} {g['weight']} {g['got']:3d} / {g['missed']:3d}  {g['missed_pct_sum']:6.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
