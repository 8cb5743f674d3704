"""Play ALEM skill variants as the whole team on tuning seeds and record why agents fall asleep
where they do and how they die (docs/alem.md "Nights, fifth pass: sleepers and starvation").

Every variant (a skill file; its file name must match its function name) plays every seed, all
episodes batched in one process (one sandbox lane and one vmapped env per episode), so variants
are compared on the same seeds in the same run. Per agent it keeps the last 200 steps of its
state; per sleep onset (the step an agent falls asleep) it records the time of day, vitals,
whether it was walled in (``enclosed``), the nearest hostile creature and the nearest teammate; per death the cause, whether it was asleep, the onset it slept from and, for
starvation and dehydration, what the last 200 steps held (forager alive, requests open, food); at
the day steps in ``EVENING`` every living agent's state (fed? walled in? stone, pickaxe?), for the
eighth pass (docs/alem.md "Nights, eighth pass: into the night fed and sealed"); and a census of
every living overworld agent-step in the library's night window (walled in, or out with or without
a shelter plan, awake or asleep, how far the plan's first tile lies: "Judging a variant, fifteenth
round").

    python benchmarks/alem_nights_diag.py main=compass/games/alem/skills/alem_role_policy.py \\
        v1=/tmp/v1/alem_role_policy.py --seeds 0-23 --steps 3000 --out /tmp/nights.json
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict, deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, summary, write_out  # noqa: E402

HISTORY = 200  # steps of per-agent state kept for a death's report
#: Day steps at which every living agent's state is recorded (eighth pass: fed and sealed at dusk?):
#: the last daylight hours before the library's dusk (120), dusk, and the night.
EVENING = (90, 110, 120, 140, 170, 200, 240)


def snapshot(d, action: int) -> dict:
    """One agent's state on one step, in the few numbers a death report needs."""
    from compass.games.alem.skill_api import distance, enclosed, hostile_mobs, nearest, team_alive

    mobs = hostile_mobs(d, 12)
    mates = team_alive(d)
    ripe = nearest(d, "ripe_plant")
    water = nearest(d, "water")
    return {
        "t": d.step,
        "tod": d.step % 300,
        "light": round(d.light, 2),
        "hp": d.health,
        "food": d.food,
        "drink": d.drink,
        "energy": d.energy,
        "sleeping": d.sleeping,
        "enclosed": enclosed(d),
        "sealed": enclosed(d, walls_only=True),
        "mob": min((m.dist for m in mobs), default=None),
        "mob_kind": mobs[0].name if mobs else None,
        # Seventh pass (zombie deaths): how many creatures press the agent, and who stands by it.
        "zombies": sum(m.name == "zombie" and m.dist <= 6 for m in mobs),
        "hostiles": sum(m.dist <= 6 for m in mobs),
        # Hard elites (coord 2): a lone agent cannot hurt them.
        "elites": sum(m.coord == 2 and m.dist <= 6 for m in mobs),
        "pos": d.position,
        "mates_near": sum(distance(d.position, (t.x, t.y)) <= 4 for t in mates),
        "sword": d.inventory.get("sword", 0),
        "mate": min((distance(d.position, (t.x, t.y)) for t in mates), default=None),
        "forager": any(t.role == "forager" for t in mates) or d.role == "forager",
        "request": d.my_request,
        "ripe": distance(d.position, ripe) if ripe is not None else None,
        # Eighth pass (into the night fed): how far the water is when the agent is out at night.
        "water": distance(d.position, water) if water is not None else None,
        "stone": d.inventory.get("stone", 0),
        "pickaxe": d.inventory.get("pickaxe", 0),
        "level": d.level,
        "action": action,
    }


def night_census_key(d) -> str | None:
    """Where a living overworld agent stands in the library's night window (``night_out``): ``sealed``
    (walled in), else ``asleep in the open``, else the distance band to the first tile of its shelter
    plan (``bunker_plan``, the base's else its own, as ``bunker_step`` chooses: ``plan 0-3 tiles`` ...),
    or ``no plan``. ``None`` outside the window."""
    from compass.games.alem.skill_api import distance, enclosed, night_out
    from compass.games.alem.skill_api.survival import bunker_plan

    if not night_out(d):
        return None
    if enclosed(d):
        return "sealed"
    if d.sleeping:
        return "asleep in the open"
    plan = bunker_plan(d)
    if plan is None:
        return "no plan"
    far = distance(d.position, plan[1][0])
    return "plan 0-3 tiles" if far <= 3 else "plan 4-10 tiles" if far <= 10 else "plan 11+ tiles"


