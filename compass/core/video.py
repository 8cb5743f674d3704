"""Followable episode videos, streamed to disk: one MP4 per episode, written frame by frame.

Game-independent: a frame comes from the environment's ``render_video_frame(FrameInfo)`` when it
has one (legend, labels, attack lines, outcome banner...), else from ``render_global()``. The
writer holds one frame at a time, so memory does not grow with episode length, and the file only
gets its final name when the episode finished (a crash leaves no ``.mp4`` that looks complete).
"""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_FPS = 8


@dataclass
class FrameInfo:
    """What a frame shows beside the game state."""

    step: int
    #: each agent's current skill (None: dead, or no skill-based policy)
    skills: list[str | None] = field(default_factory=list)
    #: ``win`` / ``loss`` / ``timeout`` on the last frame, else None
    outcome: str | None = None
    #: who controls the team (``MAPPO checkpoint``, ``skill library``...)
    policy: str = ""


def render_video_frame(env: Any, info: FrameInfo) -> np.ndarray:
    """The env's followable frame when it draws one, else its plain global frame."""
    fn = getattr(env, "render_video_frame", None)
    return fn(info) if fn is not None else env.render_global()


@contextmanager
def _ffmpeg_spawn():
    """Starting ffmpeg forks (then execs at once): JAX's warning that a fork of a multithreaded
    process may deadlock is about Python code running in the child, which never happens here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
        yield


class EpisodeVideo:
    """An MP4 being written: ``add(frame)`` per step, ``close()`` renames it into place.

    ``abort()`` (or an exception inside ``with``) deletes the partial file.
    """

    def __init__(self, path: str | os.PathLike, fps: int = DEFAULT_FPS) -> None:
        import imageio.v2 as imageio

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(f".{self.path.stem}.part.mp4")
        with _ffmpeg_spawn():
            self._writer = imageio.get_writer(
                self._tmp, fps=fps, codec="libx264", quality=6, macro_block_size=1, ffmpeg_log_level="error"
            )
        self.frames = 0
        self._shape: tuple[int, ...] | None = None

    def add(self, frame: np.ndarray) -> None:
        if self._shape is None:
            self._shape = frame.shape
        elif frame.shape != self._shape:
            raise ValueError(f"frame {self.frames} is {frame.shape}, the video is {self._shape}")
        if self.frames == 0:
            with _ffmpeg_spawn():  # imageio starts ffmpeg on the first frame
                self._writer.append_data(np.ascontiguousarray(frame))
        else:
            self._writer.append_data(np.ascontiguousarray(frame))
        self.frames += 1

    def close(self) -> Path:
        self._writer.close()
        os.replace(self._tmp, self.path)
        return self.path

    def abort(self) -> None:
        try:
            self._writer.close()
        finally:
            self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> EpisodeVideo:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def count_frames(path: str | os.PathLike) -> int:
    """Frames in a video file (decodes it; for tests and checks)."""
    import imageio.v2 as imageio

    with imageio.get_reader(path) as r:
        return sum(1 for _ in r)
