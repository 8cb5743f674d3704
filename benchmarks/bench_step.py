"""Per env step: compass's own cost against the game's raw jitted step, and isolated vs in-process skills.

Run (~4 min on 2 cores): ``python benchmarks/bench_step.py``
Only one game:           ``--parts smax`` or ``--parts alem``
A trial run:             ``--out /tmp/x.json`` (written there, never under benchmarks/results)
Batches in parts:        ``--sandbox-parts-from 8`` or ``0`` (the isolated executor's ``parts_from``:
                         batches of 8 items or more in parts run as they arrive; 0, one message per
                         batch); default ``auto``, as ``compass run`` settles it: 8 where a core is
                         free of this process (2 cores or more), else 0

Every step of the loop below is what ``compass run --planner library`` does per env step
(:mod:`compass.episode.runner`'s hot loop, minus tracing): the multi-hop comm exchange and relays, every
living agent's skill call in one ``run_batch``, then ``env.step`` (the jitted step, the device
transfer, views; texts only where something reads them). Interleaved in the same loop, on the
same step, the same statistic (median over steps) for:

* raw: the game's own jitted step alone, blocked until done, on the state compass is at
  (SMAX: the heuristic-enemy wrapper's ``step_env``; ALEM: ``alem_step``). Its result is thrown
  away; the compass step then advances the episode.
* compass: comm + the in-process skill batch + ``env.step``. Overhead = compass - raw. Both are
  also timed in this process's CPU time (``*_cpu_ms``, ``overhead_over_raw_cpu``; JAX's threads
  count), which a loaded machine inflates less than wall time.
* the step's skill batch through the isolated executor (worker process, the default) and the
  in-process one, on the same views, in alternating order (the env takes the in-process
  answers): isolated / in-process, as wall time and as CPU time (this thread plus the worker,
  from ``/proc``; a loaded machine inflates wall time, whose wake-ups wait for a core, much
  more than CPU time).
* per batched step (``--batch 8,16``): N episodes played in lockstep as ``compass eval --batch N``
  plays them (:func:`compass.episode.runner.run_batched`: every running episode's skill calls in one
  sandbox batch, a lane per episode, then one ``step_batch`` for all; ended episodes idle until all
  end), the batch timed through both executors as above: the fixed cost of a worker round trip is
  shared by N episodes, the cost per view is not. ``--batch-steps`` batched steps per size and round.

Skills: ``race_adaptive_combat`` (SMAX protoss 5v5), ``alem_role_policy`` (ALEM hard, 3 agents):
the library defaults the benchmarks use. Episodes start at ``--seed`` and go on until ``--steps``
steps are timed; that loop is one round. The jitted step's own time moves by up to a third between
runs on the same machine (SMAX 0.23-0.30 ms), and every ratio with it, so the loop plays
``--rounds`` rounds (the same seeds, alternating the games) and each figure is the median of its
rounds' figures; every round's figures are stored beside them (``rounds``), and the printout
gives the overhead/raw range. The machine's load average is recorded before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from benchmarks._results import write_results  # noqa: E402
from compass.comm import CommProtocol  # noqa: E402
from compass.sandbox import SkillExecutor  # noqa: E402
from compass.sandbox.executors import resolve_parts_from  # noqa: E402
from compass.sandbox.isolated import PARTS_FROM, IsolatedExecutor  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402


def _perceived(comm: CommProtocol, t: int, views: list) -> list:
    """The runner's ``_perceived``: exchange, then each agent's view plus its relays."""
    comm.exchange(t, views)
    out = []
    for v in views:
        relayed = comm.relayed_for(v.agent_id, v) if v.alive else ()
        out.append(v.with_entities(v.entities + tuple(relayed)) if relayed else v)
    return out


def _loop(env: Any, family: str, skill_name: str, raw_step, steps: int, seed: int) -> dict[str, Any]:
    """Time ``steps`` env steps: raw, compass, and the skill batch isolated vs in-process."""
    skill = SkillLibrary(None, family).compiled[skill_name]
    api = f"compass.games.{family}.skill_api"
    pair = _Pair(api, seed)
    raw, compass = [], []
    raw_cpu, compass_cpu = [], []  # this process's CPU seconds (JAX's threads included) per step
    done, first_seed = 0, seed
    while done < steps:
        views = env.reset(seed)
        comm = CommProtocol("multihop", seed=seed)
        pair.reset_lanes([seed])
        for t in range(env.max_steps):
            c0 = time.process_time()
            raw.append(raw_step())
            raw_cpu.append(time.process_time() - c0)
            c0, t0 = time.process_time(), time.perf_counter()
            perceived = _perceived(comm, t, views)
            batch = [(skill, v) for v in perceived if v.alive]
            t_comm, c_comm = time.perf_counter() - t0, time.process_time() - c0
            results, c_inproc = pair.run(batch, None, t)
            answers = iter(results)
            actions = [next(answers).action if v.alive else 0 for v in perceived]
            c0, t0 = time.process_time(), time.perf_counter()
            res = env.step(actions)
            compass.append(t_comm + pair.t_inproc[-1] + time.perf_counter() - t0)
            compass_cpu.append(c_comm + c_inproc + time.process_time() - c0)
            views = res.views
            done += 1
            if res.done or done >= steps:
                break
        seed += 1
    skills = pair.close(done)
    med = statistics.median
    r, c = med(raw), med(compass)
    return {
        "steps": done,
        "episodes": seed - first_seed,
        "raw_ms": r * 1e3,
        "compass_ms": c * 1e3,
        "overhead_ms": (c - r) * 1e3,
        "overhead_over_raw": (c - r) / r,
        # the same in CPU time (medians): what a loaded machine inflates less than wall time
        "raw_cpu_ms": med(raw_cpu) * 1e3,
        "compass_cpu_ms": med(compass_cpu) * 1e3,
        "overhead_over_raw_cpu": (med(compass_cpu) - med(raw_cpu)) / med(raw_cpu),
        **skills,
    }


class _Pair:
    """The in-process and the isolated executor, timed on the same skill batches.

    Each batch goes through both, the order alternating by step; the caller takes the in-process
    answers (the isolated worker's namespaces and random stream are its own).
    """

    def __init__(self, api: str, seed: int) -> None:
        self.inproc = SkillExecutor(api, seed=seed)
        self.iso = IsolatedExecutor(api, seed=seed, parts_from=_PARTS_FROM[0])
        self.t_inproc: list[float] = []  # wall seconds per batch
        self.t_iso: list[float] = []
        # CPU seconds of this thread in each run_batch: not the process's, whose other threads
        # (BLAS, JAX) can spin or work meanwhile (ALEM batched rounds' ratios ran 0.9-3.4x so)
        self.cpu_inproc = self.cpu_iso = 0.0
        self._seeds = [seed]
        self._worker_cpu0: float | None = None  # the worker's CPU seconds once it is warm

    def reset_lanes(self, seeds: list[int]) -> None:
        self._seeds = list(seeds)
        self.inproc.reset_lanes(seeds)
        self.iso.reset_lanes(seeds)

    def run(self, batch: list, lanes: list[int] | None, t: int) -> tuple[list, float]:
        """The in-process results of ``batch`` and the CPU seconds they took (the process's)."""
        if self._worker_cpu0 is None:
            # Once, untimed: the worker compiles the skill from source on its first batch (the
            # in-process executor runs the library's compiled skill), a cost per run, not per step.
            self.iso.run_batch(batch, lanes)
            self.iso.reset_lanes(self._seeds)
            self._worker_cpu0 = _worker_cpu(self.iso.pids())
        for ex in (self.inproc, self.iso) if t % 2 else (self.iso, self.inproc):
            c0, h0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
            out = ex.run_batch(batch, lanes)
            dt, dh = time.perf_counter() - t0, time.thread_time() - h0
            if ex is self.inproc:
                results, c_inproc = out, time.process_time() - c0
                self.cpu_inproc += dh
                self.t_inproc.append(dt)
            else:
                self.cpu_iso += dh
                self.t_iso.append(dt)
        return results, c_inproc

    def close(self, batches: int) -> dict[str, float]:
        """Stop the worker; the figures per batch: wall medians, CPU means, their ratios."""
        self.cpu_iso += _worker_cpu(self.iso.pids()) - self._worker_cpu0
        self.iso.close()
        i, s = statistics.median(self.t_inproc), statistics.median(self.t_iso)
        return {
            "skills_inprocess_ms": i * 1e3,
            "skills_isolated_ms": s * 1e3,
            "isolated_over_inprocess": s / i,
            # CPU time (this thread, plus the worker for isolated): what the load does not inflate
            "skills_inprocess_cpu_ms": self.cpu_inproc / batches * 1e3,
            "skills_isolated_cpu_ms": self.cpu_iso / batches * 1e3,
            "isolated_over_inprocess_cpu": self.cpu_iso / self.cpu_inproc,
        }


def _batched_loop(envs: list[Any], family: str, skill_name: str, steps: int, seed: int) -> dict[str, Any]:
    """Time ``steps`` batched steps of ``len(envs)`` episodes in lockstep, as ``compass eval --batch``
    plays them (:func:`compass.episode.runner.run_batched`): every running episode's skill calls in
    one ``run_batch`` (a lane per episode), isolated vs in-process as in :func:`_loop`, then one
    ``step_batch`` for all; an ended episode idles until all end, then the next seeds start."""
    skill = SkillLibrary(None, family).compiled[skill_name]
    pair = _Pair(f"compass.games.{family}.skill_api", seed)
    n = len(envs)
    done = calls = 0
    first_seed = seed
    while done < steps:
        seeds = list(range(seed, seed + n))
        views = [env.reset(s) for env, s in zip(envs, seeds, strict=True)]
        comms = [CommProtocol("multihop", seed=s) for s in seeds]
        pair.reset_lanes(seeds)
        running = list(range(n))
        for t in range(envs[0].max_steps):
            perceived = {i: _perceived(comms[i], t, views[i]) for i in running}
            batch = [(skill, v) for i in running for v in perceived[i] if v.alive]
            lanes = [i for i in running for v in perceived[i] if v.alive]
            answers = iter(pair.run(batch, lanes, t)[0])
            calls += len(batch)
            inputs = [
                envs[i].step_begin([next(answers).action if v.alive else 0 for v in perceived[i]])
                if i in perceived
                else envs[i].step_idle()
                for i in range(n)
            ]
            outs = envs[0].step_batch(inputs)
            still = []
            for i in running:
                res = envs[i].step_end(outs[i])
                views[i] = res.views
                if not res.done:
                    still.append(i)
            running = still
            done += 1
            if not running or done >= steps:
                break
        seed += n
    return {
        "batch": n,
        "steps": done,
        "episodes": seed - first_seed,
        "calls_per_step": calls / done,
        **pair.close(done),
    }


def _worker_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) of the worker processes so far, all their threads (Linux ``/proc``).

    From each thread's ``schedstat`` (nanoseconds): ``stat``'s clock ticks (10 ms) came to
    +-15% of a 400-step SMAX run's worker time (~70 ms). Ticks where schedstat is missing.
    """
    total = 0.0
    for pid in pids:
        tasks = sorted(Path(f"/proc/{pid}/task").glob("*/schedstat"))
        if tasks:
            total += sum(int(t.read_text().split()[0]) for t in tasks) / 1e9
        else:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


_PARTS_FROM: list[int | None] = [None]  # the isolated executor's parts_from (--sandbox-parts-from)
_LANE_ENVS: dict[str, list[Any]] = {}  # per game: envs for the batched loops, kept across rounds
_SKILLS = {"smax": ("combat", "race_adaptive_combat"), "alem": ("alem", "alem_role_policy")}


def _make_env(game: str) -> Any:
    if game == "smax":
        from compass.games.combat.smax import SmaxEnv

        return SmaxEnv("protoss_5_vs_5")
    from compass.games.alem.env import make_alem

    return make_alem("hard")


def bench_batched(game: str, sizes: list[int], steps: int, seed: int) -> dict[str, dict[str, Any]]:
    """:func:`_batched_loop` for ``game`` at each batch size (its envs made once per process)."""
    envs = _LANE_ENVS.setdefault(game, [])
    while len(envs) < max(sizes):
        envs.append(_make_env(game))
    family, skill = _SKILLS[game]
    return {str(n): _batched_loop(envs[:n], family, skill, steps, seed) for n in sizes}


def bench_smax(steps: int, seed: int) -> dict[str, Any]:
    import jax

    env = _make_env("smax")
    env.reset(seed)
    stop = {f"ally_{i}": 4 for i in range(env.n_agents)}  # SMAX's stop action for every unit
    key = jax.random.PRNGKey(0)

    def raw_step() -> float:
        t0 = time.perf_counter()
        jax.block_until_ready(env.native_step(key, env.native_state, stop))
        return time.perf_counter() - t0

    raw_step()  # compiled already by the env; one call to warm the dispatch path
    return _loop(env, *_SKILLS["smax"], raw_step, steps, seed)


def bench_alem(steps: int, seed: int) -> dict[str, Any]:
    import jax
    import numpy as np
    from alem.alem_coop.game_logic import alem_step

    env = _make_env("alem")
    c = env._c
    raw = jax.jit(lambda k, s, a: alem_step(k, s, a, c.env_params, c.static_params))
    key = jax.random.PRNGKey(0)
    noop = np.zeros(env.n_agents, np.int32)
    env.reset(seed)
    jax.block_until_ready(raw(key, env.state, noop))  # compile outside the clock

    def raw_step() -> float:
        t0 = time.perf_counter()
        jax.block_until_ready(raw(key, env.state, noop))
        return time.perf_counter() - t0

    return _loop(env, *_SKILLS["alem"], raw_step, steps, seed)


def _medians(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the rounds, and the rounds themselves."""
    return {**{k: statistics.median(r[k] for r in rounds) for k in rounds[0]}, "rounds": rounds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="smax,alem", help="comma-separated: smax, alem")
    ap.add_argument("--steps", type=int, default=400, help="timed env steps per game")
    ap.add_argument("--seed", type=int, default=0, help="first episode's seed")
    ap.add_argument(
        "--rounds", type=int, default=5, help="rounds of --steps steps per game (figures: their median)"
    )
    ap.add_argument(
        "--batch",
        default="8,16",
        help="episodes per batched step (comma-separated; '' for none): isolated vs in-process per batched step",
    )
    ap.add_argument("--batch-steps", type=int, default=150, help="timed batched steps per game and size")
    ap.add_argument(
        "--sandbox-parts-from",
        default="auto",
        help=f"isolated batches of this many items or more go in parts (e.g. {PARTS_FROM}; 0: one message "
        f"per batch; auto: {PARTS_FROM} where a core is free of this process, as compass run settles it)",
    )
    ap.add_argument("--notes", default="", help="stored with the results")
    ap.add_argument("--no-write", action="store_true", help="print only (trial runs on a dirty tree)")
    ap.add_argument(
        "--out",
        type=Path,
        help="write the results JSON here, not under benchmarks/results (trial runs; no provenance)",
    )
    args = ap.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    unknown = set(parts) - {"smax", "alem"}
    if unknown:
        ap.error(f"unknown part(s) {', '.join(sorted(unknown))}; valid: smax, alem")
    if args.rounds < 1 or args.steps < 1:
        ap.error("--rounds and --steps must be at least 1")
    try:
        sizes = [int(x) for x in args.batch.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--batch takes comma-separated episode counts, got {args.batch!r}")
    if any(n < 2 for n in sizes) or (sizes and args.batch_steps < 1):
        ap.error(
            "--batch sizes must be at least 2 (1 is the single-episode figure) and --batch-steps at least 1"
        )
    if args.sandbox_parts_from != "auto" and not args.sandbox_parts_from.isdigit():
        ap.error(f"--sandbox-parts-from takes auto or a number (0: off), got {args.sandbox_parts_from!r}")
    # One process plays here, as in ``compass run``: auto is on where a second core is free.
    setting = "auto" if args.sandbox_parts_from == "auto" else int(args.sandbox_parts_from) or None
    _PARTS_FROM[0] = resolve_parts_from(setting, players=1)
    results: dict[str, Any] = {
        "load_avg_before": os.getloadavg(),
        "args": vars(args),
        "sandbox_parts_from": _PARTS_FROM[0],  # as settled (auto: by this machine's cores)
    }
    runs = {"smax": ("SMAX protoss 5v5", bench_smax), "alem": ("ALEM hard", bench_alem)}
    rounds: dict[str, list[dict[str, Any]]] = {part: [] for part in parts}
    batched: dict[str, list[dict[str, Any]]] = {part: [] for part in parts}
    for _ in range(args.rounds):
        for part in parts:
            rounds[part].append(runs[part][1](args.steps, args.seed))
            if sizes:
                batched[part].append(bench_batched(part, sizes, args.batch_steps, args.seed))
    for part in parts:
        results[part] = _medians(rounds[part])
        if sizes:
            results[part]["batched"] = {str(n): _medians([b[str(n)] for b in batched[part]]) for n in sizes}
    results["load_avg_after"] = os.getloadavg()
    print(
        f"\nper env step, medians over {args.steps} steps, then the median of {args.rounds} rounds; load average before/after "
        f"{results['load_avg_before'][0]:.2f}/{results['load_avg_after'][0]:.2f}"
    )
    print(
        f"{'game':18s} {'raw ms':>8s} {'compass ms':>10s} {'overhead/raw':>12s} "
        f"{'skills in-proc':>14s} {'isolated':>9s} {'iso/in-proc':>11s} {'CPU iso/in-proc':>15s} {'CPU overhead/raw':>16s}"
    )
    for part in parts:
        r = results[part]
        print(
            f"{runs[part][0]:18s} {r['raw_ms']:8.3f} {r['compass_ms']:10.3f} {r['overhead_over_raw']:11.2f}x "
            f"{r['skills_inprocess_ms']:13.3f}  {r['skills_isolated_ms']:8.3f} {r['isolated_over_inprocess']:10.2f}x"
            f" {r['isolated_over_inprocess_cpu']:14.2f}x {r['overhead_over_raw_cpu']:15.2f}x"
        )
        spread = sorted(x["overhead_over_raw"] for x in r["rounds"])
        print(f"{'':18s} overhead/raw by round: {', '.join(f'{x:.2f}x' for x in spread)}")
    if sizes:
        print(
            f"\nper batched step (N episodes, one sandbox batch), medians over {args.batch_steps} steps, "
            f"then the median of {args.rounds} rounds; isolated batches in parts from "
            f"{_PARTS_FROM[0] or 'never'} items (--sandbox-parts-from {args.sandbox_parts_from})"
        )
        print(
            f"{'game':18s} {'N':>3s} {'calls':>6s} {'skills in-proc':>14s} {'isolated':>9s} "
            f"{'iso/in-proc':>11s} {'CPU iso/in-proc':>15s}"
        )
        for part in parts:
            for n in sizes:
                b = results[part]["batched"][str(n)]
                print(
                    f"{runs[part][0]:18s} {n:3d} {b['calls_per_step']:6.1f} {b['skills_inprocess_ms']:13.3f}  "
                    f"{b['skills_isolated_ms']:8.3f} {b['isolated_over_inprocess']:10.2f}x"
                    f" {b['isolated_over_inprocess_cpu']:14.2f}x"
                )
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=1, default=str) + "\n")
        return
    if args.no_write:
        return
    name = "bench_step" if parts == ["smax", "alem"] else "bench_step_" + "_".join(parts)
    write_results(name, results, notes=args.notes or "timings; load averages before/after in the results")


if __name__ == "__main__":
    main()
