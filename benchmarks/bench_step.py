"""Per env step: compass's own cost against the game's raw jitted step, and isolated vs in-process skills.

Run (~2 min on 2 cores): ``python benchmarks/bench_step.py``
Only one game:           ``--parts smax`` or ``--parts alem``
A trial run:             ``--out /tmp/x.json`` (written there, never under benchmarks/results)

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
  answers): isolated / in-process, as wall time and as CPU time (this process plus the worker,
  from ``/proc``; a loaded machine inflates wall time, whose wake-ups wait for a core, much
  more than CPU time).

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
from compass.sandbox.isolated import IsolatedExecutor  # noqa: E402
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
    inproc = SkillExecutor(api, seed=seed)
    iso = IsolatedExecutor(api, seed=seed)
    iso.pids()  # waits until the worker is up
    raw, compass, t_inproc, t_iso = [], [], [], []
    raw_cpu, compass_cpu = [], []  # this process's CPU seconds (JAX's threads included) per step
    cpu_inproc = cpu_iso = 0.0  # this process's CPU seconds in each executor's run_batch
    worker_cpu0 = _worker_cpu(iso.pids())
    done, first_seed = 0, seed
    while done < steps:
        views = env.reset(seed)
        comm = CommProtocol("multihop", seed=seed)
        inproc.reset(seed)
        iso.reset(seed)
        for t in range(env.max_steps):
            c0 = time.process_time()
            raw.append(raw_step())
            raw_cpu.append(time.process_time() - c0)
            c0, t0 = time.process_time(), time.perf_counter()
            perceived = _perceived(comm, t, views)
            batch = [(skill, v) for v in perceived if v.alive]
            t_comm, c_comm = time.perf_counter() - t0, time.process_time() - c0
            # The batch through both executors, order alternating; the env takes the in-process
            # answers (the isolated worker's namespaces and random stream are its own).
            for ex in (inproc, iso) if t % 2 else (iso, inproc):
                c0, t0 = time.process_time(), time.perf_counter()
                out = ex.run_batch(batch)
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                if ex is inproc:
                    results, cpu_inproc, c_inproc = out, cpu_inproc + dc, dc
                    t_inproc.append(dt)
                else:
                    cpu_iso += dc
                    t_iso.append(dt)
            answers = iter(results)
            actions = [next(answers).action if v.alive else 0 for v in perceived]
            c0, t0 = time.process_time(), time.perf_counter()
            res = env.step(actions)
            compass.append(t_comm + t_inproc[-1] + time.perf_counter() - t0)
            compass_cpu.append(c_comm + c_inproc + time.process_time() - c0)
            views = res.views
            done += 1
            if res.done or done >= steps:
                break
        seed += 1
    cpu_iso += _worker_cpu(iso.pids()) - worker_cpu0
    iso.close()
    med = statistics.median
    r, c, i, s = med(raw), med(compass), med(t_inproc), med(t_iso)
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
        "skills_inprocess_ms": i * 1e3,
        "skills_isolated_ms": s * 1e3,
        "isolated_over_inprocess": s / i,
        # CPU time (this process, plus the worker for isolated): what the load does not inflate
        "skills_inprocess_cpu_ms": cpu_inproc / done * 1e3,
        "skills_isolated_cpu_ms": cpu_iso / done * 1e3,
        "isolated_over_inprocess_cpu": cpu_iso / cpu_inproc,
    }


def _worker_cpu(pids: list[int]) -> float:
    """User + system CPU seconds of the worker processes so far (Linux ``/proc``)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def bench_smax(steps: int, seed: int) -> dict[str, Any]:
    import jax

    from compass.games.combat.smax import SmaxEnv

    env = SmaxEnv("protoss_5_vs_5")
    env.reset(seed)
    stop = {f"ally_{i}": 4 for i in range(env.n_agents)}  # SMAX's stop action for every unit
    key = jax.random.PRNGKey(0)

    def raw_step() -> float:
        t0 = time.perf_counter()
        jax.block_until_ready(env.native_step(key, env.native_state, stop))
        return time.perf_counter() - t0

    raw_step()  # compiled already by the env; one call to warm the dispatch path
    return _loop(env, "combat", "race_adaptive_combat", raw_step, steps, seed)


def bench_alem(steps: int, seed: int) -> dict[str, Any]:
    import jax
    import numpy as np
    from alem.alem_coop.game_logic import alem_step

    from compass.games.alem.env import make_alem

    env = make_alem("hard")
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

    return _loop(env, "alem", "alem_role_policy", raw_step, steps, seed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="smax,alem", help="comma-separated: smax, alem")
    ap.add_argument("--steps", type=int, default=400, help="timed env steps per game")
    ap.add_argument("--seed", type=int, default=0, help="first episode's seed")
    ap.add_argument(
        "--rounds", type=int, default=5, help="rounds of --steps steps per game (figures: their median)"
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
    results: dict[str, Any] = {"load_avg_before": os.getloadavg(), "args": vars(args)}
    runs = {"smax": ("SMAX protoss 5v5", bench_smax), "alem": ("ALEM hard", bench_alem)}
    rounds: dict[str, list[dict[str, Any]]] = {part: [] for part in parts}
    for _ in range(args.rounds):
        for part in parts:
            rounds[part].append(runs[part][1](args.steps, args.seed))
    for part in parts:
        results[part] = {k: statistics.median(r[k] for r in rounds[part]) for k in rounds[part][0]}
        results[part]["rounds"] = rounds[part]
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
