"""Play ALEM skill variants as the whole team on tuning seeds and record why agents fall asleep
where they do and how they die (docs/alem.md "Nights, fifth pass: sleepers and starvation").

Every variant (a skill file; its file name must match its function name) plays every seed, all
episodes batched in one process (one sandbox lane and one vmapped env per episode), so variants
are compared on the same seeds in the same run. Per agent it keeps the last 200 steps of its
state; per sleep onset (the step an agent falls asleep) it records the time of day, vitals,
whether it was walled in (``enclosed``), the nearest hostile creature and the nearest teammate; per death the cause, whether it was asleep, the onset it slept from and, for
starvation and dehydration, what the last 200 steps held (forager alive, requests open, food).

    python benchmarks/alem_nights_diag.py main=compass/games/alem/skills/alem_role_policy.py \\
        v1=/tmp/v1/alem_role_policy.py --seeds 0-23 --steps 3000 --out /tmp/nights.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compass.games.alem.protocol import TUNING_SEEDS  # noqa: E402

HISTORY = 200  # steps of per-agent state kept for a death's report


def parse_seeds(text: str) -> list[int]:
    """``"0-3,7"`` -> ``[0, 1, 2, 3, 7]``."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def snapshot(d, action: int) -> dict:
    """One agent's state on one step, in the few numbers a death report needs."""
    from compass.games.alem.skill_api import distance, enclosed, hostile_mobs, nearest, team_alive

    mobs = hostile_mobs(d, 12)
    mates = team_alive(d)
    ripe = nearest(d, "ripe_plant")
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
        "mob": min((m.dist for m in mobs), default=None),
        "mob_kind": mobs[0].name if mobs else None,
        "mate": min((distance(d.position, (t.x, t.y)) for t in mates), default=None),
        "forager": any(t.role == "forager" for t in mates) or d.role == "forager",
        "request": d.my_request,
        "ripe": distance(d.position, ripe) if ripe is not None else None,
        "stone": d.inventory.get("stone", 0),
        "pickaxe": d.inventory.get("pickaxe", 0),
        "level": d.level,
        "action": action,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variants", nargs="+", help="NAME=path/to/alem_role_policy.py")
    p.add_argument("--seeds", default="0-5", help="tuning seeds (0-999): '0-23' or '0,3,5'")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--difficulty", default="hard")
    p.add_argument("--preset", default="rl")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    seeds = parse_seeds(a.seeds)
    if any(s not in TUNING_SEEDS for s in seeds):
        raise SystemExit("--seeds: tuning seeds must lie in 0-999 (docs/alem.md 'Seed protocol')")

    from compass.games.alem.env import make_alem
    from compass.games.alem.metrics import EpisodeTracker
    from compass.games.alem.names import SLEEP
    from compass.games.alem.skill_api.knowledge import obs_data_from_view
    from compass.sandbox import SkillExecutor, compile_skill
    from compass.skills.library import header_length
    from compass.skills.skill import parse_skill_source

    policies = {}
    for spec in a.variants:
        name, _, file = spec.partition("=")
        path = Path(file)
        text = path.read_text()
        skill = parse_skill_source(text, "alem", path)
        policies[name] = compile_skill(
            skill.code, skill.name, "alem", filename=str(path), line_offset=header_length(text)
        )
    jobs = [(name, seed) for name in policies for seed in seeds]
    envs = [make_alem(a.difficulty, max_steps=a.steps, text=False, preset=a.preset) for _ in jobs]
    executor = SkillExecutor("compass.games.alem.skill_api", seed=[s for _, s in jobs])
    trackers = [EpisodeTracker() for _ in envs]
    n = envs[0].n_agents
    hist = [[deque(maxlen=HISTORY) for _ in range(n)] for _ in jobs]
    onsets: list[list[dict | None]] = [[None] * n for _ in jobs]
    roles: list[list[str]] = [[""] * n for _ in jobs]
    sleeps: list[dict] = []
    deaths: list[dict] = []
    views = [e.reset(s) for e, (_, s) in zip(envs, jobs, strict=True)]
    running = list(range(len(envs)))
    cpu = time.process_time()
    while running:
        results = executor.run_batch(
            [(policies[jobs[i][0]], v) for i in running for v in views[i]],
            [i for i in running for _ in range(n)],
        )
        inputs = [e.step_idle() for e in envs]
        for k, i in enumerate(running):
            actions = [r.action for r in results[n * k : n * (k + 1)]]
            inputs[i] = envs[i].step_begin(actions)
            for j, v in enumerate(views[i]):
                d = obs_data_from_view(v)
                if not d.alive:
                    continue
                roles[i][j] = d.role
                snap = snapshot(d, actions[j])
                hist[i][j].append(snap)
                if not d.sleeping and actions[j] == SLEEP:
                    onset = {"variant": jobs[i][0], "seed": jobs[i][1], "agent": j, "role": d.role} | snap
                    onsets[i][j] = onset
                    sleeps.append(onset)
        outs = envs[0].step_batch(inputs)
        still = []
        for i in running:
            res = envs[i].step_end(outs[i])
            trackers[i].update(res.info, res.outcome)
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
                        "role": roles[i][j],
                        "cause": cause,
                        "last": last,
                        "onset": onsets[i][j] if last.get("sleeping") else None,
                        "forager_alive_steps": sum(s["forager"] for s in h),
                        "request_steps": Counter(s["request"] for s in h),
                        "food_min_step": next((s["t"] for s in h if s["food"] <= 0), None),
                        "drink_min_step": next((s["t"] for s in h if s["drink"] <= 0), None),
                        "ripe_seen": sum(s["ripe"] is not None for s in h),
                        "trail": h[-40:],
                    }
                )
            views[i] = res.views
            if not res.done:
                still.append(i)
        running = still

    rows = []
    for (name, seed), tracker in zip(jobs, trackers, strict=True):
        rows.append(tracker.score().as_dict() | {"variant": name, "seed": seed})
    summary = {}
    for name in policies:
        mine = [r for r in rows if r["variant"] == name]
        survived = [x["steps_survived"] for r in mine for x in r["agents"]]
        causes = Counter(x["death_cause"] or "alive" for r in mine for x in r["agents"])
        summary[name] = {
            "team_total_pct": statistics.mean(r["team_total_pct"] for r in mine),
            "agent_mean_total_pct": statistics.mean(r["total_pct"] for r in mine),
            "survival_median": statistics.median(survived),
            "survival_mean": statistics.mean(survived),
            "per_seed": {r["seed"]: round(r["team_total_pct"], 2) for r in mine},
            "death_causes": dict(causes.most_common()),
            "sleep_onsets": len([s for s in sleeps if s["variant"] == name]),
            "sleep_onsets_unsealed": len([s for s in sleeps if s["variant"] == name and not s["enclosed"]]),
        }
        print(name, json.dumps({k: v for k, v in summary[name].items() if k != "per_seed"}), flush=True)
        print("  per seed", summary[name]["per_seed"], flush=True)
    Path(a.out).write_text(
        json.dumps(
            {
                "seeds": seeds,
                "steps": a.steps,
                "rows": rows,
                "summary": summary,
                "sleeps": sleeps,
                "deaths": deaths,
                "cpu_seconds": time.process_time() - cpu,
            },
            default=str,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
