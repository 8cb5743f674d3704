"""Recording an episode: an MP4 and a trajectory JSONL, both streamed to disk while it plays.

Used by ``compass run --video`` and ``compass demos record`` (:mod:`compass.demos.record`) through the
pipeline's :class:`Recording` observer.

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
from pathlib import Path
from typing import Any

import numpy as np

from compass.core.family import get_family
from compass.core.types import AgentView, StepResult
from compass.core.video import EpisodeVideo, FrameInfo, render_video_frame
from compass.episode.pipeline import Observer, PlayedEpisode, Table

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
    """The env's ``action_name``, else its family's (``GameFamily.action_name``), else the number."""
    fn = getattr(env, "action_name", None)
    if fn is not None:
        return fn
    family = getattr(env, "family", None)
    named = get_family(family).action_name if family else None
    return named if named is not None else (lambda a, _i: str(a))


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
