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

    python benchmarks/tune_alem_params.py --env alem:hard --seeds 0,1 --steps 1500 \\
        --grid dusk=100,120,140 --grid flee_health=2,4 --out /tmp/tune.json
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compass.games.alem.protocol import TUNING_TEXT, parse_tuning_seeds  # noqa: E402
from compass.skills.holdup import describe, describe_test, evaluate_skill, judge  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402
from compass.skills.params import get_params, param_names, set_params  # noqa: E402
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
    args = p.parse_args(argv)

    seeds = parse_seeds(args.seeds)
    lib = SkillLibrary(None, "alem")
    if args.skill not in lib:
        raise SystemExit(f"--skill {args.skill!r}: no such ALEM library skill")
    skill = lib.get(args.skill)
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


if __name__ == "__main__":
    raise SystemExit(main())
