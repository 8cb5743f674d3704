"""One ``compass run``: build env, library, planner and comm from a config; play; write the summary."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

from compass.comm import CommProtocol
from compass.config import RunConfig
from compass.core.family import GameFamily, family_for_env, make_env
from compass.eval.stats import summarize_outcomes
from compass.planner.factory import make_planner
from compass.runner import EpisodeRunner, new_run_id, write_video
from compass.skills.library import SkillLibrary, default_library_root
from compass.trace import RunWriter


def make_comm(cfg: RunConfig) -> CommProtocol:
    """The communication protocol for ``cfg.comm`` (a typo in the mode lists the valid ones)."""
    return CommProtocol(cfg.comm, seed=cfg.seed)


def library_root_for(cfg: RunConfig, family: GameFamily, run_dir: Path) -> Path | None:
    """Where this run's skills live.

    ``--library DIR`` is used (and evolved) in place. Without it, a VLM run evolves a copy of the
    shipped library inside its run directory (``--library runs/<id>/skill_library`` continues
    from it), so the shipped library is never modified by a run.
    """
    if cfg.library is not None:
        return Path(cfg.library)
    if cfg.planner != "vlm":
        return default_library_root()  # None: the shipped seed library, read-only
    target = run_dir / "skill_library"
    shutil.copytree(
        family.seed_skills_dir,
        target / family.name,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("_stats.json", "__pycache__"),
    )
    return target


def run(
    cfg: RunConfig,
    on_episode: Callable[[dict], None] | None = None,
    progress: Callable[[int, int], Callable[[], None]] | None = None,
) -> dict:
    """Play ``cfg.episodes`` episodes and return the run summary (also written to summary.json).

    ``progress(episode, max_steps)`` may return a per-step callback (the CLI's progress bar).
    """
    family = family_for_env(cfg.env)
    if cfg.task is None:
        cfg = cfg.model_copy(update={"task": family.default_task})
    run_dir = Path(cfg.out) / (cfg.run_id or new_run_id(cfg))
    fresh = not run_dir.exists()
    try:
        library = SkillLibrary(library_root_for(cfg, family, run_dir), family.name)
        # Planner and comm before the env: a bad --vlm spec or --comm mode fails before a compile.
        planner = make_planner(cfg, library)
        comm = make_comm(cfg)
        env = make_env(cfg.env, epo=cfg.epo, max_steps=cfg.max_steps)
    except BaseException:
        if fresh:  # a run that never started leaves nothing behind (e.g. its library copy)
            shutil.rmtree(run_dir, ignore_errors=True)
        raise
    writer = RunWriter(run_dir)
    scorer = family.make_scorer(env) if family.make_scorer else None
    runner = EpisodeRunner(env, planner, cfg, writer, comm=comm, on_step=scorer.on_step if scorer else None)
    writer.trace(
        {
            "kind": "run_start",
            "config": cfg.model_dump(mode="json", exclude={"out", "run_id"}),
            "library": sorted(library.names()),
            "library_problems": [str(p) for p in library.problems],
        }
    )
    episodes: list[dict] = []

    async def play() -> None:
        # One event loop for the whole run, so VLM clients keep one connection pool.
        try:
            for ep in range(cfg.episodes):
                seed = cfg.seed + ep
                comm.reset(seed)
                tick = progress(ep, getattr(env, "max_steps", cfg.max_steps or 0)) if progress else None
                if scorer is not None:
                    scorer.start()
                row = (await runner.run_episode(ep, seed, tick)).as_dict()
                if scorer is not None:
                    row[family.name] = scorer.finish()
                    row["headline"] = scorer.describe_episode(row[family.name])
                usage = planner.usage_for_episode(ep)
                if usage is not None:
                    row["vlm"] = usage
                episodes.append(row)
                if on_episode:
                    on_episode(row)
        finally:
            await planner.aclose()

    try:
        asyncio.run(play())
    finally:
        writer.close()
        if not library.shipped:
            library.save_stats()  # the shipped library stays read-only
    summary = {
        "run_id": run_dir.name,
        "env": cfg.env,
        "planner": cfg.planner,
        "vlm": cfg.vlm,
        "library": str(library.dir),
        "skill_stats": library.stats,
        "comm": cfg.comm,
        "epo": cfg.epo,
        "seed": cfg.seed,
        "episodes": episodes,
        "overall": summarize_outcomes(episodes),
    }
    if scorer is not None:
        summary[family.name] = scorer.summary()
        summary["headline"] = scorer.headline(summary[family.name])
    usage = planner.usage_summary()
    if usage is not None:
        summary["vlm_usage"] = usage
    if cfg.video and runner.frames:
        write_video(runner.frames, run_dir / "episodes.mp4")
        summary["video"] = "episodes.mp4"
    writer.summary(summary)
    summary["run_dir"] = str(run_dir)
    return summary
