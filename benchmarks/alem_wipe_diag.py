"""Play an ALEM skill file as the whole team on tuning seeds and record how teams are wiped
(docs/alem.md "Reviving teammates, second pass: team wipes").

Per death: the step, the hour of the day (``step % 300``), dark or not, the cause, the level, the
nearest hostile creature the dying agent saw, whether it was walking to revive a body (its last
action was what ``revive_step`` asked for), how many teammates were left. Per revival: who revived whom, the hour, the nearest hostile to the
body, and whether the revived agent or its reviver died within 50 steps. Per revive walk (a run
of steps where an agent did what ``revive_step`` asked): start, end, how it ended. Per wipe (an
episode whose last death left nobody standing): its deaths and revivals in order.
Per overworld death the dying agent's state (dark or light, fed or unfed), beside the living
agent-steps spent in each state (docs/alem.md "Judging a variant, tenth round").
Tuning seeds only (docs/alem.md "Seed protocol").

    python benchmarks/alem_wipe_diag.py compass/games/alem/skills/alem_role_policy.py \\
        --seeds 0-47 --steps 3000 --out /tmp/wipe.json
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

WINDOW = 50  # "dies again soon": within this many steps of a revival
DARK = 0.35  # the library's night test (light below this)
UNFED = 3  # food or drink at or below this: the library's `fed_level`, below which nobody seals in


def _state(food: float, drink: float, dark: bool) -> str:
    """``"dark"`` or ``"light"``, then ``"unfed"`` or ``"fed"``: the exposure a death is set against."""
    unfed = food <= UNFED or drink <= UNFED
    return f"{'dark' if dark else 'light'} {'unfed' if unfed else 'fed'}"


def _nearest_hostile(d, xy) -> tuple[str, int] | None:
    """The hostile creature ``d`` sees nearest to ``xy`` (kind name, Manhattan distance)."""
    best = None
    for m in d.mobs:
        if m.hostile:
            dist = abs(m.x - xy[0]) + abs(m.y - xy[1])
            if best is None or dist < best[1]:
                best = (m.name, dist)
    return best


def play_file(path: Path, seeds: list[int], steps: int, reach: int) -> dict:
    """Death, revival and revive-walk records for the skill file at ``path`` on ``seeds``."""
    from compass.games.alem.skill_api import downed_teammates, enclosed, revive_step, time_of_day
    from compass.games.alem.skill_api.knowledge import obs_data_from_view
    from compass.games.alem.skill_api.survival import DAY_LENGTH

    policy = load_policy(path)
    n = len(seeds)
    last: list[list] = [[None] * 3 for _ in seeds]  # latest ObsData per agent
    walking: list[list] = [[False] * 3 for _ in seeds]  # latest action was revive_step's
    walk_open: list[dict] = [{} for _ in seeds]  # agent -> open walk record
    events: list[list[dict]] = [[] for _ in seeds]
    walks: list[dict] = []
    exposure: Counter = Counter()  # living overworld agent-steps by _state

    def on_step(i: int, views: list, actions: list[int]) -> None:
        for j, v in enumerate(views):
            d = obs_data_from_view(v)
            last[i][j] = d
            if d.alive and d.level == 0:
                exposure[_state(d.food, d.drink, d.light < DARK)] += 1
            w = False
            if d.alive and not d.sleeping and downed_teammates(d, reach):
                step = revive_step(d, reach=reach)
                w = step is not None and step == actions[j]
            walking[i][j] = w
            rec = walk_open[i].get(j)
            if w and rec is None:
                body = downed_teammates(d, reach)[0]
                walk_open[i][j] = {
                    "seed": seeds[i],
                    "agent": j,
                    "start": d.step,
                    "hour": time_of_day(d),
                    "dark": d.light < DARK,
                    "dist": abs(body.x - d.x) + abs(body.y - d.y),
                    "hostile_near_body": _nearest_hostile(d, (body.x, body.y)),
                    "hostile_near_me": _nearest_hostile(d, d.position),
                    "level": d.level,
                }
            elif not w and rec is not None and d.alive:
                rec["end"], rec["outcome"] = d.step, "stopped"
                walks.append(walk_open[i].pop(j))

    def on_result(i: int, res) -> None:
        info = res.info
        t = info["timestep"]
        for j, back in enumerate(info["revived"]):
            if not back:
                continue
            d = last[i][j]
            body = d.position if d is not None else None
            # The reviver: a living teammate whose last action was revive_step's (its Do on the body).
            by = [
                k
                for k in range(3)
                if k != j and last[i][k] is not None and last[i][k].alive and walking[i][k]
            ]
            k = by[0] if by else None
            rec = walk_open[i].pop(k, None) if k is not None else None
            if rec is not None:
                rec["end"], rec["outcome"] = t, "revived"
                walks.append(rec)
            seer = last[i][k] if k is not None else None
            events[i].append(
                {
                    "t": t,
                    "kind": "revive",
                    "agent": j,
                    "by": k,
                    "hour": t % DAY_LENGTH,
                    "dark": seer.light < DARK if seer else None,
                    "hostile_near_body": _nearest_hostile(seer, body) if seer and body else None,
                    "food": d.food if d else None,
                    "drink": d.drink if d else None,
                }
            )
        for j, cause in enumerate(info["deaths"]):
            if cause is None:
                continue
            d = last[i][j]
            rec = walk_open[i].pop(j, None)
            if rec is not None:
                rec["end"], rec["outcome"] = t, "died"
                walks.append(rec)
            alive_after = sum(
                1
                for k in range(3)
                if k != j and last[i][k] is not None and last[i][k].alive and info["deaths"][k] is None
            )
            events[i].append(
                {
                    "t": t,
                    "kind": "death",
                    "agent": j,
                    "cause": cause,
                    "hour": t % DAY_LENGTH,
                    "dark": d.light < DARK if d else None,
                    "level": d.level if d else None,
                    "pos": list(d.position) if d else None,
                    "hostile_near": _nearest_hostile(d, d.position) if d else None,
                    "reviving": walking[i][j],
                    "sleeping": d.sleeping if d else None,
                    "enclosed": enclosed(d) if d else None,
                    "health": d.health if d else None,
                    "food": d.food if d else None,
                    "drink": d.drink if d else None,
                    "left": alive_after,
                }
            )

    trackers = play([(policy, s) for s in seeds], steps, on_step=on_step, on_result=on_result)
    for i in range(n):
        for rec in walk_open[i].values():
            rec["end"], rec["outcome"] = steps, "open"
            walks.append(rec)
    rows = [tr.score().as_dict() | {"seed": s} for s, tr in zip(seeds, trackers, strict=True)]
    return {
        "rows": rows,
        "events": {str(s): ev for s, ev in zip(seeds, events, strict=True)},
        "walks": walks,
        "exposure": dict(exposure),
    }


def _hour_bin(h: int) -> str:
    lo = (h // 50) * 50
    return f"{lo:03d}-{lo + 49:03d}"


def report(out: dict, steps: int) -> dict:
    """The diagnosis table's figures: revivals and what followed them, deaths on revive walks and
    after, by hour of the day; each wipe's chain."""
    revives, redie, reviver_die, deaths = [], 0, 0, []
    by_hour: dict[str, Counter] = {}
    chains, ends = {}, []
    for seed, ev in out["events"].items():
        ev = sorted(ev, key=lambda e: (e["t"], e["kind"] != "revive"))
        deaths += [e for e in ev if e["kind"] == "death"]
        for e in ev:
            h = by_hour.setdefault(_hour_bin(e["hour"]), Counter())
            if e["kind"] == "death":
                h["deaths"] += 1
                h["deaths_on_revive_walk"] += e["reviving"]
                continue
            revives.append(e)
            h["revives"] += 1
            again = any(
                x["kind"] == "death" and x["agent"] == e["agent"] and 0 < x["t"] - e["t"] <= WINDOW
                for x in ev
            )
            rdie = e["by"] is not None and any(
                x["kind"] == "death" and x["agent"] == e["by"] and 0 <= x["t"] - e["t"] <= WINDOW for x in ev
            )
            e["again_50"], e["reviver_dies_50"] = again, rdie
            redie += again
            reviver_die += rdie
            h["revived_dies_50"] += again
            h["reviver_dies_50"] += rdie
        # A wipe: the episode's last event is a death that left nobody standing.
        wiped = bool(ev) and ev[-1]["kind"] == "death" and ev[-1]["left"] == 0
        ends.append(ev[-1]["t"] if wiped else steps)
        if not wiped:
            continue
        chains[seed] = " | ".join(
            f"{e['t']}h{e['hour']}{'D' if e.get('dark') else ''} "
            + (
                f"a{e['agent']}x {e['cause']} L{e['level']} near={e['hostile_near']}"
                f"{' WALK' if e['reviving'] else ''}{' SLEEP' if e['sleeping'] else ''}"
                f"{' ENC' if e['enclosed'] else ''} left={e['left']}"
                if e["kind"] == "death"
                else f"a{e['agent']}<-a{e['by']} body_near={e['hostile_near_body']}"
            )
            for e in ev
        )
    walks = out["walks"]
    return {
        "revives": len(revives),
        "revived_dies_within_50": redie,
        "reviver_dies_within_50": reviver_die,
        "deaths": len(deaths),
        "deaths_on_revive_walk": sum(e["reviving"] for e in deaths),
        "deaths_dark": sum(bool(e["dark"]) for e in deaths),
        "last_deaths": dict(Counter(e["cause"] for e in deaths if e["left"] == 0).most_common()),
        "last_death_dark": sum(bool(e["dark"]) for e in deaths if e["left"] == 0),
        "last_death_enclosed": sum(bool(e["enclosed"]) for e in deaths if e["left"] == 0),
        "last_death_on_walk": sum(e["reviving"] for e in deaths if e["left"] == 0),
        "walks": len(walks),
        "walk_outcomes": dict(Counter(w["outcome"] for w in walks)),
        "walks_dark": dict(Counter(w["outcome"] for w in walks if w["dark"])),
        "walks_hostile_body_le3": dict(
            Counter(w["outcome"] for w in walks if w["hostile_near_body"] and w["hostile_near_body"][1] <= 3)
        ),
        "by_hour": {k: dict(v) for k, v in sorted(by_hour.items())},
        "wipes": len(chains),
        "episode_end_median": statistics.median(ends) if ends else None,
        "wiped_before_1000": sum(e < 1000 for e in ends),
        "chains": chains,
        "overworld_by_state": by_state(deaths, out.get("exposure", {})),
    }


