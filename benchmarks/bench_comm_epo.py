"""Communication under extended partial observability: library-only win rate by comm mode.

Run (full, ~3 min): ``python benchmarks/bench_comm_epo.py``
Quick:              ``python benchmarks/bench_comm_epo.py --seeds 10``

Protoss 5v5 on SMAX with ``--epo`` (SMACv2's EPO: an enemy is observed only by the first agent
that spots it, ``prob_obs_enemy=0``, and attack actions are not masked by range, but an out-of-range attack sends no order), library-only
play with a named skill (``compass.episode.session.run`` with ``skill="race_adaptive_combat"``, i.e.
``compass run --skill race_adaptive_combat``; no retrieval) with
``--comm none | onehop | multihop`` on the same seeds, 95 % Wilson intervals. The same setting
without EPO is the reference. Besides the win rate, the table shows enemies killed per episode and
how much the protocol sent. Results: ``benchmarks/results/bench_comm_epo[_knowledge_only].json``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from benchmarks.bench_combat import play_library  # noqa: E402
from compass.core.family import get_family  # noqa: E402
from compass.eval.stats import wilson_interval  # noqa: E402


def play(
    scenario: str, epo: bool, comm: str, seeds: int, start: int, library: Path, out: Path, skill: str
) -> dict:
    episodes = play_library(scenario, seeds, start, library, out, epo=epo, comm=comm, skill=skill)
    return {
        "wins": sum(e["outcome"] == "win" for e in episodes),
        "timeouts": sum(e["outcome"] == "timeout" for e in episodes),
        "n": len(episodes),
        "steps": sum(e["steps"] for e in episodes) / len(episodes),
        "skill_errors": sum(e["skill_errors"] for e in episodes),
        "dead_enemies": sum(e.get("dead_enemies", 0) for e in episodes) / len(episodes),
        "bytes": sum(e.get("comm", {}).get("total_bytes", 0) for e in episodes) / len(episodes),
    }


def knowledge_only(library: Path) -> None:
    """Ablation: drop the skill's EPO fallback for agents that know of no enemy.

    Without it a unit acts only on enemies it sees or hears about (the paper's setting, where
    agents without communication fall back to "no enemy" behaviour); with it, a unit that knows of
    no enemy walks to the nearest ally whose last action attacked an enemy it does not know of.
    """
    path = library / "combat" / "race_adaptive_combat.py"
    text = path.read_text()
    start = text.index("            if epo:\n                known = ")
    end = text.index("            if spread > group_radius:", start)
    path.write_text(text[:start] + text[end:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--scenario", default="protoss_5_vs_5")
    ap.add_argument("--comms", default="none,onehop,multihop")
    ap.add_argument("--no-reference", action="store_true", help="skip the run without EPO")
    ap.add_argument(
        "--knowledge-only",
        action="store_true",
        help="ablation: without the skill's walk to allies fighting enemies it does not know of",
    )
    ap.add_argument("--skill", default="race_adaptive_combat", help="the named skill every agent runs")
    ap.add_argument("--notes", default="", help="stored with the results, e.g. why seeds were reduced")
    add_results_arguments(ap)
    args = ap.parse_args()
    preflight(args.allow_dirty, [get_family("combat").seed_skills_dir])
    settings = [(True, c) for c in args.comms.split(",")]
    if not args.no_reference:
        settings.append((False, "multihop"))
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        # A private copy of the shipped library: runs update its usage stats.
        shutil.copytree(get_family("combat").seed_skills_dir, tmp / "library" / "combat")
        if args.knowledge_only:
            knowledge_only(tmp / "library")
            print(f"ablation: {args.skill} without its EPO fallback")
        print(
            f"{args.scenario}, library-only, named skill {args.skill}, seeds {args.start}..{args.start + args.seeds - 1}"
        )
        results: dict = {
            "scenario": args.scenario,
            "skill": args.skill,
            "knowledge_only": args.knowledge_only,
        }
        print(
            f"{'setting':18s} {'win rate [95% CI]':>20s} {'enemies killed':>15s} {'timeouts':>9s} "
            f"{'steps':>6s} {'comm kB/ep':>10s} {'sec':>5s}"
        )
        for epo, comm in settings:
            t0 = time.perf_counter()
            r = play(
                args.scenario, epo, comm, args.seeds, args.start, tmp / "library", tmp / "runs", args.skill
            )
            lo, hi = wilson_interval(r["wins"], r["n"])
            results.setdefault("epo" if epo else "no_epo", {})[comm] = {
                **r,
                "rate": r["wins"] / r["n"],
                "ci95": [lo, hi],
                "comm_kb": r["bytes"] / 1e3,
            }
            label = f"{'EPO' if epo else 'no EPO'} {comm}"
            print(
                f"{label:18s} {r['wins'] / r['n']:8.2f} [{lo:4.2f}, {hi:4.2f}] {r['dead_enemies']:15.2f} "
                f"{r['timeouts']:9d} {r['steps']:6.1f} {r['bytes'] / 1e3:10.1f} {time.perf_counter() - t0:5.0f}",
                flush=True,
            )
            if r["skill_errors"]:
                print(f"  ({r['skill_errors']} skill errors)")
    write_results(
        "bench_comm_epo_knowledge_only" if args.knowledge_only else "bench_comm_epo",
        results,
        seeds=f"{args.start}..{args.start + args.seeds - 1}",
        notes=args.notes,
        inputs=[get_family("combat").seed_skills_dir],
        allow_dirty=args.allow_dirty,
    )


if __name__ == "__main__":
    main()
