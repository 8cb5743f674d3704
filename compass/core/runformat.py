"""The run directory format, in one place: file names, ``format_version``, typed readers.

``compass run`` writes, and the viewer, ``replay:RUN_DIR``, ``compass runs`` and ``compass eval``
read, one directory per run::

    runs/<run-id>/
      manifest.json        what was run and how it ended (status running | complete | failed)
      trace.jsonl          every decision and step (``.partial`` until the run completes)
      timings.jsonl        wall-clock figures (kept out of the trace, which is reproducible)
      summary.json         per-episode rows and the run's figures (only when the run completed)
      videos/              optional, one MP4 per episode
      skill_library/       a VLM run's evolving copy of the library

``manifest.json`` and ``summary.json`` carry ``format_version`` (:data:`FORMAT_VERSION`); a
directory written before it existed reads as version 0 (the same layout). A directory of a newer
version than this code reads is refused with a :class:`RunFormatError` saying so, instead of being
misread. The trace's lines carry no version: a trace's version is its run's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compass.core.errors import CompassError

#: bump when a reader would misread what a new writer writes (then say what changed in docs/runs.md)
FORMAT_VERSION = 1

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
TRACE = "trace.jsonl"
TRACE_PARTIAL = "trace.jsonl.partial"
TIMINGS = "timings.jsonl"
VIDEOS = "videos"


class RunFormatError(CompassError, ValueError):
    """A run directory this version cannot read (newer format, or a file of the wrong shape)."""


@dataclass(frozen=True)
class RunFiles:
    """The paths of one run directory."""

    dir: Path

    @property
    def manifest(self) -> Path:
        return self.dir / MANIFEST

    @property
    def summary(self) -> Path:
        return self.dir / SUMMARY

    @property
    def trace(self) -> Path:
        return self.dir / TRACE

    @property
    def trace_partial(self) -> Path:
        return self.dir / TRACE_PARTIAL

    @property
    def timings(self) -> Path:
        return self.dir / TIMINGS

    @property
    def videos(self) -> Path:
        return self.dir / VIDEOS

    def trace_file(self) -> Path | None:
        """The finished trace, else the partial one of a running or failed run, else None."""
        return next((p for p in (self.trace, self.trace_partial) if p.exists()), None)

    def is_run(self) -> bool:
        """Whether this looks like a run directory (a summary or a trace)."""
        return self.dir.is_dir() and (self.summary.exists() or self.trace_file() is not None)


def check_version(obj: dict[str, Any], where: str | Path) -> int:
    """The ``format_version`` of a manifest or summary (0 when absent); newer than ours: an error."""
    version = obj.get("format_version", 0)
    if not isinstance(version, int) or version < 0:
        raise RunFormatError(f"{where}: format_version must be a non-negative integer, not {version!r}")
    if version > FORMAT_VERSION:
        raise RunFormatError(
            f"{where}: written by a newer compass (run format {version}; this one reads up to "
            f"{FORMAT_VERSION}): upgrade compass to read it"
        )
    return version


def _load(path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RunFormatError(f"{path}: not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(obj, dict):
        raise RunFormatError(f"{path}: expected a JSON object")
    return obj


@dataclass
class RunSummary:
    """``summary.json`` of a completed run: the fields readers use, typed; ``raw`` holds all of it
    (including the family's metrics under the family's name)."""

    run_id: str
    env: str
    planner: str | None
    vlm: str | None
    seed: int | None
    comm: str | None
    episodes: list[dict[str, Any]]
    overall: dict[str, Any]
    headline: str | None = None
    vlm_usage: dict[str, Any] | None = None
    video: str | None = None
    format_version: int = FORMAT_VERSION
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, obj: dict[str, Any], where: str | Path) -> RunSummary:
        """Validate the shape readers rely on; a missing or mistyped field is a :class:`RunFormatError`."""
        version = check_version(obj, where)
        if not isinstance(obj.get("run_id"), str) or not isinstance(obj.get("env"), str):
            raise RunFormatError(f"{where}: not a compass run summary (needs string run_id and env)")
        episodes = obj.get("episodes")
        if not isinstance(episodes, list) or not all(isinstance(e, dict) for e in episodes):
            raise RunFormatError(f"{where}: 'episodes' must be a list of objects")
        usage = obj.get("vlm_usage")
        return cls(
            run_id=obj["run_id"],
            env=obj["env"],
            planner=obj.get("planner"),
            vlm=obj.get("vlm"),
            seed=obj.get("seed"),
            comm=obj.get("comm"),
            episodes=episodes,
            overall=obj.get("overall") or {},
            headline=obj.get("headline"),
            vlm_usage=usage if isinstance(usage, dict) else None,
            video=obj.get("video"),
            format_version=version,
            raw=obj,
        )


def read_summary(run_dir: str | Path) -> RunSummary | None:
    """A run's summary; None when it has none (running, failed, or not a run)."""
    path = RunFiles(Path(run_dir)).summary
    if not path.exists():
        return None
    return RunSummary.from_json(_load(path), path)


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """A run's ``manifest.json`` (version-checked)."""
    path = RunFiles(Path(run_dir)).manifest
    obj = _load(path)
    check_version(obj, path)
    return obj
