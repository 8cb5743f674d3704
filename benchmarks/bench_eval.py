"""Eval throughput (serial, 2 local workers, Ray) and the paper's ablation grid with CIs.

Run (full, ~10 min on 2 shared cores): ``python benchmarks/bench_eval.py``
Quick (~3 min):                        ``python benchmarks/bench_eval.py --seeds 12 --grid-seeds 10``
Only one part:                         ``--parts throughput``, ``--parts grid`` or ``--parts table2``
The paper's Table 2 (not in the default parts): ``python benchmarks/bench_eval.py --parts table2``

1. throughput: library-only SMAX protoss 5v5 (``planner: library``, multi-hop comm, full 200-step
   limit), the same seeds played by ``compass eval`` with 1 local worker (in process), 2 local
   worker processes and Ray (a private local instance with 2 CPUs), one after the other in this
   run. Episodes per minute end to end (including starting workers, JAX compiles from the on-disk
   cache and loading the embedding model) and in steady state (first to last finished episode).
   The three must give identical per-seed rows (wall time aside). Episodes are played one by
   one (``--batch 1``); batched episodes are ``benchmarks/bench_batch.py``'s part.
2. grid: ``examples/eval/ablation.yaml`` (comm none / one-hop / multi-hop x EPO off / on, library
   planner) over N seeds with 2 workers; win rates with the report's 95% CIs (Wilson over episodes since
   274635b; the shipped eval_ablation files predate it and show seed-bootstrap CIs) as a PNG.
3. table2: ``examples/eval/table2.yaml``, the paper's Table 2 setting, everything under EPO: library
   planner with comm none / one-hop / multi-hop, MAPPO trained under EPO (``demos/*_epo/checkpoint``,
   one per scenario), SMAX's heuristic; protoss/terran/zerg 5v5 and 5v6; N seeds (default 40) with 2
   workers; win rates with Wilson 95% CIs over episodes.

Results: ``benchmarks/results/bench_eval.json``, ``eval_ablation.png``, ``eval_ablation.md``;
``bench_eval_table2.json``, ``eval_table2.md``, ``eval_table2.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.eval.driver import prepare, run_eval  # noqa: E402
from compass.eval.report import write_report  # noqa: E402
from compass.eval.spec import for_env, load_spec, parse_spec  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SPEC = ROOT / "examples" / "eval" / "ablation.yaml"
TABLE2_SPEC = ROOT / "examples" / "eval" / "table2.yaml"
THROUGHPUT_SPEC = """\
name: {name}
envs: [smax:protoss_5_vs_5]
seeds: {seeds}
base: {{planner: library}}
"""


def timed_eval(tmp: Path, name: str, seeds: int, workers: int, ray: str | None) -> dict:
    plan = parse_spec(THROUGHPUT_SPEC.format(name=name, seeds=seeds), f"{name}.yaml", workers=workers)
    prepared = prepare(plan, tmp)
    arrivals: list[float] = []
    t0 = time.perf_counter()
    # One by one (--batch 1): episodes in one batched env are benchmarks/bench_batch.py's part.
    rows = run_eval(prepared, workers, ray, on_row=lambda r: arrivals.append(time.perf_counter()), batch=1)
    total = time.perf_counter() - t0
    steady = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]) * 60 if len(arrivals) > 1 else float("nan")
    return {
        "episodes": len(rows),
        "seconds": round(total, 2),
        "episodes_per_minute": round(len(rows) / total * 60, 2),
        "steady_episodes_per_minute": round(steady, 2),
        "first_episode_after_s": round(arrivals[0] - t0, 2),
        "mean_episode_wall_s": round(sum(r["wall_s"] for r in rows) / len(rows), 3),
        "win_rate": sum(r["win"] for r in rows) / len(rows),
        "mean_steps": sum(r["steps"] for r in rows) / len(rows),
        "_rows": rows,
    }


def bench_throughput(seeds: int) -> dict:
    modes = [
        ("serial", 1, None),  # 1 worker, in process
        ("local_2_workers", 2, None),
        ("ray_local_2_cpus", 2, "local"),
    ]
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for i, (label, workers, ray) in enumerate(modes):
            load = os.getloadavg()[0]
            r = timed_eval(Path(d), f"tp{i}", seeds, workers, ray)
            r["load_avg_1min_before"] = round(load, 2)
            out[label] = r
            print(
                f"{label:32s} {r['episodes']:3d} episodes in {r['seconds']:7.1f} s: "
                f"{r['episodes_per_minute']:6.1f} episodes/min end to end, "
                f"{r['steady_episodes_per_minute']:6.1f} steady; first result after {r['first_episode_after_s']:.1f} s "
                f"(load avg {load:.1f})",
                flush=True,
            )
    key = lambda r: (r["config"], r["seed"])  # noqa: E731
    same = [
        sorted(({k: v for k, v in x.items() if k != "wall_s"} for x in m.pop("_rows")), key=key)
        for m in out.values()
    ]
    identical = all(s == same[0] for s in same)
    print(f"per-seed rows identical across the three modes: {identical}")
    serial = out["serial"]
    return {
        "modes": out,
        "identical_per_seed_rows": identical,
        "speedup_2_workers_end_to_end": round(
            out["local_2_workers"]["episodes_per_minute"] / serial["episodes_per_minute"], 2
        ),
        "speedup_ray_end_to_end": round(
            out["ray_local_2_cpus"]["episodes_per_minute"] / serial["episodes_per_minute"], 2
        ),
        "speedup_2_workers_steady": round(
            out["local_2_workers"]["steady_episodes_per_minute"] / serial["steady_episodes_per_minute"], 2
        ),
        "speedup_ray_steady": round(
            out["ray_local_2_cpus"]["steady_episodes_per_minute"] / serial["steady_episodes_per_minute"], 2
        ),
    }


def play_spec(plan, title: str, stem: str) -> tuple[list, float, dict]:
    """Play an eval spec's whole grid in a scratch folder: its rows, the seconds it took and its
    report summary; the report's PNG and markdown are kept as ``results/<stem>.png`` / ``.md``."""
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        rows = run_eval(prepare(plan, d), plan.workers)
        seconds = time.perf_counter() - t0
        summary = write_report(Path(d) / plan.name, rows, title, [c.name for c in plan.configs])
        RESULTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(d) / plan.name / "report.png", RESULTS / f"{stem}.png")
        shutil.copy(Path(d) / plan.name / "report.md", RESULTS / f"{stem}.md")
    return rows, seconds, summary