def by_state(deaths: list[dict], exposure: dict) -> dict:
    """Overworld deaths by cause and the dying agent's state (:func:`_state`) beside the living
    agent-steps spent in each state (docs/alem.md "Judging a variant, tenth round"): whether being
    unfed goes with deaths that are not starvation or dehydration."""
    out: dict = {"agent_steps": exposure}
    for e in deaths:
        if e["level"] == 0 and e.get("food") is not None:
            cause = e["cause"].split(" ")[0]
            out.setdefault(cause, Counter())[_state(e["food"], e["drink"], e["dark"])] += 1
    return {k: dict(sorted(v.items())) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__, seeds="0-47", variants=False)
    p.add_argument("--reach", type=int, default=30, help="revive_reach of the policy")
    a = parse_dev_args(p, argv)
    cpu = time.process_time()
    out = play_file(Path(a.skill_file), a.seeds, a.steps, a.reach)
    out["summary"] = summary(out["rows"]) | report(out, a.steps) | {"cpu_seconds": time.process_time() - cpu}
    write_out(a.out, out)
    s = {k: v for k, v in out["summary"].items() if k != "chains"}
    print(json.dumps(s, indent=1))
    for seed, chain in out["summary"]["chains"].items():
        print(f"seed {seed}: {chain}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
