"""Batched episodes: episodes per minute of ``compass eval`` with N episodes in one vmapped env,
against playing them one by one (serial, and 2 worker processes).

Run (~5 min on 2 cores): ``python benchmarks/bench_batch.py``
Quick check:             ``python benchmarks/bench_batch.py --episodes 8 --rounds 1 --sizes 1,8 --no-write``
ALEM:                    ``python benchmarks/bench_batch.py --env alem:overworld --max-steps 150 --no-pool``

What is timed is :mod:`compass.eval.episode` itself, on the same jobs (SMAX protoss 5v5 or
``--env``, ``planner: library``, the env's step limit, isolated skills: the eval defaults) and seeds
``--seed .. --seed + episodes - 1`` (tuning seeds) in every mode:

* ``serial``: ``play_episode`` job after job in this process (``compass eval --batch 1``);
* ``2 workers``: the same, on a pool of 2 ``spawn`` worker processes (``--workers 2 --batch 1``);
  the pool starts and plays one warm-up episode per worker before the clock;
* ``batched N``: ``play_batch`` on runs of N jobs in this process (N = 1 goes through the
  batched path with one lane: its own cost against ``serial``);
* ``2 workers x batched N``: runs of N on the 2-worker pool (``--workers 2``, the default batch).

Rounds are interleaved (every mode once per round, the order rotated); a mode's figure is its
episodes over its total wall time, across rounds. Envs are compiled (and the embedding model
loaded) before the clock in every process. Every mode must give the same per-seed rows (wall
time aside); the run says whether they did. The load average is recorded before and after:
on a shared machine the figures are taken under that load.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.eval.episode import _play_batch, play_batch, play_episode  # noqa: E402
from compass.eval.spec import Job, parse_spec  # noqa: E402

SPEC = """\
name: bench-batch
envs: [{env}]
seeds: {{start: {seed}, count: {episodes}}}
max_steps: {max_steps}
base: {{planner: library}}
configs:
  - {{name: library, team: "{team}"}}
"""


def _jobs(seed: int, episodes: int, team: str, env: str = "smax:protoss_5_vs_5", max_steps=None) -> list[Job]:
    text = SPEC.format(seed=seed, episodes=episodes, team=team, env=env, max_steps=max_steps or "null")
    return parse_spec(text, "bench-batch.yaml").jobs()


def _runs(jobs: list[Job], n: int) -> list[list[Job]]:
    return [jobs[i : i + n] for i in range(0, len(jobs), n)]


def _batched(chunk: list[Job]) -> list[dict[str, Any]]:
    """A run of jobs through the batched path even when it has one job (``batched 1``)."""
    return _play_batch(chunk)


def _warm(job: Job) -> int:
    play_episode(job)
    return os.getpid()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=32, help="episodes per mode per round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sizes", default="1,8,32", help="batch sizes N (comma-separated)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (tuning seeds)")
    ap.add_argument("--team", default="library", help="the team spec (e.g. heuristic)")
    ap.add_argument("--env", default="smax:protoss_5_vs_5", help="e.g. alem:overworld (tuning seeds only)")
    ap.add_argument("--max-steps", type=int, default=None, help="episode limit (default: the env's)")
    ap.add_argument(
        "--no-pool",
        action="store_true",
        help="skip the 2-worker modes (ALEM: one process importing alem at a time on a shared machine)",
    )
    ap.add_argument("--notes", default="")
    ap.add_argument("--no-write", action="store_true", help="print only (trial runs on a dirty tree)")
    add_results_arguments(ap)
    args = ap.parse_args()
    if not args.no_write:
        preflight(args.allow_dirty)
    sizes = [int(x) for x in args.sizes.split(",") if x]
    if args.env.startswith("alem") and args.seed + args.episodes > 1000:
        ap.error("ALEM seeds 1000 and up are not tuning seeds (compass.games.alem.protocol)")
    jobs = _jobs(args.seed, args.episodes, args.team, args.env, args.max_steps)
    load_before = os.getloadavg()

    # Warm-up outside the clock: this process's envs (serial and every batch size) and the pool's.
    play_episode(jobs[0])
    for n in sizes:
        _batched(jobs[:n])
    pool = None
    half = -(-len(jobs) // 2)  # 2 workers: at most half the episodes each, so both play
    pool_sizes = [] if args.no_pool else sorted({min(n, half) for n in sizes if n > 1})
    if not args.no_pool:
        pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))
        pids: set[int] = set()
        while len(pids) < 2:  # one warm-up episode on each worker
            pids |= set(pool.map(_warm, [jobs[0], jobs[1 % len(jobs)]]))
        for n in pool_sizes:
            list(pool.map(_batched, [jobs[:n], jobs[:n]]))  # compiled for n on both workers (or so)

    modes: dict[str, Any] = {"serial": lambda: [play_episode(j) for j in jobs]}
    if pool is not None:
        modes["2 workers"] = lambda: [r for rows in pool.map(play_batch, _runs(jobs, 1)) for r in rows]
    for n in sizes:
        modes[f"batched {n}"] = lambda n=n: [r for c in _runs(jobs, n) for r in _batched(c)]
    for n in pool_sizes:
        runs = _runs(jobs, n)
        modes[f"2 workers x batched {n}"] = lambda runs=runs: [
            r for rows in pool.map(_batched, runs) for r in rows
        ]
    seconds = dict.fromkeys(modes, 0.0)
    rows: dict[str, list[dict]] = {}
    names = list(modes)
    try:
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                t0 = time.perf_counter()
                out = modes[name]()
                seconds[name] += time.perf_counter() - t0
                rows.setdefault(name, out)
                print(f"round {r + 1} {name:28s} {time.perf_counter() - t0:7.1f} s", flush=True)
    finally:
        if pool is not None:
            pool.shutdown()
    load_after = os.getloadavg()

    def key(row: dict) -> tuple:
        return row["seed"]

    same = {
        n: sorted(({k: v for k, v in x.items() if k != "wall_s"} for x in rs), key=key)
        for n, rs in rows.items()
    }
    identical = all(s == same["serial"] for s in same.values())
    total = args.episodes * args.rounds
    serial_epm = total / seconds["serial"] * 60
    results: dict[str, Any] = {
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        "args": vars(args),
        "identical_per_seed_rows": identical,
        "mean_steps": sum(x["steps"] for x in rows["serial"]) / len(rows["serial"]),
        "modes": {
            n: {
                "seconds": round(s, 2),
                "episodes_per_minute": round(total / s * 60, 2),
                "over_serial": round(total / s * 60 / serial_epm, 2),
            }
            for n, s in seconds.items()
        },
    }
    print(
        f"\n{args.episodes} episodes x {args.rounds} round(s), {args.env}, team {args.team}, "
        f"mean {results['mean_steps']:.0f} steps; load average before/after {load_before[0]:.2f}/{load_after[0]:.2f}"
    )
    print(f"{'mode':30s} {'episodes/min':>12s} {'x serial':>9s}")
    for n, m in results["modes"].items():
        print(f"{n:30s} {m['episodes_per_minute']:12.1f} {m['over_serial']:8.2f}x")
    print(f"per-seed rows identical across modes: {identical}")
    if not identical:
        sys.exit("error: batched rows differ from serial ones")
    if not args.no_write:
        write_results(
            "bench_batch" if args.env == "smax:protoss_5_vs_5" else "bench_batch_" + args.env.split(":")[0],
            results,
            seeds=[j.seed for j in jobs],
            notes=args.notes or "timings; load averages before/after in the results",
        )


if __name__ == "__main__":
    main()
