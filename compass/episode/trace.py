"""Run directories: ``runs/<id>/trace.jsonl``, ``timings.jsonl``, ``summary.json``, video.

``trace.jsonl`` holds only what the seed and the (cached) VLM answers determine, so the same
inputs give a byte-identical file; wall-clock figures go to ``timings.jsonl``. The trace is
written to ``trace.jsonl.partial`` and renamed when the run ends, so a crashed run never
leaves a file that looks complete.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Protocol

from compass.core.runformat import SUMMARY, TIMINGS, TRACE, TRACE_PARTIAL
from compass.util.atomic import atomic_write_json


def _default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def dumps(record: dict[str, Any]) -> str:
    """Canonical one-line JSON (sorted keys) for trace records."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), default=_default)


class TraceSink(Protocol):
    """Where the runner writes: a run directory (:class:`RunWriter`) or nowhere (:class:`NullTrace`)."""

    def trace(self, record: dict[str, Any]) -> None: ...

    def timing(self, record: dict[str, Any]) -> None: ...

    def flush(self) -> None: ...


class NullTrace:
    """A trace sink that keeps nothing (recordings and skill evaluations write no trace)."""

    def trace(self, record: dict[str, Any]) -> None:
        """Discard ``record``."""

    def timing(self, record: dict[str, Any]) -> None:
        """Discard ``record``."""

    def flush(self) -> None:
        """Nothing to flush."""


class RunWriter:
    """Writes one run directory."""

    def __init__(self, run_dir: str | os.PathLike) -> None:
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)  # normally made (uniquely) by compass.episode.rundir
        self._partial = self.dir / TRACE_PARTIAL
        self._trace = open(self._partial, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._timings = open(self.dir / TIMINGS, "w", encoding="utf-8")  # noqa: SIM115

    def trace(self, record: dict[str, Any]) -> None:
        self._trace.write(dumps(record) + "\n")

    def timing(self, record: dict[str, Any]) -> None:
        self._timings.write(dumps(record) + "\n")

    def flush(self) -> None:
        self._trace.flush()
        self._timings.flush()

    def summary(self, summary: dict[str, Any]) -> None:
        atomic_write_json(self.dir / SUMMARY, summary)

    def close(self, complete: bool = True) -> None:
        """Close the files; only a ``complete`` run's trace is renamed to ``trace.jsonl``."""
        for f in (self._trace, self._timings):
            if f.closed:
                continue
            f.flush()
            os.fsync(f.fileno())
            f.close()
        if complete and self._partial.exists():
            os.replace(self._partial, self.dir / TRACE)


def read_trace(run_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """All records of a finished run's trace."""
    with open(Path(run_dir) / TRACE, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
