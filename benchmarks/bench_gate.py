"""The keep gate: how often it keeps a candidate that is no better (false keeps), how often it
keeps one that is better (power), and whether a library it evolved beats the seed library on
held-out seeds.

Decision rule under test: ``compass.skills.holdup.judge`` (one-sided paired t-test on the
per-seed difference of the family's figure, candidate and incumbent on the same seeds, kept when
p < 0.05), the function ``KeepGate`` calls.

Seeds: every evaluation here plays gate seeds 1000.. (the gate's default; tuning seeds are 0-999)
or held-out seeds (SMAX 30000.., away from the demos' 20000-20099); no ALEM seed here is one of
ALEM's evaluation seeds (compass/games/alem/protocol.py).

Parts (``--parts``):

- ``smax`` / ``alem``: per-seed figures of a few policies on S gate seeds, then the decision rule
  applied to many resampled gate runs of n seeds each:
  * false keeps, behaviour-identical copy: the incumbent renamed and reformatted, through the real
    ``KeepGate`` (its per-seed figures equal the incumbent's: the test says tie); beside it what
    the old rule ("kept when at least as good") did with it;
  * false keeps, equal in distribution (A/A): the incumbent's figures on n seeds against its own
    figures on n other seeds (disjoint, drawn at random), so the true difference is exactly 0;
  * false keeps, paired noise: the per-seed differences of a real pair, centred to mean 0,
    resampled (the shape of real paired differences under the null);
  * power: n seeds drawn at random (without replacement) from the S, for a candidate known to be
    better (its S-seed paired CI excludes 0).
- ``e2e``: SMAX runs of several gate reviews with a scripted candidate source (real variants:
  renamed copies, changed parameters, changed rules, a skill written by a person), then the library
  planner with the kept library against the seed library on held-out seeds (paired CI); and a run
  where nothing better is offered.

    python benchmarks/bench_gate.py                       # ~40 min on the shared 2-core machine
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._results import write_results  # noqa: E402
from compass.core.family import get_family  # noqa: E402
from compass.eval.stats import paired_test, wilson_interval  # noqa: E402
from compass.skills.holdup import GATE_SEED, KeepGate, evaluate_skill  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402
from compass.skills.params import set_params  # noqa: E402
from compass.skills.skill import Skill, parse_skill_source, rename_function  # noqa: E402

SMAX_HELD_OUT = 30_000
ALPHA = 0.05
# race_adaptive_combat with every named parameter moved to a poor value (no focus, back-steps only
# for very slow weapons, never steps out when hurt, regroups only when far apart)
DETUNED = {"focus_bonus": 0.0, "backstep_cooldown": 3.0, "hurt_health": 0.0, "group_radius": 12.0}
STAND_GROUND = '''def stand_ground(obs: str) -> int:
    """Stand ground: keep the position and hold fire."""
    obs_data = parse_obs(obs)
    return 0 if 0 in obs_data.available_actions else 1
'''


def _generated(skill: Skill) -> Skill:
    skill.meta = {"provenance": "generated", "parent": "-", "model": "scripted", "subtask": "-"}
    return skill


def renamed(skill: Skill, name: str, params: dict | None = None) -> Skill:
    """``skill`` under another name (and with ``params`` changed); a trailing blank line reformats it."""
    base = set_params(skill, params) if params else skill
    code = rename_function(base.code, skill.name, name) + "\n\n"
    out = _generated(parse_skill_source(code, skill.family, name=name))
    if "params" in skill.meta:  # the variant keeps its named parameters (a later variant may change them)
        out.meta["params"] = skill.meta["params"]
    return out


def seed_library(tmp: Path, family: str, without: tuple[str, ...] = ()) -> SkillLibrary:
    dst = tmp / family
    ignore = shutil.ignore_patterns("_stats.json", "__pycache__", *(f"{n}.py" for n in without))
    shutil.copytree(get_family(family).seed_skills_dir, dst, ignore=ignore)
    return SkillLibrary(tmp, family)


def figures(ev: dict) -> list[float]:
    return [float(x) for x in (ev["scores"] if "scores" in ev else ev["returns"])]


def play(lib: SkillLibrary, skill: Skill, env: str, seeds: list[int], steps: int | None) -> dict:
    t = time.perf_counter()
    ev = asyncio.run(evaluate_skill(lib, skill, env, seeds, steps, isolation="inprocess"))
    print(f"  {skill.name}: {len(seeds)} episodes in {time.perf_counter() - t:.0f} s", flush=True)
    return ev


def old_rule_keeps(cand: list[float], inc: list[float]) -> bool:
    """The gate before this benchmark: kept when the mean was at least as good (ties kept)."""
    return float(np.mean(cand)) >= float(np.mean(inc)) - 1e-9


def rate(k: int, n: int) -> dict:
    lo, hi = wilson_interval(k, n)
    return {"kept": k, "trials": n, "rate": round(k / n, 4), "ci95": [round(lo, 4), round(hi, 4)]}


def false_keeps_aa(x: np.ndarray, n: int, trials: int, rng) -> dict:
    kept = old = 0
    for _ in range(trials):
        idx = rng.permutation(x.size)
        c, b = x[idx[:n]], x[idx[n : 2 * n]]
        kept += paired_test(list(c), list(b), ALPHA)["verdict"] == "better"
        old += old_rule_keeps(c, b)
    return {"n": n, "new_rule": rate(kept, trials), "old_rule": rate(old, trials)}


def false_keeps_centred(d: np.ndarray, n: int, trials: int, rng) -> dict:
    d0 = d - d.mean()
    kept = 0
    zeros = [0.0] * n
    for _ in range(trials):
        kept += paired_test(list(d0[rng.integers(0, d0.size, n)]), zeros, ALPHA)["verdict"] == "better"
    return {"n": n, "new_rule": rate(kept, trials)}


def power(c: np.ndarray, b: np.ndarray, n: int, trials: int, rng) -> dict:
    kept = 0
    for _ in range(trials):
        idx = rng.choice(c.size, n, replace=False)
        kept += paired_test(list(c[idx]), list(b[idx]), ALPHA)["verdict"] == "better"
    return {"n": n, "new_rule": rate(kept, trials)}


def full_test(c: list[float], b: list[float]) -> dict:
    t = paired_test(c, b, ALPHA)
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in t.items()}


def identical_copy_through_gate(lib, env: str, n: int, steps: int | None, task: str) -> dict:
    """The real gate on the incumbent renamed and reformatted (what the library offers for the task)."""
    gate = KeepGate(lib, env, task, episodes=n, max_steps=steps or 10_000, isolation="inprocess")
    incumbent = gate.current_best()
    lib.stage(renamed(lib.get(incumbent), f"{incumbent}_copy"))
    (entry,) = asyncio.run(gate.review(0))
    c, b = figures(entry["candidate"]), figures(entry["best"])
    return {
        "incumbent": incumbent,
        "n": n,
        "verdict": entry["verdict"],
        "test": entry.get("test", {}).get("verdict"),
        "identical_figures": c == b,
        "old_rule_would_keep": old_rule_keeps(np.array(c), np.array(b)),
    }


def calibrate(
    family: str,
    env: str,
    policies: dict[str, Skill],
    pairs: list[tuple[str, str]],
    s_seeds: int,
    steps: int | None,
    ns: list[int],
    trials: int,
    rng,
    without: tuple[str, ...] = (),
) -> dict:
    """Per-seed figures of ``policies`` on S gate seeds, then resampled gate decisions.

    ``pairs`` are (candidate, incumbent) roles known to differ (their S-seed paired test is
    reported): power is measured on each, and the first pair's differences, centred, are the
    paired-noise null. The A/A null uses the policy named ``incumbent``."""
    seeds = list(range(GATE_SEED, GATE_SEED + s_seeds))
    task = get_family(family).default_task
    out: dict = {"env": env, "seeds": f"{seeds[0]}-{seeds[-1]}", "steps": steps, "trials": trials}
    with tempfile.TemporaryDirectory() as tmp:
        lib = seed_library(Path(tmp), family, without)
        x = {}
        out["policies"] = {}
        for role, skill in policies.items():
            ev = play(lib, skill, env, seeds, steps)
            x[role] = np.array(figures(ev))
            out["policies"][role] = {
                "skill": skill.name,
                "mean": round(float(x[role].mean()), 4),
                "win_rate": ev["win_rate"],
            }
        out["identical_copy_gate"] = identical_copy_through_gate(lib, env, min(ns), steps, task)
    out["known"] = {f"{c}_vs_{b}": full_test(list(x[c]), list(x[b])) for c, b in pairs}
    out["false_keep_aa"] = [false_keeps_aa(x["incumbent"], n, trials, rng) for n in ns if 2 * n <= s_seeds]
    c0, b0 = pairs[0]
    out["false_keep_centred"] = [false_keeps_centred(x[c0] - x[b0], n, trials, rng) for n in ns]
    out["power"] = {
        f"{c}_over_{b}": [power(x[c], x[b], n, trials, rng) for n in ns if n <= s_seeds] for c, b in pairs
    }
    return out


def library_play(root: Path, family: str, env: str, seeds: list[int], steps: int | None) -> dict:
    """What ``compass run --library DIR`` plays (``LibraryPlanner``), per seed."""
    from compass.config import RunConfig
    from compass.episode.pipeline import play, table
    from compass.planner.base import LibraryPlanner

    lib = SkillLibrary(root, family)
    cfg = RunConfig(env=env, library=root, max_steps=steps, isolation="inprocess")
    played = asyncio.run(play(table(cfg, LibraryPlanner(lib), scored=False), [(0, s) for s in seeds]))
    rets = [float(p.result.ret) for p in played]
    wins = sum(p.result.outcome == "win" for p in played)
    used: dict[str, int] = {}
    for p in played:
        for k, v in p.result.skills_used.items():
            used[k] = used.get(k, 0) + v
    return {"returns": rets, "wins": wins, "episodes": len(seeds), "skills_used": used}


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != "_stats.json":
            h.update(p.relative_to(root).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def evolve(root: Path, env: str, task: str, source, n: int) -> list[dict]:
    """One gate review per round (an episode's end in a run), candidates from ``source(lib)``."""
    lib = SkillLibrary(root, "combat")
    gate = KeepGate(lib, env, task, episodes=n, max_steps=200, isolation="inprocess")
    log = []
    for episode, make in enumerate(source):
        cand = make(lib)
        lib.stage(cand)
        (entry,) = asyncio.run(gate.review(episode))
        test = entry.get("test") or {}
        log.append(
            {
                "episode": episode,
                "candidate": cand.name,
                "against": (entry.get("best") or {}).get("skill"),
                "verdict": entry["verdict"],
                "test": {k: test.get(k) for k in ("n", "mean_diff", "ci", "p_better", "verdict")},
            }
        )
        print(f"  round {episode}: {cand.name} {entry['verdict']}: {entry['reason'][:160]}", flush=True)
    return log


def e2e(env: str, n_gate: int, n_held: int) -> dict:
    task = get_family("combat").default_task
    held = list(range(SMAX_HELD_OUT, SMAX_HELD_OUT + n_held))
    generalist = SkillLibrary(None, "combat").get("race_adaptive_combat")
    out: dict = {
        "env": env,
        "gate_seeds": f"{GATE_SEED}-{GATE_SEED + n_gate - 1}",
        "held_out": f"{held[0]}-{held[-1]}",
    }
    with tempfile.TemporaryDirectory() as tmp:
        # 1. the seed library without its generalist (what a library holds before anyone wrote
        # one): the source offers a copy of the best, a worse rule, the generalist as a person
        # wrote it, a detuned variant of it and a copy of it
        basic = seed_library(Path(tmp) / "seed", "combat", without=("race_adaptive_combat",))
        start = basic.retrieve(task, k=1)[0].skill.name
        shutil.copytree(Path(tmp) / "seed", Path(tmp) / "evolved")
        source = [
            lambda lib: renamed(lib.get(lib.best_for(task) or start), "copy_of_best"),
            lambda lib: _generated(parse_skill_source(STAND_GROUND, "combat", name="stand_ground")),
            lambda lib: renamed(generalist, "coordinated_combat"),
            lambda lib: renamed(lib.get(lib.best_for(task) or start), "detuned_best", DETUNED),
            lambda lib: renamed(lib.get(lib.best_for(task) or start), "copy_of_best_2"),
        ]
        out["offered"] = {
            "seed_library": f"shipped combat seed skills without race_adaptive_combat (retrieval picks {start})",
            "log": evolve(Path(tmp) / "evolved", env, task, source, n_gate),
        }
        evolved = SkillLibrary(Path(tmp) / "evolved", "combat")
        out["offered"]["kept_best"] = evolved.best_for(task)
        a = library_play(Path(tmp) / "evolved", "combat", env, held, None)
        b = library_play(Path(tmp) / "seed", "combat", env, held, None)
        out["offered"]["held_out"] = {
            "evolved": {k: v for k, v in a.items() if k != "returns"}
            | {"mean_return": float(np.mean(a["returns"]))},
            "seed": {k: v for k, v in b.items() if k != "returns"}
            | {"mean_return": float(np.mean(b["returns"]))},
            "paired": full_test(a["returns"], b["returns"]),
            "paired_95": full_test_95(a["returns"], b["returns"]),
        }
        # 2. nothing better offered: the full seed library; copies, a detuned variant, a worse rule
        full = Path(tmp) / "full"
        seed_library(full, "combat")
        before = digest(full)
        source = [
            lambda lib: renamed(generalist, "copy_of_generalist"),
            lambda lib: renamed(generalist, "detuned_generalist", DETUNED),
            lambda lib: _generated(parse_skill_source(STAND_GROUND, "combat", name="stand_ground")),
            lambda lib: renamed(generalist, "copy_of_generalist_2"),
        ]
        log = evolve(full, env, task, source, n_gate)
        out["nothing_better"] = {
            "seed_library": "shipped combat seed skills",
            "log": log,
            "kept": [e["candidate"] for e in log if e["verdict"] == "kept"],
            "library_unchanged": digest(full) == before,
        }
    return out


GRID = {
    "focus_bonus": [0.0, 0.3, 0.6, 1.0, 1.5],
    "backstep_cooldown": [0.3, 0.7, 1.5, 3.0],
    "hurt_health": [0.0, 0.3, 0.6, 0.9],
    "group_radius": [2.0, 3.5, 6.0, 12.0],
}


def e2e_mutation(env: str, n_gate: int, rounds: int, n_held: int) -> dict:
    """Offline mutation of named parameters (compass.skills.params): the seed library with its
    generalist detuned; each round one parameter of the current best moves to another grid value."""
    from compass.skills.params import get_params

    task = get_family("combat").default_task
    held = list(range(SMAX_HELD_OUT, SMAX_HELD_OUT + n_held))
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        seed = Path(tmp) / "seed"
        lib = seed_library(seed, "combat")
        path = lib.dir / "race_adaptive_combat.py"
        path.write_text(set_params(lib.get("race_adaptive_combat"), DETUNED).file_text(), encoding="utf-8")
        shutil.copytree(seed, Path(tmp) / "evolved")

        def mutant(k):
            def make(lib):
                best = lib.get(lib.best_for(task) or "race_adaptive_combat")
                values = get_params(best)
                name = str(rng.choice(sorted(GRID)))
                value = float(rng.choice([v for v in GRID[name] if abs(v - values[name]) > 1e-9]))
                return renamed(best, f"mutant_{k}", {name: value})

            return make

        log = evolve(Path(tmp) / "evolved", env, task, [mutant(k) for k in range(rounds)], n_gate)
        evolved = SkillLibrary(Path(tmp) / "evolved", "combat")
        best = evolved.best_for(task)
        out = {
            "seed_library": "shipped combat seed skills, race_adaptive_combat's parameters set to "
            + str(DETUNED),
            "gate_n": n_gate,
            "log": log,
            "kept_best": best,
            "kept_params": get_params(evolved.get(best)) if best else None,
        }
        if best is not None:
            a = library_play(Path(tmp) / "evolved", "combat", env, held, None)
            b = library_play(seed, "combat", env, held, None)
            out["held_out"] = {
                "evolved_mean_return": float(np.mean(a["returns"])),
                "seed_mean_return": float(np.mean(b["returns"])),
                "evolved_wins": a["wins"],
                "seed_wins": b["wins"],
                "paired_95": full_test_95(a["returns"], b["returns"]),
            }
    return out


def full_test_95(c: list[float], b: list[float]) -> dict:
    """The same paired test at alpha 0.025 per side: its CI is the two-sided 95 % one."""
    t = paired_test(c, b, 0.025)
    return {
        "ci95": [round(x, 4) for x in t["ci"]],
        "mean_diff": round(t["mean_diff"], 4),
        "p_better": t["p_better"],
    }


def alem_policies():
    from tests.planner.alem_candidates import better_source

    lib = SkillLibrary(None, "alem")
    task = get_family("alem").default_task
    hits = lib.retrieve(task, k=2)
    pick = next(h.skill.name for h in hits if h.skill.name != "alem_role_policy")
    incumbent = lib.get(pick)  # what the seed library without its generalist offers for the task
    better = _generated(parse_skill_source(better_source(), "alem", name="survive_then_build"))
    return incumbent, better, task


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="smax,alem,e2e,mutate")
    ap.add_argument("--mutate-n", type=int, default=100, help="gate episodes in the mutation run")
    ap.add_argument("--rounds", type=int, default=8, help="mutation rounds")
    ap.add_argument("--smax-env", default="smax:terran_5_vs_5")
    ap.add_argument("--smax-seeds", type=int, default=400)
    ap.add_argument("--alem-env", default="alem:hard")
    ap.add_argument("--alem-seeds", type=int, default=24)
    ap.add_argument("--alem-steps", type=int, default=150)
    ap.add_argument("--trials", type=int, default=4000)
    ap.add_argument("--gate-n", type=int, default=20, help="gate episodes (the gate's default)")
    ap.add_argument("--held-out", type=int, default=200)
    ap.add_argument("--name", default="bench_gate")
    ap.add_argument("--notes", default="")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    rng = np.random.default_rng(0)
    data: dict = {"alpha": ALPHA, "rule": "one-sided paired t-test (compass.skills.holdup.judge)"}
    t0 = time.perf_counter()
    load0 = [round(x, 2) for x in os.getloadavg()]
    if "smax" in parts:
        print("smax calibration", flush=True)
        lib = SkillLibrary(None, "combat")
        inc = lib.get("race_adaptive_combat")
        policies = {
            "incumbent": inc,
            "detuned": renamed(inc, "detuned", DETUNED),
            "basic": lib.get("regroup"),
        }
        pairs = [("incumbent", "detuned"), ("incumbent", "basic")]
        data["smax"] = calibrate(
            "combat",
            args.smax_env,
            policies,
            pairs,
            args.smax_seeds,
            None,
            [args.gate_n, 50, 100],
            args.trials,
            rng,
        )
    if "alem" in parts:
        print("alem calibration", flush=True)
        incumbent, better, _ = alem_policies()
        idle = _generated(parse_skill_source(IDLE_ALEM, "alem", name="idle"))
        policies = {"incumbent": incumbent, "better": better, "idle": idle}
        pairs = [("better", "incumbent"), ("incumbent", "idle")]
        data["alem"] = calibrate(
            "alem",
            args.alem_env,
            policies,
            pairs,
            args.alem_seeds,
            args.alem_steps,
            [8, 12],
            args.trials,
            rng,
            without=("alem_role_policy",),
        )
    if "e2e" in parts:
        print("end to end", flush=True)
        data["e2e"] = e2e(args.smax_env, args.gate_n, args.held_out)
    if "mutate" in parts:
        print("end to end, parameter mutation", flush=True)
        data["e2e_mutation"] = e2e_mutation(args.smax_env, args.mutate_n, args.rounds, args.held_out)
    data["seconds"] = round(time.perf_counter() - t0, 1)
    data["load_average"] = {"start": load0, "end": [round(x, 2) for x in os.getloadavg()]}
    seeds = {
        "gate": f"{GATE_SEED}..",
        "smax_held_out": f"{SMAX_HELD_OUT}..",
    }
    write_results(args.name, data, seeds=seeds, notes=args.notes)


IDLE_ALEM = '''def idle(obs: str) -> int:
    """Idle: stand still and do nothing."""
    return noop()
'''


if __name__ == "__main__":
    main()
