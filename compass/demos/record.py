"""``compass demos record``: play episodes with a policy and record each (MP4 + trajectory JSONL).

The recording itself (the trajectory format ``compass-trajectory/1``, :class:`EpisodeRecorder`, the
pipeline's :class:`Recording` observer, :func:`read_trajectory`) is :mod:`compass.episode.recording`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compass.episode.pipeline import EachEpisode, Observer, PlayedEpisode, Progress, play, table
from compass.episode.recording import FORMAT, EpisodeRecorder, Recording, read_trajectory

__all__ = [
    "FORMAT",
    "EpisodeRecorder",
    "RecordedEpisode",
    "read_trajectory",
    "record_episodes",
    "replay_trajectory",
]


@dataclass
class RecordedEpisode:
    header: dict[str, Any]
    jsonl: Path | None
    mp4: Path | None


def record_episodes(
    env_spec: str,
    policy: str,
    episodes: int,
    seed: int,
    out: str | os.PathLike,
    *,
    max_steps: int | None = None,
    epo: bool = False,
    library: str | os.PathLike | None = None,
    on_step: Callable[[], None] | None = None,
    on_episode: Callable[[dict], None] | None = None,
) -> list[dict[str, Any]]:
    """Play ``episodes`` episodes (seeds ``seed, seed+1, ...``) with ``policy`` and record each.

    ``policy`` is a MAPPO checkpoint folder, ``library`` (the skill library, no VLM) or
    ``heuristic`` (SMAX's scripted AI). Files: ``OUT/ep_<seed>.mp4`` and ``OUT/ep_<seed>.jsonl``.
    """
    from compass.core.family import family_for_env, make_env

    family = family_for_env(env_spec)
    if policy == "library":
        return _record_library(env_spec, episodes, seed, out, max_steps, epo, library, on_step, on_episode)
    env = make_env(env_spec, epo=epo, max_steps=max_steps)
    if policy == "heuristic":
        if family.name != "combat":
            raise ValueError(f"--policy heuristic is SMAX's scripted AI; {env_spec} is not a combat env")
        from compass.demos.policies import HeuristicPolicy

        pol: Any = HeuristicPolicy()
    else:
        if not env_spec.startswith("smax:"):
            raise ValueError(f"MAPPO checkpoints act in smax:* envs, not {env_spec}")
        from compass.demos.policies import MappoPolicy

        pol = MappoPolicy(policy, env_spec)
    rows = []
    for ep in range(episodes):
        s = seed + ep
        views = env.reset(s)
        pol.reset(env, s)
        rec = EpisodeRecorder(
            env,
            out,
            f"ep_{s:04d}",
            _header(env, env_spec, s, ep, pol.label, pol.checksum, epo),
            policy_label=pol.label,
        )
        try:
            outcome = "timeout"
            for t in range(env.max_steps):
                actions, skills = pol.act(env, views)
                res = env.step(actions)
                rec.step(t, views, actions, skills, res)
                views = res.views
                if on_step:
                    on_step()
                if res.done:
                    outcome = res.outcome
                    break
        except BaseException:
            rec.abort()
            raise
        row = rec.finish(outcome)
        rows.append(row)
        if on_episode:
            on_episode(row)
    return rows


def _header(env: Any, spec: str, seed: int, episode: int, label: str, checksum: str, epo: bool) -> dict:
    h = {
        "env": spec,
        "seed": seed,
        "episode": episode,
        "epo": epo,
        "max_steps": getattr(env, "max_steps", None),
        "n_agents": env.n_agents,
        "policy": label,
        "policy_checksum": checksum,
    }
    types = getattr(env, "unit_types", None)
    if types:
        h["unit_types"] = {"allies": list(types[0]), "enemies": list(types[1])}
    return h


def _record_library(env_spec, episodes, seed, out, max_steps, epo, library, on_step, on_episode):
    import asyncio

    from compass.config import RunConfig
    from compass.core.family import family_for_env
    from compass.demos.policies import library_checksum
    from compass.planner.base import LibraryPlanner
    from compass.skills.library import SkillLibrary

    family = family_for_env(env_spec)
    cfg = RunConfig(env=env_spec, seed=seed, max_steps=max_steps, epo=epo, library=library)
    lib = SkillLibrary(library, family.name)
    label = "skill library (no VLM)"
    checksum = library_checksum(lib)
    tab = table(cfg, LibraryPlanner(lib), scored=False)
    recording = Recording(
        out,
        name=lambda _episode, s: f"ep_{s:04d}",
        header=lambda env, episode, s: _header(env, env_spec, s, episode, label, checksum, epo),
        label=label,
    )
    rows: list[dict] = []

    def report(played: PlayedEpisode) -> None:
        row = dict(recording.last or {})
        row["skills_used"] = played.result.skills_used
        rows.append(row)
        if on_episode:
            on_episode(row)

    observers: list[Observer] = [recording]
    if on_step is not None:
        observers.append(Progress(lambda _episode, _max: on_step))
    observers.append(EachEpisode(report))
    asyncio.run(play(tab, [(ep, seed + ep) for ep in range(episodes)], observers))
    return rows


def replay_trajectory(path: str | os.PathLike) -> dict[str, Any]:
    """Re-play the recorded actions from the recorded seed; returns outcome, steps and whether they match."""
    from compass.core.family import make_env

    header, steps = read_trajectory(path)
    env = make_env(header["env"], epo=header.get("epo", False), max_steps=header.get("max_steps"))
    env.reset(int(header["seed"]))
    outcome, n = "timeout", 0
    for rec in steps:
        res = env.step([u["action"] for u in rec["units"]])
        n += 1
        if res.done:
            outcome = res.outcome
            break
    return {
        "recorded_outcome": header["outcome"],
        "replayed_outcome": outcome,
        "recorded_steps": header["steps"],
        "replayed_steps": n,
        "match": outcome == header["outcome"] and n == header["steps"],
    }