def bench_grid(seeds: int, workers: int) -> dict:
    plan = load_spec(SPEC, seeds=seeds, workers=workers)
    rows, seconds, summary = play_spec(
        plan, f"ablation: library planner, protoss 5v5, {seeds} seeds", "eval_ablation"
    )
    env = summary["envs"]["smax:protoss_5_vs_5"]
    print(f"\nablation grid: {len(rows)} episodes in {seconds:.0f} s with {workers} workers")
    for c, m in env["configs"].items():
        lo, hi = m["win"]["ci95"]
        print(f"  {c:28s} win {m['win']['mean']:.2f} [{lo:.2f}, {hi:.2f}]  steps {m['steps']:.0f}")
    return {
        "seeds": seeds,
        "workers": workers,
        "episodes": len(rows),
        "seconds": round(seconds, 1),
        "summary": env,
    }


def table2_checkpoints(plan) -> list[Path]:
    """The checkpoint directories the Table 2 spec's ``mappo:`` teams read, one per scenario."""
    dirs: list[Path] = []
    for config in plan.configs:
        for env in plan.envs:
            team = for_env({"team": config.team}, env)["team"]
            dirs += [ROOT / d for d in re.findall(r"mappo:([^\s,]+)", team) if ROOT / d not in dirs]
    return dirs


def bench_table2(seeds: int, workers: int) -> tuple[dict, list[Path]]:
    plan = load_spec(TABLE2_SPEC, seeds=seeds, workers=workers)
    checkpoints = table2_checkpoints(plan)
    missing = [str(d.relative_to(ROOT)) for d in checkpoints if not (d / "meta.json").is_file()]
    if missing:
        sys.exit(f"error: table2 needs the EPO-trained checkpoints; missing: {', '.join(missing)}")
    load = os.getloadavg()[0]
    rows, seconds, summary = play_spec(
        plan, f"Table 2 setting, all under EPO: {seeds} seeds per cell", "eval_table2"
    )
    print(
        f"\nTable 2 grid: {len(rows)} episodes in {seconds:.0f} s with {workers} workers (load avg {load:.1f} before)"
    )
    table: dict[str, dict] = {}
    for env, data in summary["envs"].items():
        scenario = env.split(":", 1)[1]  # figure markers' paths take no ':'
        table[scenario] = {}
        for c, m in data["configs"].items():
            lo, hi = m["win"]["ci95"]
            table[scenario][c] = {
                "win": m["win"]["mean"],
                "ci95": [lo, hi],
                "episodes": m["episodes"],
                "steps": m["steps"],
                "skill_errors": m["skill_errors"],
            }
            print(
                f"  {scenario:16s} {c:20s} win {m['win']['mean']:.2f} [{lo:.2f}, {hi:.2f}]  steps {m['steps']:.0f}"
            )
    mappo = {}
    for ckpt in checkpoints:
        meta = json.loads((ckpt / "meta.json").read_text())
        mappo[ckpt.parent.name] = {k: meta.get(k) for k in ("env", "epo", "steps", "actor_sha256")}
    result = {
        "seeds": seeds,
        "workers": workers,
        "episodes": len(rows),
        "seconds": round(seconds, 1),
        "load_avg_1min_before": round(load, 2),
        "interval": "wilson",
        "mappo_checkpoints": mappo,
        "table": table,
    }
    return result, checkpoints


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="throughput,grid")
    ap.add_argument("--seeds", type=int, default=40, help="episodes per throughput mode")
    ap.add_argument("--grid-seeds", type=int, default=50)
    ap.add_argument("--table2-seeds", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2, help="workers for the grid and table2")
    add_results_arguments(ap)
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    preflight(args.allow_dirty, [SPEC, TABLE2_SPEC] if "table2" in parts else [SPEC])
    if "throughput" in parts:
        throughput = {"throughput": bench_throughput(args.seeds)}
        write_results(
            "bench_eval",
            throughput,
            seeds=f"0-{args.seeds - 1}",
            notes="load average per mode",
            allow_dirty=args.allow_dirty,
        )
    if "grid" in parts:
        grid = bench_grid(args.grid_seeds, args.workers)
        write_results(
            "bench_eval_grid",
            grid,
            seeds=f"0-{args.grid_seeds - 1}",
            inputs=[SPEC],
            allow_dirty=args.allow_dirty,
        )
    if "table2" in parts:
        table2, checkpoints = bench_table2(args.table2_seeds, args.workers)
        write_results(
            "bench_eval_table2",
            table2,
            seeds=f"0-{args.table2_seeds - 1}",
            notes=(
                "all under EPO; mappo-epo plays demos/<scenario>_epo/checkpoint (trained steps in "
                "mappo_checkpoints); timings under load (load average recorded)"
            ),
            inputs=[TABLE2_SPEC, *checkpoints],
            allow_dirty=args.allow_dirty,
        )


if __name__ == "__main__":
    main()