def left_shelter(h: list[dict]) -> dict | None:
    """The first step after the last stretch walled in (``sealed``) in a dead agent's history: when it
    came out, how healthy it was and how far the nearest creature stood (None if never sealed)."""
    last = max((k for k, s in enumerate(h) if s.get("sealed")), default=None)
    if last is None or last + 1 >= len(h):
        return None
    s = h[last + 1]
    return {
        "t": s["t"],
        "tod": s["tod"],
        "hp": s["hp"],
        "food": s["food"],
        "drink": s["drink"],
        "energy": s["energy"],
        "mob": s["mob"],
        "steps_to_death": h[-1]["t"] - s["t"],
    }


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__, seeds="0-5")
    p.add_argument("--difficulty", default="hard")
    p.add_argument("--preset", default="rl")
    a = parse_dev_args(p, argv)
    seeds = a.seeds

    from compass.games.alem.names import SLEEP
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    policies = {}
    for name, file in a.variants:
        policies[name] = load_policy(file)
    jobs = [(name, seed) for name in policies for seed in seeds]
    # Per job, per agent: its last HISTORY steps, its last sleep onset, its role.
    hist = [defaultdict(lambda: deque(maxlen=HISTORY)) for _ in jobs]
    onsets: list[dict[int, dict]] = [{} for _ in jobs]
    roles: list[dict[int, str]] = [{} for _ in jobs]
    sleeps: list[dict] = []
    evenings: list[dict] = []  # every living agent at the day steps in EVENING (eighth pass)
    deaths: list[dict] = []
    revived: list[Counter] = [Counter() for _ in jobs]  # per job: times each agent was revived
    census: dict[str, Counter] = {name: Counter() for name in policies}  # night agent-steps by state

    def on_step(i: int, views: list, actions: list[int]) -> None:
        for j, v in enumerate(views):
            d = obs_data_from_view(v)
            if not d.alive:
                continue
            roles[i][j] = d.role
            key = night_census_key(d)
            if key is not None:
                census[jobs[i][0]][key] += 1
            snap = snapshot(d, actions[j])
            hist[i][j].append(snap)
            if snap["tod"] in EVENING:
                evenings.append(
                    {"variant": jobs[i][0], "seed": jobs[i][1], "agent": j, "role": d.role} | snap
                )
            if not d.sleeping and actions[j] == SLEEP:
                onset = {"variant": jobs[i][0], "seed": jobs[i][1], "agent": j, "role": d.role} | snap
                onsets[i][j] = onset
                sleeps.append(onset)

    def on_result(i: int, res) -> None:
        for j, back in enumerate(res.info.get("revived") or ()):
            revived[i][j] += bool(back)
        for j, cause in enumerate(res.info.get("deaths") or []):
            if cause is None:
                continue
            h = list(hist[i][j])
            last = h[-1] if h else {}
            deaths.append(
                {
                    "variant": jobs[i][0],
                    "seed": jobs[i][1],
                    "agent": j,
                    "role": roles[i].get(j, ""),
                    "cause": cause,
                    # A teammate revived it before: this is not its first death (the tracker's).
                    "revivals_before": revived[i][j],
                    "last": last,
                    "onset": onsets[i].get(j) if last.get("sleeping") else None,
                    "forager_alive_steps": sum(s["forager"] for s in h),
                    "request_steps": Counter(s["request"] for s in h),
                    "food_min_step": next((s["t"] for s in h if s["food"] <= 0), None),
                    "drink_min_step": next((s["t"] for s in h if s["drink"] <= 0), None),
                    "ripe_seen": sum(s["ripe"] is not None for s in h),
                    "left_shelter": left_shelter(h),
                    "trail": h[-40:],
                }
            )

    cpu = time.process_time()
    trackers = play(
        [(policies[name], seed) for name, seed in jobs],
        a.steps,
        a.difficulty,
        a.preset,
        on_step=on_step,
        on_result=on_result,
    )
    rows = []
    for (name, seed), tracker in zip(jobs, trackers, strict=True):
        rows.append(tracker.score().as_dict() | {"variant": name, "seed": seed})
    report = {}
    for name in policies:
        mine = [r for r in rows if r["variant"] == name]
        report[name] = summary(mine) | {
            "per_seed": {r["seed"]: round(r["team_total_pct"], 2) for r in mine},
            "sleep_onsets": len([s for s in sleeps if s["variant"] == name]),
            "sleep_onsets_unsealed": len([s for s in sleeps if s["variant"] == name and not s["enclosed"]]),
            "night_census": dict(census[name].most_common()),
        }
        print(name, json.dumps({k: v for k, v in report[name].items() if k != "per_seed"}), flush=True)
        print("  per seed", report[name]["per_seed"], flush=True)
    write_out(
        a.out,
        {
            "seeds": seeds,
            "steps": a.steps,
            "rows": rows,
            "summary": report,
            "sleeps": sleeps,
            "evenings": evenings,
            "deaths": deaths,
            "cpu_seconds": time.process_time() - cpu,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
