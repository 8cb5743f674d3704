"""Per-step skill execution: plain Python vs in-process sandbox vs isolated batched workers; hung-worker replacement.

Run: ``PYTHONPATH=. python benchmarks/bench_sandbox.py [--rounds 7] [--steps 40] [--hangs 3]``

One "step" is what the runner does every env step: every agent's skill call, here
``race_adaptive_combat`` (the default combat skill) on N recorded observations (``compass skills
check``'s 198 observations, N consecutive ones per step, agent ids 0..N-1), for N = 5 and 10:

* plain Python: the source ``exec``'d as ordinary Python with the same API dict as globals;
* in-process sandbox: ``SkillExecutor.run_batch`` (RestrictedPython, guards, budget, action check);
* isolated, batched: ``IsolatedExecutor.run_batch``, one round trip to the worker per step;
* isolated, per agent: ``IsolatedExecutor.run`` per agent (one round trip each), for comparison.

Rounds alternate between the modes so a busy machine slows all alike; per mode the median of the
rounds' per-step means is reported, with wall time and CPU time (this process plus the worker,
from ``/proc``; CPU time does not include waiting for a core, so it is the load-independent
overhead figure). Then the same in real SMAX episodes (protoss 5v5, the runner's ``run_batch`` timed per step,
both modes alternating): between two steps the environment, communication and tracing run, as
they do in a run. Then a skill stuck in C code (``sorted`` of 10**6 items in a loop) runs as
agent 2 of 5: the time until ``run_batch`` returns (detection at the hard deadline, kill, warm
spare promoted, the other four re-run) and the replacement alone, with and without a warm spare.

Writes ``benchmarks/results/bench_sandbox.json`` (atomically).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.core.types import AgentView  # noqa: E402
from compass.games.combat.skill_api import make_api  # noqa: E402
from compass.games.combat.text import view_from_text  # noqa: E402
from compass.sandbox import SkillExecutor, compile_skill  # noqa: E402
from compass.sandbox.isolated import IsolatedExecutor  # noqa: E402
from compass.skills.check import load_observations, observations_path  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402

API = "compass.games.combat.skill_api"
SKILL = "race_adaptive_combat"
C_HANG = "def hang(obs):\n    while True:\n        sorted(range(10**6), key=lambda x: -x)\n"
TICK = os.sysconf("SC_CLK_TCK")


def steps_of(views: list[AgentView], n: int, steps: int) -> list[list[AgentView]]:
    """``steps`` batches of ``n`` consecutive recorded views, agent ids 0..n-1."""
    out = []
    for s in range(steps):
        start = (s * n) % (len(views) - n)
        out.append([replace(v, agent_id=i) for i, v in enumerate(views[start : start + n])])
    return out


def worker_cpu(pids: list[int]) -> float:
    """User+system CPU seconds of the worker processes so far."""
    total = 0
    for pid in pids:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def bench_step(n: int, steps: int, rounds: int, views: list[AgentView]) -> dict:
    skill = SkillLibrary(None, "combat").compiled[SKILL]
    batches = steps_of(views, n, steps)
    inproc = SkillExecutor(API, seed=0)
    iso = IsolatedExecutor(API, seed=0)
    pids = iso.pids()
    rng = random.Random(0)
    ns: dict = {"math": math, "random": rng, "__builtins__": __builtins__}
    ns.update(make_api(batches[0][0], rng))
    exec(compile(skill.source, f"<plain {SKILL}>", "exec"), ns)
    plain_fn = ns[SKILL]

    def plain() -> list[int]:
        out = []
        for batch in batches:
            for v in batch:
                ns.update(make_api(v, rng))  # what the executors do before each call
                out.append(plain_fn(v.text))
        return out

    def sandboxed() -> list[int]:
        return [r.action for b in batches for r in inproc.run_batch([(skill, v) for v in b])]

    def isolated() -> list[int]:
        return [r.action for b in batches for r in iso.run_batch([(skill, v) for v in b])]

    def per_agent() -> list[int]:
        return [iso.run(skill, v).action for b in batches for v in b]

    modes: dict[str, Callable[[], list[int]]] = {
        "plain Python": plain,
        "in-process sandbox": sandboxed,
        "isolated, batched": isolated,
        "isolated, per agent": per_agent,
    }
    reference = sandboxed()
    for name, fn in modes.items():
        assert fn() == reference, f"{name} disagrees with the in-process sandbox"
    wall: dict[str, list[float]] = {k: [] for k in modes}
    cpu: dict[str, list[float]] = {k: [] for k in modes}
    for _ in range(rounds):
        for name, fn in modes.items():
            c0, w0, t0 = time.process_time(), worker_cpu(pids), time.perf_counter()
            fn()
            wall[name].append((time.perf_counter() - t0) / steps)
            cpu[name].append((time.process_time() - c0 + worker_cpu(pids) - w0) / steps)
    iso.close()
    return {
        name: {"wall_ms": statistics.median(wall[name]) * 1e3, "cpu_ms": statistics.median(cpu[name]) * 1e3}
        for name in modes
    }


def bench_hang(repeats: int, views: list[AgentView]) -> dict:
    skill = SkillLibrary(None, "combat").compiled[SKILL]
    hang = compile_skill(C_HANG, "hang", "combat")
    batch = [(hang if i == 2 else skill, replace(v, agent_id=i)) for i, v in enumerate(views[:5])]
    out = {}
    for spare in (True, False):
        iso = IsolatedExecutor(API, seed=0, spare=spare)
        iso.pids()
        replace_s, total_s = [], []
        original = iso._replace

        def timed_replace(index: int, original=original, replace_s=replace_s, iso=iso) -> None:
            t0 = time.perf_counter()
            original(index)
            iso._wait_ready(iso._workers[index])  # replaced means ready to run the next item
            replace_s.append(time.perf_counter() - t0)

        iso._replace = timed_replace
        for _ in range(repeats):
            if spare:
                iso._wait_ready(iso._spare)  # steady state: the spare had time to start
            t0 = time.perf_counter()
            results = iso.run_batch(batch)
            total_s.append(time.perf_counter() - t0)
            assert results[2].error is not None and all(
                r.error is None for k, r in enumerate(results) if k != 2
            )
        iso.close()
        out["warm spare" if spare else "no spare"] = {
            "hard_deadline_s": iso.hard_seconds,
            "replace_s": statistics.median(replace_s),
            "batch_with_hang_s": statistics.median(total_s),
        }
    return out


def bench_episode(steps: int, episodes: int) -> dict:
    """Skill time per step as the runner sees it: real SMAX episodes, both isolation modes alternating."""
    import asyncio

    import compass.episode.runner as runner_mod
    from compass.comm import CommProtocol
    from compass.config import RunConfig
    from compass.core.family import make_env
    from compass.episode.trace import RunWriter
    from compass.planner.base import LibraryPlanner

    lib = SkillLibrary(None, "combat")

    env = make_env("smax:protoss_5_vs_5", max_steps=steps)
    times: dict[str, list[float]] = {"inprocess": [], "process": []}
    current: list[float] = []
    originals = {cls: cls.run_batch for cls in (SkillExecutor, IsolatedExecutor)}

    def timed(inner):
        def run_batch(self, items):
            t0 = time.perf_counter()
            out = inner(self, items)
            current.append(time.perf_counter() - t0)
            return out

        return run_batch

    for cls, inner in originals.items():
        cls.run_batch = timed(inner)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for ep in range(episodes + 1):  # episode 0 of each mode starts the pooled executor: not counted
                for mode in times:
                    cfg = RunConfig(env="smax:protoss_5_vs_5", isolation=mode, max_steps=steps, seed=ep)
                    writer = RunWriter(Path(tmp) / f"{mode}-{ep}")
                    comm = CommProtocol("multihop", seed=ep)
                    runner = runner_mod.EpisodeRunner(
                        env, LibraryPlanner(lib, skill=SKILL), cfg, writer, comm=comm
                    )
                    current.clear()
                    asyncio.run(runner.run_episode(ep, ep))
                    writer.close()
                    if ep:
                        times[mode].extend(current)
    finally:
        for cls, inner in originals.items():
            cls.run_batch = inner
    return {
        mode: {
            "steps": len(ts),
            "median_ms": statistics.median(ts) * 1e3,
            "mean_ms": statistics.fmean(ts) * 1e3,
        }
        for mode, ts in times.items()
    }


def _key(label: str) -> str:
    """A results key docs can point at (figure markers take no spaces): 'isolated, batched' -> 'isolated_batched'."""
    return label.replace(", ", "_").replace(" ", "_").replace("-", "_")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--hangs", type=int, default=3)
    ap.add_argument("--episodes", type=int, default=2, help="SMAX episodes per mode (0: skip)")
    ap.add_argument("--episode-steps", type=int, default=60)
    ap.add_argument("--parts", default="step,episode,hang", help="comma-separated: step, episode, hang")
    add_results_arguments(ap)
    args = ap.parse_args()
    preflight(args.allow_dirty, [observations_path("combat")])
    views = [view_from_text(t) for t in load_observations(observations_path("combat"))]

    results: dict = {
        "load_avg_before": os.getloadavg(),
        "args": vars(args),
        "step": {},
    }
    parts = set(args.parts.split(","))
    for n in (5, 10) if "step" in parts else ():
        r = bench_step(n, args.steps, args.rounds, views)
        base = r["in-process sandbox"]
        results["step"][f"agents_{n}"] = {
            _key(mode): m | {"wall_x": m["wall_ms"] / base["wall_ms"], "cpu_x": m["cpu_ms"] / base["cpu_ms"]}
            for mode, m in r.items()
        }
        print(f"\n== {n} agents, {SKILL}: per step (median of {args.rounds} rounds x {args.steps} steps)")
        print(f"{'mode':24s} {'wall ms':>9s} {'x in-proc':>9s} {'CPU ms':>9s} {'x in-proc':>9s}")
        for name, m in r.items():
            print(
                f"{name:24s} {m['wall_ms']:9.3f} {m['wall_ms'] / base['wall_ms']:9.2f} "
                f"{m['cpu_ms']:9.3f} {m['cpu_ms'] / base['cpu_ms']:9.2f}"
            )
    if args.episodes and "episode" in parts:
        results["episode"] = ep = bench_episode(args.episode_steps, args.episodes)
        ep["process_over_inprocess"] = ep["process"]["median_ms"] / ep["inprocess"]["median_ms"]
        print(
            f"\n== in SMAX episodes (protoss 5v5, {args.episodes} x {args.episode_steps} steps per mode, alternating)"
        )
        for mode in ("inprocess", "process"):
            m = ep[mode]
            ratio = m["median_ms"] / ep["inprocess"]["median_ms"]
            print(
                f"{mode:12s} skill time per step: median {m['median_ms']:.3f} ms ({ratio:.2f} x), mean {m['mean_ms']:.3f} ms"
            )
    hang = bench_hang(args.hangs, views) if "hang" in parts else {}
    results["hang"] = {_key(mode): m for mode, m in hang.items()}
    if hang:
        print(f"\n== a skill stuck in C as agent 2 of 5 (median of {args.hangs})")
    for name, m in hang.items():
        print(
            f"{name:12s} hard deadline {m['hard_deadline_s']:.2f} s; replace {m['replace_s'] * 1e3:7.1f} ms; "
            f"whole batch {m['batch_with_hang_s']:.2f} s"
        )
    results["load_avg_after"] = os.getloadavg()
    write_results(
        "bench_sandbox",
        results,
        notes="timings; load averages before/after in the results",
        inputs=[observations_path("combat")],
        allow_dirty=args.allow_dirty,
    )


if __name__ == "__main__":
    main()
