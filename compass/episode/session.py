"""One ``compass run``: build env, library, planner and comm from a config; play; write the summary."""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compass.comm import CommProtocol
from compass.config import SPEED_ONLY, RunConfig
from compass.core.family import GameFamily, family_for_env, make_env
from compass.core.runformat import FORMAT_VERSION
from compass.episode.pipeline import (
    EachEpisode,
    Observer,
    PlayedEpisode,
    Progress,
    Table,
    make_comm,
    play,
    table,
)
from compass.episode.rundir import create_run_dir, finish_manifest, write_manifest
from compass.episode.trace import RunWriter
from compass.eval.stats import summarize_outcomes
from compass.planner.factory import make_planner, preflight
from compass.skills.library import SkillLibrary, default_library_root


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


def make_gate(cfg: RunConfig, library: SkillLibrary, planner: Any):
    """The keep gate of a VLM run (``--keep-gate``), handed to its planner; None when off."""
    if cfg.planner != "vlm" or cfg.keep_gate == "off":
        return None
    from compass.skills.holdup import KeepGate

    gate = KeepGate(
        library,
        cfg.env,
        cfg.task or family_for_env(cfg.env).default_task,
        mode=cfg.keep_gate,
        episodes=cfg.keep_gate_episodes,
        max_steps=cfg.keep_gate_steps,
        seed=cfg.keep_gate_seed,
        judge=cfg.keep_gate_judge,
        isolation=cfg.isolation,
    )
    planner.gate = gate
    return gate


def video_recorder(cfg: RunConfig, run_dir: Path) -> Observer:
    """One followable MP4 per episode, streamed to ``run_dir/videos/episode_NNN.mp4`` while it runs."""
    from compass.episode.recording import Recording

    label = f"compass {cfg.planner} planner" + (f" ({cfg.vlm})" if cfg.vlm else "")
    return Recording(
        run_dir / "videos",
        name=lambda episode, seed: f"episode_{episode:03d}",
        header=lambda env, episode, seed: {"env": cfg.env, "seed": seed, "episode": episode},
        label=label,
        trajectory=False,
        note=lambda header: {"video": f"videos/{header['video']}"},
    )


def run(
    cfg: RunConfig,
    on_episode: Callable[[dict], None] | None = None,
    progress: Callable[[int, int], Callable[[], None]] | None = None,
) -> dict:
    """Play ``cfg.episodes`` episodes and return the run summary (also written to summary.json).

    ``progress(episode, max_steps)`` may return a per-step callback (the CLI's progress bar).
    A VLM run first checks its model (:func:`~compass.planner.factory.preflight`): a bad spec,
    missing key, dead server or missing model raises before the environment or the run directory
    exist. A run that fails later is marked ``failed`` in its ``manifest.json`` (no summary, the
    trace stays ``trace.jsonl.partial``).
    """
    family = family_for_env(cfg.env)
    if cfg.task is None:
        cfg = cfg.model_copy(update={"task": family.default_task})
    client, structured = preflight(cfg)
    comm = make_comm(cfg)  # a bad --comm mode fails before anything is built
    run_dir = create_run_dir(cfg, structured)
    manifest = write_manifest(
        run_dir,
        cfg,
        vlm_backend=client.label if client is not None else None,
        structured_output=structured,
    )
    try:
        library = SkillLibrary(library_root_for(cfg, family, run_dir), family.name)
        for problem in library.problems:  # on the console once, not only in the trace
            logging.getLogger(__name__).warning(
                "%s %s: %s", "skipped" if problem.fatal else "ignored", problem.path, problem.message
            )
        planner = make_planner(cfg, library, client=client, run_dir=run_dir)
        gate = make_gate(cfg, library, planner)
        env = make_env(cfg.env, epo=cfg.epo, max_steps=cfg.max_steps)
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)  # a run that never started leaves nothing behind
        raise
    try:
        summary = _play_run(
            cfg, family, run_dir, library, planner, env, comm, structured, on_episode, progress, gate
        )
    except BaseException as exc:
        finish_manifest(run_dir, manifest, exc)
        raise
    finish_manifest(run_dir, manifest)
    return summary


class _GateReview(Observer):
    """Between episodes the keep gate keeps or drops what the episode wrote (traced, on the row)."""

    def __init__(self, gate: Any) -> None:
        self.gate = gate

    async def episode_end(self, table: Table, played: PlayedEpisode) -> None:
        entries = await self.gate.review(played.result.episode)
        played.notes["keep_gate"] = entries
        for entry in entries:
            table.writer.trace({"kind": "keep_gate", **entry})


def _play_run(
    cfg: RunConfig,
    family: GameFamily,
    run_dir: Path,
    library: SkillLibrary,
    planner: Any,
    env: Any,
    comm: CommProtocol,
    structured: bool | None,
    on_episode: Callable[[dict], None] | None,
    progress: Callable[[int, int], Callable[[], None]] | None,
    gate: Any = None,
) -> dict:
    writer = RunWriter(run_dir)
    tab = table(cfg, planner, env=env, comm=comm, writer=writer)
    writer.trace(
        {
            "kind": "run_start",
            "config": cfg.model_dump(mode="json", exclude={"out", "run_id", *SPEED_ONLY}),
            "structured_output": bool(structured),
            "library": sorted(library.names()),
            "library_problems": [str(p) for p in library.problems],
        }
    )
    episodes: list[dict] = []

    def report(played: PlayedEpisode) -> None:
        row = played.row(family.name)
        episodes.append(row)
        if on_episode:
            on_episode(row)

    observers: list[Observer] = []
    if progress is not None:
        observers.append(Progress(progress))
    if cfg.video:
        observers.append(video_recorder(cfg, run_dir))
    if gate is not None:
        observers.append(_GateReview(gate))
    observers.append(EachEpisode(report))
    seeds = [(ep, cfg.seed + ep) for ep in range(cfg.episodes)]
    complete = False
    try:
        # One event loop for the whole run, so VLM clients keep one connection pool.
        asyncio.run(play(tab, seeds, observers))
        complete = True
    finally:
        writer.close(complete=complete)
        if not library.shipped:
            library.save_stats()  # the shipped library stays read-only
    scorer = tab.scorer
    summary = {
        "format_version": FORMAT_VERSION,
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
    if gate is not None:
        summary["keep_gate"] = gate.summary()
    writer.summary(summary)
    summary["run_dir"] = str(run_dir)
    return summary
