"""Play an ALEM skill file as the whole team on tuning seeds and record what happens below the
overworld (docs/alem.md "Level 2: ..."): per episode, the step the team reaches each level, the
kills on level 1 (eight clear it and open its ladder down) and when the eighth came, whether any
living agent knew a ``ladder down`` on level 1 (when first, how far), every death below with its
level, step and cause, and, on a cleared level 1, what the agents did (counts of agent-steps with
a known ladder down, Descend chosen, food and drink at 3 or less). Tuning seeds only (docs/alem.md "Seed protocol").

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
        }
        for s in seeds
    ]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        r = recs[i]
        for j, v in enumerate(views):
            d = obs_data_from_view(v)
            if not d.alive:
                continue
            if d.level >= 1:
                r["first_step"].setdefault(str(d.level), d.step)
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
        r["kills"], r["cleared"] = dict(r["kills"]), dict(r["cleared"])
    return recs


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__, seeds="0-47", variants=False)
    a = parse_dev_args(p, argv)
    recs = record(Path(a.skill_file), a.seeds, a.steps)
    write_out(a.out, recs)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
