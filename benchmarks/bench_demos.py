"""Demonstrations benchmark: trainer throughput, learning curves, and win rates on held-out seeds.

1. Trainer env steps/s vs the raw vmapped SMAX step with random legal actions (the limit), both
   with the shipped config's 64 envs x 128 steps, alternating in this run, best of ``--reps`` each.
2. Learning curves per race from the shipped trainings (``demos/<scenario>/metrics.jsonl``) -> PNG.
3. Win rates with Wilson 95 % CIs on the same held-out seeds per race, played through the compass
   adapter: MAPPO greedy (the shipped checkpoint), the seed library, the library after offline
   bootstrapping (fitted on ``demos/<scenario>/episodes``); plus every agent running the named
   skill ``race_adaptive_combat`` before and after the offline fit. (VLM bootstrapping against a
   scripted server is not a row: retrieval from the task plays the same skill with or without its
   candidates, so the row could not differ from the offline one; ``tests/demos/test_bootstrap.py``
   covers that pipeline.)

Writes ``benchmarks/results/<--name>.json`` (``benchmarks/_results.py``) and
``benchmarks/results/demos_learning_curves.png``.

    python benchmarks/bench_demos.py                       # full (see benchmarks/README.md)
    python benchmarks/bench_demos.py --seeds 5 --races protoss --parts winrates
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.eval.stats import wilson_interval  # noqa: E402

RACES = ("protoss", "terran", "zerg")
EVAL_SEED = 20_000
NAMED = "race_adaptive_combat"  # the seed skill whose parameters the offline fit changes most  # held out: not used by recording (0..) nor by bootstrap evaluation (10_000..)


def throughput(reps: int) -> dict:
    import jax
    import jax.numpy as jnp

    from compass.marl.config import load_config
    from compass.marl.train import Trainer, device_description
    from compass.util.jax_cache import enable_jax_cache

    enable_jax_cache()
    cfg = load_config(ROOT / "demos" / "mappo.yaml")
    cfg = cfg.model_copy(update={"env": "smax:protoss_5_vs_5"})
    tr = Trainer.build(cfg)
    env = tr.env

    @jax.jit
    def raw(key):
        def body(carry, k):
            es, obs = carry
            k1, k2 = jax.random.split(k)
            logits = jnp.where(obs.avail, 0.0, -1e10)
            a = jax.random.categorical(k1, logits)
            obs, es, *_ = jax.vmap(env.step)(jax.random.split(k2, cfg.num_envs), es, a)
            return (es, obs), None

        obs, es0 = jax.vmap(env.reset)(jax.random.split(key, cfg.num_envs))
        (es, _), _ = jax.lax.scan(body, (es0, obs), jax.random.split(key, cfg.num_steps))
        return es.t.sum()

    st = tr.init(jax.random.PRNGKey(0))
    jax.block_until_ready(raw(jax.random.PRNGKey(1)))
    st, _ = tr.update(st)  # compile
    raw_t, upd_t = [], []
    for r in range(reps):  # alternate, so both see the same machine load
        t = time.perf_counter()
        jax.block_until_ready(raw(jax.random.PRNGKey(r + 2)))
        raw_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        st, m = tr.update(st)
        jax.block_until_ready(m["loss"])
        upd_t.append(time.perf_counter() - t)
    n = cfg.num_envs * cfg.num_steps
    raw_sps, upd_sps = n / min(raw_t), n / min(upd_t)
    return {
        "device": device_description(),
        "num_envs": cfg.num_envs,
        "num_steps": cfg.num_steps,
        "reps": reps,
        "raw_env_steps_per_s": round(raw_sps, 1),
        "trainer_steps_per_s": round(upd_sps, 1),
        "trainer_over_raw": round(upd_sps / raw_sps, 3),
    }


def curves(races) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    out = {}
    for race in races:
        path = ROOT / "demos" / f"{race}_5_vs_5" / "metrics.jsonl"
        if not path.exists():
            continue
        rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        steps = [r["steps"] for r in rows]
        win = [r["win_rate"] or 0.0 for r in rows]
        ret = [r["return"] or 0.0 for r in rows]
        axes[0].plot(steps, win, label=race)
        axes[1].plot(steps, ret, label=race)
        # Whether a curve has flattened: mean training win rate over the last 0.5M steps minus
        # the mean over the 0.5M before them.
        end = steps[-1]
        last = [w for s, w in zip(steps, win, strict=True) if s > end - 500_000]
        before = [w for s, w in zip(steps, win, strict=True) if end - 1_000_000 < s <= end - 500_000]
        out[race] = {
            "steps": end,
            "final_train_win_rate": win[-1],
            "final_train_return": ret[-1],
            "win_rate_gain_last_500k": round(float(np.mean(last) - np.mean(before)), 3) if before else None,
        }
    axes[0].set(xlabel="env steps", ylabel="training win rate (sampled actions)")
    axes[1].set(xlabel="env steps", ylabel="episode return")
    for a in axes:
        a.legend()
        a.grid(alpha=0.3)
    fig.tight_layout()
    png = ROOT / "benchmarks" / "results" / "demos_learning_curves.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    return {"png": str(png.relative_to(ROOT)), "races": out}


def _ci(wins: int, n: int) -> dict:
    lo, hi = wilson_interval(wins, n)
    return {"wins": wins, "episodes": n, "win_rate": round(wins / n, 3), "ci95": [round(lo, 3), round(hi, 3)]}


def play_mappo(spec: str, ckpt: Path, seeds: list[int]) -> dict:
    from compass.core.family import make_env
    from compass.demos.policies import MappoPolicy

    env = make_env(spec)
    pol = MappoPolicy(ckpt, spec)
    wins = 0
    for s in seeds:
        views = env.reset(s)
        pol.reset(env, s)
        for _ in range(env.max_steps):
            actions, _ = pol.act(env, views)
            res = env.step(actions)
            views = res.views
            if res.done:
                wins += res.outcome == "win"
                break
    return _ci(wins, len(seeds))


def play_library(spec: str, library: Path | None, seeds: list[int], skill: str | None = None) -> dict:
    from compass.config import RunConfig
    from compass.episode.pipeline import play, table
    from compass.planner.base import LibraryPlanner
    from compass.skills.library import SkillLibrary

    lib = SkillLibrary(library, "combat")
    cfg = RunConfig(env=spec, library=library)
    planner = LibraryPlanner(lib, skill)  # skill=None: retrieval from the task
    played = asyncio.run(play(table(cfg, planner, scored=False), [(0, s) for s in seeds]))
    wins = sum(p.result.outcome == "win" for p in played)
    used: dict[str, int] = {}
    for p in played:
        for k, v in p.result.skills_used.items():
            used[k] = used.get(k, 0) + v
    return {**_ci(wins, len(seeds)), "skills_used": used}


def winrates(races, n_seeds: int) -> dict:
    from compass.skills.bootstrap import bootstrap_offline

    seeds = list(range(EVAL_SEED, EVAL_SEED + n_seeds))
    out = {"seeds": f"{seeds[0]}..{seeds[-1]}", "n": n_seeds}
    for race in races:
        spec = f"smax:{race}_5_vs_5"
        demo = ROOT / "demos" / f"{race}_5_vs_5"
        row: dict = {}
        t = time.perf_counter()
        if (demo / "checkpoint" / "meta.json").exists():
            row["mappo_greedy"] = play_mappo(spec, demo / "checkpoint", seeds)
        row["seed_library"] = play_library(spec, None, seeds)
        row["seed_named_race_adaptive_combat"] = play_library(spec, None, seeds, NAMED)
        with tempfile.TemporaryDirectory() as tmp:
            off = Path(tmp) / "offline"
            rep = bootstrap_offline(demo / "episodes", off)
            row["offline_fit"] = rep["changes"]
            row["library_offline_bootstrap"] = play_library(spec, off, seeds)
            row["offline_named_race_adaptive_combat"] = play_library(spec, off, seeds, NAMED)
        row["seconds"] = round(time.perf_counter() - t, 1)
        out[race] = row
        print(
            race,
            json.dumps({k: v.get("win_rate") if isinstance(v, dict) else v for k, v in row.items()}),
            flush=True,
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--races", default=",".join(RACES))
    ap.add_argument("--parts", default="throughput,curves,winrates")
    ap.add_argument("--name", default="bench_demos", help="results file stem under benchmarks/results/")
    add_results_arguments(ap)
    args = ap.parse_args()
    preflight(args.allow_dirty, [ROOT / "demos"])
    races = [r for r in args.races.split(",") if r]
    parts = set(args.parts.split(","))
    results: dict = {}
    t0 = time.perf_counter()
    if "throughput" in parts:
        results["throughput"] = throughput(args.reps)
        print("throughput", json.dumps(results["throughput"]), flush=True)
    if "curves" in parts:
        results["learning_curves"] = curves(races)
    if "winrates" in parts:
        results["win_rates"] = winrates(races, args.seeds)
    results["seconds"] = round(time.perf_counter() - t0, 1)
    seeds = f"{EVAL_SEED}..{EVAL_SEED + args.seeds - 1}" if "winrates" in parts else None
    notes = (
        "CPU, 2 cores shared with other jobs; MAPPO checkpoints are the shipped demos/<scenario>/checkpoint"
    )
    write_results(
        args.name, results, seeds=seeds, notes=notes, inputs=[ROOT / "demos"], allow_dirty=args.allow_dirty
    )


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
