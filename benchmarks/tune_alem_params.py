"""Tune a library skill's named parameters on ALEM tuning seeds with compass's own machinery.

The skill declares its parameters in its header (``# params: dusk, dawn, ...``; each a literal
assignment in the function, :mod:`compass.skills.params`). This script walks them one at a time
(coordinate ascent): for every candidate value it rewrites the literal (``set_params``), plays the
whole team with the result on the tuning seeds (``compass.skills.holdup.evaluate_skill``, the keep
gate's evaluation: ALEM's Total % per episode) and keeps a value only when the keep gate's paired
test (``holdup.judge``, one-sided at ``--alpha``) says it is better than the current one on the
same seeds. With ``--write`` the winning values go back into the library file (only
the literals change; a ``# tuned:`` header line records seeds, steps and scores).

Tuning seeds only: every seed must be one ``compass.games.alem.protocol.is_tuning_seed`` accepts
(0-999 or 100,000-199,999; docs/alem.md "Seed protocol").

``--search random`` tunes several parameters at once instead: it draws ``--candidates`` value sets,
each moving ``--moves`` parameters together within :data:`SEARCH_STEPS` (a documented neighbourhood
of the shipped values: shipped + k x step, 1 <= |k| <= ``--scale``), and plays them with successive
halving (``--rounds 12,24``: every candidate on the first 12 of ``--seeds``, the best third by mean
paired difference on the next 12 as well, ...). Episodes are played in process and batched
(``alem_dev.play``: the whole team is the skill, team Total %, as ``alem_variants.py`` judges), the
shipped values on the same seeds; every candidate's paired line against them is reported with the
seeds it played. Deterministic given ``--rng-seed``. ``--emit DIR`` writes the finalists' skill files
(``DIR/<label>/alem_role_policy.py``) for ``alem_variants.py``; ``--write`` is refused: the search's
best is judged on a selection and a confirmation block first, and its emitted file is then the one kept.

    python benchmarks/tune_alem_params.py --env alem:hard --seeds 0,1 --steps 1500 \\
        --grid dusk=100,120,140 --grid flee_health=2,4 --out /tmp/tune.json
    python benchmarks/tune_alem_params.py --search random --candidates 6 --moves 4 --rounds 12,24 \\
        --seeds 500-523 --steps 3000 --rng-seed 1 --out /tmp/joint.json --emit /tmp/joint
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import copy
import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# The random search imports its siblings alem_dev and alem_variants: run as a script, this folder is
# on the path already (tests prepend it).

from compass.games.alem.protocol import TUNING_TEXT, parse_tuning_seeds  # noqa: E402
from compass.skills.holdup import describe, describe_test, evaluate_skill, judge  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402
from compass.skills.params import get_params, param_names, set_params  # noqa: E402
from compass.skills.skill import Skill  # noqa: E402
from compass.util.atomic import atomic_write_json, atomic_write_text  # noqa: E402


def parse_grid(items: list[str], declared: list[str]) -> dict[str, list]:
    """``name=v1,v2`` items to ``{name: [v1, v2]}`` (values as Python literals); one-line errors."""
    grid: dict[str, list] = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not values:
            raise SystemExit(f"--grid {item!r}: expected NAME=V1,V2,...")
        if name not in declared:
            raise SystemExit(f"--grid {item!r}: the skill declares no parameter {name!r} (it has {declared})")
        try:
            grid[name] = [ast.literal_eval(v.strip()) for v in values.split(",")]
        except (ValueError, SyntaxError):
            raise SystemExit(f"--grid {item!r}: values must be Python literals") from None
    return grid


def parse_seeds(text: str) -> list[int]:
    """Tuning seeds (``0,1,2`` or ``0-23``); refuses in one line any seed outside the tuning ranges."""
    try:
        return parse_tuning_seeds(text)
    except ValueError as e:
        raise SystemExit(str(e)) from None


async def tune(
    lib: SkillLibrary, name: str, env: str, seeds: list[int], steps: int, grid: dict, alpha: float = 0.05
) -> dict:
    """Coordinate ascent over ``grid``; returns the log, the start and the kept values."""
    skill = lib.get(name)
    current = get_params(skill)
    log = []

    async def play(values: dict) -> dict:
        t = time.perf_counter()
        ev = await evaluate_skill(
            lib, set_params(skill, values), env, seeds, max_steps=steps, isolation="inprocess"
        )
        ev["values"], ev["seconds"] = dict(values), round(time.perf_counter() - t, 1)
        print(f"  {values}: {describe(ev)} ({ev['seconds']}s)", flush=True)
        log.append(ev)
        return ev

    print(f"{name} on {env}, seeds {seeds}, {steps} steps; start {current}", flush=True)
    best = await play(current)
    start = best
    for pname, values in grid.items():
        for v in values:
            if v == current[pname]:
                continue
            ev = await play(current | {pname: v})
            test = judge(ev, best, alpha)
            ev["test"] = test
            print(f"    vs current: {test['verdict']} ({describe_test(test)})", flush=True)
            if test["verdict"] == "better":
                print(f"  keep {pname}={v!r}", flush=True)
                current, best = current | {pname: v}, ev
    return {"start": start, "best": best, "kept": current, "log": log}


#: The random search's neighbourhood of ``alem_role_policy``'s shipped values: one step per declared
#: parameter; a candidate value is shipped + k x step with 1 <= |k| <= ``--scale``, never below 0
#: (``dawn`` and ``dusk`` stay inside the 300-step day). Health, food and drink thresholds move by one
#: point (of 9), the day's hours by 10 steps, the episode's milestones by 100-200 steps, reaches by a
#: third or so.
SEARCH_STEPS: dict[str, int] = {
    "dusk": 10,
    "dawn": 10,
    "threat_radius": 1,
    "elite_flee_health": 1,
    "cornered_health": 1,
    "flee_health": 1,
    "archer_health": 1,
    "engage_health": 1,
    "food_request": 1,
    "drink_request": 1,
    "drink_urgent": 1,
    "thirst": 1,
    "share_keep": 1,
    "fed_level": 1,
    "descend_from": 200,
    "first_visit": 100,
    "seek_ladder_from": 200,
    "revive_reach": 10,
    "refuel_at": 1,
    "feed_keep": 1,
    "hunt_reach": 2,
    "hunt_health": 1,
    "elite_keep": 1,
    "wake_radius": 2,
    "quick_kill": 1,
}
_UPPER = {"dusk": 299, "dawn": 299}


def neighbourhood(name: str, value: int, scale: int = 1, steps: dict[str, int] = SEARCH_STEPS) -> list[int]:
    """The values the random search may give parameter ``name`` (shipped ``value``): ``value`` +
    k x its step for 1 <= |k| <= ``scale``, kept within 0 and (for the day's hours) 299."""
    step = steps[name]
    hi = _UPPER.get(name, math.inf)
    out = [value + k * step for k in range(-scale, scale + 1) if k]
    return [v for v in out if 0 <= v <= hi]


def draw_candidates(
    shipped: dict[str, Any], n: int, moves: int, scale: int, rng_seed: int, names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """``n`` distinct value sets, each the shipped values with ``moves`` parameters (drawn among
    ``names``, default every one with a :data:`SEARCH_STEPS` entry) moved within their
    :func:`neighbourhood`. Deterministic given ``rng_seed``."""
    rng = random.Random(rng_seed)
    pool = sorted(n_ for n_ in (names or shipped) if n_ in SEARCH_STEPS and n_ in shipped)
    if not 1 <= moves <= len(pool):
        raise SystemExit(f"--moves {moves}: between 1 and {len(pool)} (the searchable parameters)")
    out: list[dict[str, Any]] = []
    seen: set[tuple] = set()
    for _ in range(100 * n):
        if len(out) == n:
            break
        moved = {k: rng.choice(neighbourhood(k, shipped[k], scale)) for k in rng.sample(pool, moves)}
        key = tuple(sorted(moved.items()))
        if key not in seen:
            seen.add(key)
            out.append(shipped | moved)
    return out


def parse_rounds(text: str, n_seeds: int) -> list[int]:
    """``"12,24"`` -> cumulative seed counts per halving round, increasing, within ``n_seeds``."""
    try:
        rounds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"--rounds {text!r}: expected increasing seed counts, e.g. 12,24") from None
    if not rounds or rounds[0] < 2 or any(b <= a for a, b in zip(rounds, rounds[1:], strict=False)):
        raise SystemExit(f"--rounds {text!r}: increasing seed counts from 2 up, e.g. 12,24")
    if rounds[-1] > n_seeds:
        raise SystemExit(f"--rounds {text!r}: needs {rounds[-1]} seeds, --seeds gives {n_seeds}")
    return rounds


#: ``play(skills_and_seeds)`` -> one score row (``EpisodeScore.as_dict()``) per job.
Player = Callable[[list[tuple[Skill, int]]], list[dict]]


def batch_player(steps: int, difficulty: str = "hard", preset: str = "rl") -> Player:
    """Plays every (skill, seed) job as the whole team, all in one batched loop (``alem_dev.play``)."""
    from alem_dev import play

    from compass.sandbox import compile_skill

    def run(jobs: list[tuple[Skill, int]]) -> list[dict]:
        compiled: dict[int, Any] = {}
        for skill, _ in jobs:
            compiled.setdefault(id(skill), compile_skill(skill.code, skill.name, "alem"))
        trackers = play([(compiled[id(s)], seed) for s, seed in jobs], steps, difficulty, preset)
        return [tr.score().as_dict() | {"seed": seed} for (_, seed), tr in zip(jobs, trackers, strict=True)]

    return run


def random_search(
    skill: Skill,
    seeds: list[int],
    rounds: list[int],
    candidates: list[dict[str, Any]],
    player: Player,
    eta: int = 3,
    on_round: Callable[[dict], None] | None = None,
) -> dict:
    """Successive halving of ``candidates`` against ``skill``'s shipped values: round r plays every
    surviving candidate (and the shipped values) on ``seeds[rounds[r-1]:rounds[r]]``, then keeps the
    best ceil(n / ``eta``) by mean paired difference of team Total % over every seed it played.

    Returns the shipped values and rows, one entry per candidate (label, values, the parameters it
    moved, the values read back from the skill it played, its rows, its paired line and mean
    difference against the shipped values on the seeds it played, the round it stopped at), the
    rounds (seeds played, who played) and the ranking of the last round's candidates.
    ``on_round(report)`` sees the report so far after every round (the script writes it out, so a
    search stopped early keeps its finished rounds)."""
    from alem_variants import paired_line

    shipped = get_params(skill)
    entries = []
    for i, values in enumerate(candidates):
        played = set_params(skill, values)
        entries.append(
            {
                "label": f"c{i}",
                "values": values,
                "moved": {k: [shipped[k], v] for k, v in values.items() if v != shipped[k]},
                "played": get_params(played),
                "skill": played,
                "rows": [],
            }
        )
    base_rows: list[dict] = []
    alive = list(range(len(entries)))
    log = []
    start = 0
    for r, upto in enumerate(rounds):
        part = seeds[start:upto]
        t = time.perf_counter()
        jobs = [(skill, s) for s in part] + [(entries[i]["skill"], s) for i in alive for s in part]
        rows = player(jobs)
        base_rows += rows[: len(part)]
        for k, i in enumerate(alive):
            e = entries[i]
            e["rows"] += rows[len(part) * (k + 1) : len(part) * (k + 2)]
            e["diff"] = _mean_diff(base_rows, e["rows"])
            e["paired"] = paired_line(base_rows, e["rows"]) if len(e["rows"]) >= 2 else ""
            e["round"] = r
        seconds = round(time.perf_counter() - t, 1)
        log.append(
            {
                "round": r,
                "seeds": part,
                "candidates": [entries[i]["label"] for i in alive],
                "seconds": seconds,
            }
        )
        print(
            f"round {r}: seeds {part[0]}-{part[-1]} ({len(part)}), {len(alive)} candidates, {seconds}s",
            flush=True,
        )
        alive = sorted(alive, key=lambda i: -entries[i]["diff"])
        for i in alive:
            e = entries[i]
            print(f"  {e['label']} {e['moved']}: {e['paired']}", flush=True)
        if r + 1 < len(rounds):
            alive = alive[: max(1, math.ceil(len(alive) / eta))]
        start = upto
        report = {
            "shipped": shipped,
            "shipped_rows": base_rows,
            "candidates": [{k: v for k, v in e.items() if k != "skill"} for e in entries],
            "rounds": log,
            "ranking": [entries[i]["label"] for i in alive],
        }
        if on_round is not None:
            on_round(copy.deepcopy(report))  # a snapshot: later rounds extend these lists
    return report


def _mean_diff(ref: list[dict], rows: list[dict]) -> float:
    """Mean team Total % of ``rows`` minus ``ref`` on the same leading seeds."""
    pairs = list(zip(ref, rows, strict=False))
    return sum(b["team_total_pct"] - a["team_total_pct"] for a, b in pairs) / len(pairs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="alem:hard")
    p.add_argument("--skill", default="alem_role_policy")
    p.add_argument("--seeds", default="0,1", help=f"tuning seeds ({TUNING_TEXT} only)")
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--grid", action="append", default=[], help="NAME=V1,V2,... (repeatable)")
    p.add_argument("--alpha", type=float, default=0.05, help="one-sided error rate of the keep test")
    p.add_argument("--out", default="", help="write the log as JSON here")
    p.add_argument("--write", action="store_true", help="write the kept values into the library file")
    p.add_argument("--search", choices=("coordinate", "random"), default="coordinate")
    p.add_argument("--candidates", type=int, default=6, help="random search: value sets drawn")
    p.add_argument("--moves", type=int, default=4, help="random search: parameters each candidate moves")
    p.add_argument("--scale", type=int, default=1, help="random search: at most this many steps each move")
    p.add_argument(
        "--params", default="", help="random search: comma list of parameters to move (default all)"
    )
    p.add_argument(
        "--rounds", default="12,24", help="random search: cumulative seed counts of the halving rounds"
    )
    p.add_argument("--eta", type=int, default=3, help="random search: keep the best 1/eta after each round")
    p.add_argument("--rng-seed", type=int, default=0, help="random search: seed of the candidates' draw")
    p.add_argument("--preset", default="rl", choices=("rl", "harness"), help="random search: the env preset")
    p.add_argument(
        "--emit", default="", help="random search: write the last round's skill files under DIR/<label>/"
    )
    args = p.parse_args(argv)

    seeds = parse_seeds(args.seeds)
    lib = SkillLibrary(None, "alem")
    if args.skill not in lib:
        raise SystemExit(f"--skill {args.skill!r}: no such ALEM library skill")
    skill = lib.get(args.skill)
    if args.search == "random":
        return search_main(args, skill, seeds)
    grid = parse_grid(args.grid, param_names(skill))
    if not grid:
        raise SystemExit("--grid: give at least one NAME=V1,V2,... to tune")
    result = asyncio.run(tune(lib, args.skill, args.env, seeds, args.steps, grid, args.alpha))
    result.update(env=args.env, skill=args.skill, seeds=seeds, steps=args.steps, grid=grid)
    print(f"start {describe(result['start'])} -> kept {result['kept']}: {describe(result['best'])}")
    if args.out:
        atomic_write_json(Path(args.out), json.loads(json.dumps(result, default=str)))
    if args.write and result["kept"] != result["start"]["values"]:
        tuned = set_params(skill, result["kept"])
        tuned.meta["tuned"] = (
            f"{args.env} seeds {','.join(map(str, seeds))} x {args.steps} steps: "
            f"{describe(result['start'])} -> {describe(result['best'])}"
        )
        atomic_write_text(skill.path, tuned.file_text())
        print(f"wrote {skill.path}")
    return 0


def search_main(args: argparse.Namespace, skill: Skill, seeds: list[int]) -> int:
    """``--search random``: draw, play with successive halving, report (``--out``), emit."""
    if args.write:
        # The search's best is the best of many on its own seeds (the winner's curse): it is judged on a
        # selection and a confirmation block first (docs/alem.md "Judging a variant"), then its --emit file
        # is the library file to keep.
        raise SystemExit(
            "--write: not with --search random; judge the best on K and L, then keep its --emit file"
        )
    rounds = parse_rounds(args.rounds, len(seeds))
    seeds = seeds[: rounds[-1]]
    names = [n.strip() for n in args.params.split(",") if n.strip()] or None
    shipped = get_params(skill)
    for n in names or ():
        if n not in SEARCH_STEPS or n not in shipped:
            raise SystemExit(f"--params {n!r}: not a searchable parameter ({sorted(SEARCH_STEPS)})")
    candidates = draw_candidates(shipped, args.candidates, args.moves, args.scale, args.rng_seed, names)
    difficulty = args.env.partition(":")[2] or args.env
    player = batch_player(args.steps, difficulty, args.preset)
    print(
        f"{skill.name} on {args.env}, {len(candidates)} candidates, rounds {rounds} of seeds {seeds}",
        flush=True,
    )
    settings = {
        "search": "random",
        "env": args.env,
        "skill": skill.name,
        "seeds": seeds,
        "steps": args.steps,
        "preset": args.preset,
        "rng_seed": args.rng_seed,
        "moves": args.moves,
        "scale": args.scale,
        "eta": args.eta,
        "neighbourhood": {k: neighbourhood(k, shipped[k], args.scale) for k in SEARCH_STEPS if k in shipped},
    }

    def write(report: dict) -> None:
        if args.out:
            from alem_dev import write_out

            write_out(args.out, report | settings)

    result = random_search(skill, seeds, rounds, candidates, player, args.eta, on_round=write) | settings
    by_label = {e["label"]: e for e in result["candidates"]}
    if args.emit:
        for label in result["ranking"]:
            path = Path(args.emit) / label / f"{skill.name}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, set_params(skill, by_label[label]["values"]).file_text())
            print(f"wrote {path}")
    best = by_label[result["ranking"][0]]
    print(f"best {best['label']} {best['moved']}: {best['paired']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
