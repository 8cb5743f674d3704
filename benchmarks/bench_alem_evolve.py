"""ALEM: does a library evolved under the keep gate score higher than the seed library on unseen seeds?

1. Evolution: ``compass run --planner vlm --keep-gate eval`` on ``alem:hard`` for ``--episodes``
   short episodes on training seeds 0.., against a SCRIPTED OpenAI-wire server (the real
   ``openai`` client, a local HTTP server) that serves a pool of candidate skills written by people
   (``tests/planner/alem_candidates.py``): one that fails on recorded observations, one that idles
   (worse than the seed), and ``survive_then_build`` (the seed generalist ``alem_role_policy``
   with thirst/hunger handled a point earlier). The gate refuses, drops or keeps each; a kept one
   that plays better becomes the library's best for ALEM's default task.
2. Comparison on unseen seeds: the library planner (what ``compass run --env alem:hard --library DIR``
   plays: the task's recorded best, else the top retrieval) with the seed library and with the
   evolved library, on tuning seeds 500.. (never used by the evolution, which plays seeds 0..;
   evaluation seeds are the leaderboard benchmark's only, docs/alem.md), Base/Coord./Total % with 95 %
   bootstrap CIs (the family's scorer); beside them, the seed's generalist ``alem_role_policy``
   played by name (``--reference``), which the seed library does not pick for the task by itself.

    python benchmarks/bench_alem_evolve.py                       # 8 unseen tuning seeds x 3000 steps
    python benchmarks/bench_alem_evolve.py --seeds 4 --steps 1500 --notes "reduced: ..."

The candidates came from a scripted server, not from a model: the figures show what the gate
does with them and what the evolved library is worth, not what a model would write.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.config import RunConfig  # noqa: E402
from compass.core.family import get_family  # noqa: E402
from compass.episode.session import run  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402
from tests.fakes.fake_vlm_server import FakeVLMServer  # noqa: E402
from tests.planner.alem_candidates import BROKEN, WORSE, CandidatePool, better_source  # noqa: E402

# Tuning seeds the evolution never plays (it uses 0..--episodes); not held-out from the library's
# author, who tunes on 0-999 too. Held-out figures come from `bench_alem.py --leaderboard`.
HELD_OUT = 500


def evolve(lib: Path, out: Path, env: str, episodes: int, steps: int, gate_episodes: int, gate_steps: int):
    """Phase 1: a gated VLM run against the scripted candidate pool; returns its summary."""
    script = CandidatePool(synth_agent=0, pool=[BROKEN, WORSE, better_source()])
    with FakeVLMServer(responder=lambda request: script(request.text)) as server:
        cfg = RunConfig(
            env=env,
            planner="vlm",
            vlm=server.spec("openai", "scripted-candidates"),
            library=lib,
            out=out,
            run_id="evolve",
            episodes=episodes,
            max_steps=steps,
            decision_interval=8,
            image=False,
            seed=0,
            keep_gate="eval",
            keep_gate_episodes=gate_episodes,
            keep_gate_steps=gate_steps,
        )
        summary = run(cfg)
    summary["served"] = list(script.served)
    return summary


def held_out(
    library: Path | None, out: Path, run_id: str, env: str, seeds: int, steps: int, skill: str | None = None
) -> dict:
    """Phase 2: the library planner on the unseen tuning seeds; the family's scores and what it played."""
    cfg = RunConfig(
        env=env,
        library=library,
        out=out,
        run_id=run_id,
        episodes=seeds,
        seed=HELD_OUT,
        max_steps=steps,
        skill=skill,
    )
    t0 = time.perf_counter()
    summary = run(
        cfg,
        on_episode=lambda row: print(
            f"  {run_id}: seed {row['seed']}: {row.get('headline', '')}", flush=True
        ),
    )
    played = sorted({k for e in summary["episodes"] for k in e["skills_used"]})
    return {
        "library": run_id,
        "skills_played": played,
        "scores": summary["alem"],
        "per_episode_total_pct": [round(e["alem"]["total_pct"], 4) for e in summary["episodes"]],
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="alem:hard")
    ap.add_argument("--episodes", type=int, default=2, help="evolution episodes (training seeds 0..)")
    ap.add_argument("--train-steps", type=int, default=60, help="steps per evolution episode")
    ap.add_argument("--gate-episodes", type=int, default=2)
    ap.add_argument("--gate-steps", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=8, help="comparison seeds (500..)")
    ap.add_argument("--steps", type=int, default=3000, help="steps per comparison episode")
    ap.add_argument(
        "--reference",
        default="alem_role_policy",
        help="also play this named seed skill on the comparison seeds ('' for none): the seed's generalist",
    )
    ap.add_argument("--notes", default="")
    add_results_arguments(ap)
    args = ap.parse_args()
    preflight(args.allow_dirty, [get_family("alem").seed_skills_dir])

    family = get_family(args.env.split(":")[0])
    task = family.default_task
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lib = tmp / "evolved"
        shutil.copytree(
            family.seed_skills_dir,
            lib / family.name,
            ignore=shutil.ignore_patterns("_stats.json", "__pycache__"),
        )
        print(
            f"evolution: {args.episodes} episode(s) x {args.train_steps} steps on {args.env}, gate eval",
            flush=True,
        )
        t0 = time.perf_counter()
        ev = evolve(
            lib, tmp / "runs", args.env, args.episodes, args.train_steps, args.gate_episodes, args.gate_steps
        )
        evolve_s = time.perf_counter() - t0
        gate = ev["keep_gate"]
        for e in gate["log"]:
            print(f"  {e['verdict']:8} {e['skill']}: {e['reason'][:200]}", flush=True)
        evolved = SkillLibrary(lib, family.name)
        history = {
            name: [v.as_dict() for v in evolved.history(name)] for name in gate["kept"] if name in evolved
        }
        print(
            f"comparison (unseen tuning seeds): {args.seeds} seed(s) from {HELD_OUT} x {args.steps} steps",
            flush=True,
        )
        seed_row = held_out(None, tmp / "runs", "seed", args.env, args.seeds, args.steps)
        evolved_row = held_out(lib, tmp / "runs", "evolved", args.env, args.seeds, args.steps)
        rows = [seed_row, evolved_row]
        if args.reference:
            ref = held_out(None, tmp / "runs", "reference", args.env, args.seeds, args.steps, args.reference)
            rows.append(ref)
    print(f"\n{'library':10} {'plays':28} {'Base%':>16} {'Coord.%':>16} {'Total%':>16}")
    for row in rows:
        s = row["scores"]
        cells = [
            f"{s[k]['mean']:5.2f} [{s[k]['ci95'][0]:5.2f},{s[k]['ci95'][1]:5.2f}]"
            for k in ("base_pct", "coord_pct", "total_pct")
        ]
        print(f"{row['library'][:10]:10} {', '.join(row['skills_played'])[:28]:28} {' '.join(cells)}")
    ratio = evolved_row["scores"]["total_pct"]["mean"] / max(1e-9, seed_row["scores"]["total_pct"]["mean"])
    print(f"evolved / seed Total %: {ratio:.2f}x")
    write_results(
        "bench_alem_evolve",
        {
            "candidates_source": "scripted server (tests/planner/alem_candidates.py), not a model",
            "task": task,
            "env": args.env,
            "evolution": {
                "episodes": args.episodes,
                "steps": args.train_steps,
                "training_seeds": list(range(args.episodes)),
                "served": ev["served"],
                "gate": {k: v for k, v in gate.items() if k != "log"},
                "gate_log": gate["log"],
                "kept_history": history,
                "seconds": round(evolve_s, 1),
            },
            "held_out": {
                "seeds": list(range(HELD_OUT, HELD_OUT + args.seeds)),
                "steps": args.steps,
                "seed_library": seed_row,
                "evolved_library": evolved_row,
                "total_pct_ratio_evolved_over_seed": round(ratio, 3),
                "reference": rows[2] if len(rows) > 2 else None,
            },
        },
        seeds=list(range(HELD_OUT, HELD_OUT + args.seeds)),
        notes=args.notes,
        inputs=[get_family("alem").seed_skills_dir],
        allow_dirty=args.allow_dirty,
    )


if __name__ == "__main__":
    main()
