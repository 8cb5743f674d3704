"""Time JaxMARL's reference MAPPO (``baselines/MAPPO/mappo_rnn_smax.py``) on this machine.

JaxMARL's baselines are not in the ``jaxmarl`` wheel and need ``hydra-core``, ``wandb`` and
``distrax``, so ``bench_demos.py --jaxmarl-ref SCRIPT --jaxmarl-python PY`` runs this file in a
subprocess under that interpreter. It loads the script and its YAML config, overrides the sizes,
replaces ``wandb.log`` (called once per update from inside the compiled training loop) by a
clock, and prints one JSON line: env steps per second between the first and the last update, so
compilation is left out, plus the training win rates it logged.

    PY benchmarks/_jaxmarl_ref.py SCRIPT --map smacv2_5_units --num-envs 64 --updates 12
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("script", type=Path, help="JaxMARL's baselines/MAPPO/mappo_rnn_smax.py")
    ap.add_argument("--map", default="smacv2_5_units")
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--num-steps", type=int, default=128)
    ap.add_argument("--updates", type=int, default=12)
    args = ap.parse_args()

    import jax
    import wandb
    import yaml

    config_path = args.script.parent / "config" / "mappo_homogenous_rnn_smax.yaml"
    config = yaml.safe_load(config_path.read_text())
    config.update(
        MAP_NAME=args.map,
        NUM_ENVS=args.num_envs,
        NUM_STEPS=args.num_steps,
        TOTAL_TIMESTEPS=args.updates * args.num_envs * args.num_steps,
        WANDB_MODE="disabled",
    )
    ticks: list[tuple[float, dict]] = []
    wandb.log = lambda metrics, *a, **k: ticks.append((time.perf_counter(), metrics))

    spec = importlib.util.spec_from_file_location("jaxmarl_mappo_reference", args.script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    start = time.perf_counter()
    jax.block_until_ready(jax.jit(module.make_train(config))(jax.random.PRNGKey(0)))
    total = time.perf_counter() - start
    if len(ticks) < 2:
        raise SystemExit(f"the reference logged {len(ticks)} updates; need at least 2 to time")
    per_update = args.num_envs * args.num_steps
    span = ticks[-1][0] - ticks[0][0]
    print(
        json.dumps(
            {
                "script": str(args.script),
                "map": args.map,
                "num_envs": args.num_envs,
                "num_steps": args.num_steps,
                "updates": len(ticks),
                "steps_per_s": round(per_update * (len(ticks) - 1) / span, 1),
                "seconds_incl_compile": round(total, 1),
                "train_win_rates": [round(float(m["win_rate"]), 3) for _, m in ticks],
            }
        )
    )


if __name__ == "__main__":
    main()
