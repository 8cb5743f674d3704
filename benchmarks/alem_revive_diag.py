"""Play ALEM skill variants as the whole team on tuning seeds and record what happens around each
revival (docs/alem.md "Feeding the revived").

Per revival: the revived agent's health, food, drink and energy on its first step back, its role,
its reviver's food and drink, whether it was given food or drink (or ate or drank) within 20
steps, and what killed it next and how soon. Per episode: revivals per agent, and the agent-steps
spent reviving (a living agent whose action is what ``revive_step`` asks for while a body lies in
reach). Tuning seeds only (docs/alem.md "Seed protocol").

    python benchmarks/alem_revive_diag.py main=compass/games/alem/skills/alem_role_policy.py \\
        --seeds 0-11 --steps 3000 --out /tmp/revive.json
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, summary, write_out  # noqa: E402

FED_WINDOW = 20  # steps after a revival in which a gain of food or drink counts as "fed"


def play_variant(path: Path, seeds: list[int], steps: int, reach: int) -> dict:
    """Revival records and per-episode counts for the skill file at ``path`` on ``seeds``."""
    from compass.games.alem.skill_api import downed_teammates, revive_step
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    policy = load_policy(path)
    last: list[list] = [[None] * 3 for _ in seeds]  # latest ObsData per agent
    open_: list[dict[int, dict]] = [{} for _ in seeds]  # agent -> its latest revival record
    records: list[dict] = []
    reviving = Counter()

    def on_step(i: int, views: list, actions: list[int]) -> None:
        for j, v in enumerate(views):
            d = obs_data_from_view(v)
            last[i][j] = d
            rec = open_[i].get(j)
            if rec is not None and d.alive and d.step - rec["t"] <= FED_WINDOW:
                rec["max_food"] = max(rec["max_food"], d.food)
                rec["max_drink"] = max(rec["max_drink"], d.drink)
                rec["slept"] = rec["slept"] or d.sleeping
            if d.alive and downed_teammates(d, reach):
                step = revive_step(d, reach=reach)
                if step is not None and step == actions[j]:
                    reviving[seeds[i]] += 1

    def on_result(i: int, res) -> None:
        info = res.info
        for j, died in enumerate(info["deaths"]):
            rec = open_[i].pop(j, None) if died is not None else None
            if rec is not None:
                rec["next_death"] = died
                rec["after"] = info["timestep"] - rec["t"]
        for j, back in enumerate(info["revived"]):
            if not back:
                continue
            d = obs_data_from_view(res.views[j])
            by = [k for k in range(3) if k != j and last[i][k] is not None and last[i][k].alive]
            rec = {
                "seed": seeds[i],
                "agent": j,
                "role": d.role,
                "t": info["timestep"],
                "health": d.health,
                "food": d.food,
                "drink": d.drink,
                "energy": d.energy,
                "level": d.level,
                "mates_food": [last[i][k].food for k in by],
                "mates_drink": [last[i][k].drink for k in by],
                "max_food": d.food,
                "max_drink": d.drink,
                "slept": False,
                "next_death": None,
                "after": None,
            }
            records.append(rec)
            open_[i][j] = rec

    trackers = play([(policy, s) for s in seeds], steps, on_step=on_step, on_result=on_result)
    rows = [tr.score().as_dict() | {"seed": s} for s, tr in zip(seeds, trackers, strict=True)]
    return {"rows": rows, "revivals": records, "reviving_steps": dict(reviving)}


def report(out: dict) -> dict:
    """The figures the docs quote: revivals by vitals, what killed the revived next and how soon."""
    recs = out["revivals"]
    again = [r for r in recs if r["next_death"] is not None]
    starving = [r for r in recs if r["food"] <= 1 or r["drink"] <= 1]
    per_agent = Counter((r["seed"], r["agent"]) for r in recs)
    return {
        "revivals": len(recs),
        "revived_agents": len(per_agent),
        "revived_again_share": round(len(again) / len(recs), 3) if recs else None,
        "max_revivals_one_agent": max(per_agent.values(), default=0),
        "back_with_food_or_drink_le_1": len(starving),
        "back_with_energy_le_1": sum(r["energy"] <= 1 for r in recs),
        "fed_within_window": sum(r["max_food"] > r["food"] or r["max_drink"] > r["drink"] for r in recs),
        "slept_within_window": sum(r["slept"] for r in recs),
        "next_death": dict(Counter(r["next_death"] for r in again).most_common()),
        "next_death_after_median": statistics.median([r["after"] for r in again]) if again else None,
        "next_death_within_50": sum(r["after"] <= 50 for r in again),
        "next_death_of_starving": dict(
            Counter(r["next_death"] for r in starving if r["next_death"]).most_common()
        ),
        "reviving_agent_steps": sum(out["reviving_steps"].values()),
        "revived_role": dict(Counter(r["role"] for r in recs).most_common()),
    }


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__)
    p.add_argument("--reach", type=int, default=30, help="revive_reach of the policy")
    a = parse_dev_args(p, argv)
    seeds = a.seeds
    result: dict = {"seeds": seeds, "steps": a.steps, "variants": {}}
    for label, path in a.variants:
        cpu = time.process_time()
        out = play_variant(path, seeds, a.steps, a.reach)
        out["summary"] = summary(out["rows"]) | report(out) | {"cpu_seconds": time.process_time() - cpu}
        result["variants"][label] = out
        print(f"[{label}] {json.dumps(out['summary'])}", flush=True)
        write_out(a.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
