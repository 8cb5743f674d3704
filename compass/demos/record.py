"""Recorded episodes: per episode an MP4 and a trajectory JSONL, both streamed to disk.

Trajectory format (``compass-trajectory/1``), one JSON object per line:

- line 1, ``kind: header``: env spec, seed, episode, policy label and checksum, outcome, steps,
  return, unit types, the video's file name;
- then one ``kind: step`` line per env step: ``t``, ``reward``, ``units`` (per agent: ``alive``, the
  compass text observation ``obs`` the action was chosen on, ``action`` index and ``action_name``,
  ``skill`` when a skill chose it), and the env's events of that step (combat: ``attacks``,
  ``damage_taken``, ``deaths``).

Steps stream to a hidden part file; when the episode ends the header (which needs the outcome) is
written and the steps copied after it, and the file is renamed into place. The video gets one
frame per step (frame ``t`` shows the state after step ``t``; the last carries the outcome).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from compass.core.types import AgentView, StepResult
from compass.core.video import EpisodeVideo, FrameInfo, render_video_frame
from compass.episode.pipeline import EachEpisode, Observer, PlayedEpisode, Progress, Table, play, table

FORMAT = "compass-trajectory/1"


class EpisodeRecorder:
    """Streams one episode: ``step()`` after every env step, then ``finish()`` (or ``abort()``)."""

    def __init__(
        self,
        env: Any,
        out_dir: str | os.PathLike,
        name: str,
        header: dict[str, Any],
        video: bool = True,
        trajectory: bool = True,
        policy_label: str = "",
        fps: int = 8,
    ) -> None:
        self.env = env
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.header = dict(header)
        self.policy_label = policy_label
        self.video = EpisodeVideo(self.out / f"{name}.mp4", fps=fps) if video else None
        self._traj_tmp = self.out / f".{name}.steps.part" if trajectory else None
        self._traj = open(self._traj_tmp, "w", encoding="utf-8") if trajectory else None
        self.steps = 0
        self.ret = 0.0
        self.header_written: dict[str, Any] | None = None  # what finish() wrote

    def step(
        self,
        t: int,
        views: list[AgentView],
        actions: list[int],
        skills: list[str | None],
        res: StepResult,
    ) -> None:
        reward = float(np.mean(res.rewards)) if res.rewards else 0.0
        self.ret += reward
        self.steps = t + 1
        if self._traj is not None:
            names = _action_namer(self.env)
            rec: dict[str, Any] = {
                "kind": "step",
                "t": t,
                "reward": round(reward, 6),
                "units": [
                    {
                        "agent": v.agent_id,
                        "alive": v.alive,
                        "obs": v.text,
                        "action": int(a),
                        "action_name": names(int(a), v.agent_id),
                        **({"skill": s} if s else {}),
                    }
                    for v, a, s in zip(views, actions, skills, strict=True)
                ],
            }
            events = getattr(self.env, "step_events", None)
            if events is not None:
                rec.update(events())
            self._traj.write(json.dumps(rec) + "\n")
        if self.video is not None:
            info = FrameInfo(t + 1, list(skills), res.outcome if res.done else None, self.policy_label)
            self.video.add(render_video_frame(self.env, info))

    def finish(self, outcome: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Close both files under their final names; returns the header written."""
        header = {
            "kind": "header",
            "format": FORMAT,
            **self.header,
            "outcome": outcome,
            "steps": self.steps,
            "return": round(self.ret, 6),
            **(extra or {}),
        }
        if self.video is not None:
            self.video.close()
            header["video"] = f"{self.name}.mp4"
            header["video_frames"] = self.video.frames
        if self._traj is not None:
            self._traj.close()
            final = self.out / f"{self.name}.jsonl"
            tmp = self.out / f".{self.name}.jsonl.part"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(json.dumps(header) + "\n")
                with open(self._traj_tmp, encoding="utf-8") as steps:
                    shutil.copyfileobj(steps, f)
            os.replace(tmp, final)
            self._traj_tmp.unlink(missing_ok=True)
            header["trajectory"] = final.name
        self.header_written = header
        return header

    def abort(self) -> None:
        if self.video is not None:
            self.video.abort()
        if self._traj is not None:
            self._traj.close()
            self._traj_tmp.unlink(missing_ok=True)


def _action_namer(env: Any) -> Callable[[int, int], str]:
    fn = getattr(env, "action_name", None)
    if fn is not None:
        return fn
    if getattr(env, "family", "") == "combat":
        from compass.games.combat.text import action_name

        return lambda a, _i: action_name(a)
    return lambda a, _i: str(a)


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


class Recording(Observer):
    """The pipeline's recording observer: one :class:`EpisodeRecorder` per episode.

    ``name(episode, seed)`` names the files, ``header(env, episode, seed)`` starts the header;
    ``note(header)`` is what the episode's row gets (default: nothing). ``last`` is the header
    of the episode recorded last.
    """

    def __init__(
        self,
        out: str | os.PathLike,
        name: Callable[[int, int], str],
        header: Callable[[Any, int, int], dict[str, Any]],
        label: str,
        trajectory: bool = True,
        note: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.out, self.name, self.header, self.label = out, name, header, label
        self.trajectory, self.note = trajectory, note
        self._rec: EpisodeRecorder | None = None
        self.last: dict[str, Any] | None = None

    def steps(self, table: Table, episode: int, seed: int) -> EpisodeRecorder:
        self.last = None
        self._rec = EpisodeRecorder(
            table.env,
            self.out,
            self.name(episode, seed),
            self.header(table.env, episode, seed),
            trajectory=self.trajectory,
            policy_label=self.label,
        )
        return self._rec

    async def episode_end(self, table: Table, played: PlayedEpisode) -> None:
        rec, self._rec = self._rec, None
        if rec is not None:
            self.last = rec.header_written
            if self.note is not None and self.last:
                played.notes.update(self.note(self.last))


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


def read_trajectory(path: str | os.PathLike) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Header and step records of a trajectory file; a clear ``ValueError`` when it is not one."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"trajectory {path} does not exist")
    steps: list[dict] = []
    header: dict | None = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not JSON ({e.msg})") from None
            if n == 1:
                if rec.get("kind") != "header" or rec.get("format") != FORMAT:
                    raise ValueError(f"{path}:1: not a {FORMAT} trajectory header")
                header = rec
            else:
                steps.append(rec)
    if header is None:
        raise ValueError(f"{path} is empty")
    return header, steps


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
