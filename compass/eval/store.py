"""An eval's run directory: ``episodes.csv`` (one row per finished episode, appended atomically),
``eval.json`` (the configurations it holds), ``spec.yaml``, and the report files.

Each row is one ``write`` of a whole line to a file opened for appending, then ``fsync``: a killed
eval leaves every finished row intact and at most a torn last line, which the next run drops.
Resuming skips every (config, env, seed) already in the file.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

from compass.util.atomic import atomic_write_json, atomic_write_text

COLUMNS = (
    "config",
    "env",
    "seed",
    "outcome",
    "win",
    "return",
    "steps",
    "skill_errors",
    "decisions",
    "vlm_calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "wall_s",
    "metrics",
    "extra",
)
_INT = {
    "seed",
    "win",
    "steps",
    "skill_errors",
    "decisions",
    "vlm_calls",
    "prompt_tokens",
    "completion_tokens",
}
_FLOAT = {"return", "cost_usd", "wall_s"}
_JSON = {"metrics", "extra"}
EPISODES = "episodes.csv"
META = "eval.json"
REPORT_FILES = ("report.md", "report.png", "summary.json")


def _line(row: dict[str, Any]) -> str:
    buf = io.StringIO()
    values = [
        json.dumps(row.get(c, {}), sort_keys=True, separators=(",", ":")) if c in _JSON else row[c]
        for c in COLUMNS
    ]
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue()


def _parse(rec: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in COLUMNS:
        v = rec[c]
        out[c] = int(v) if c in _INT else float(v) if c in _FLOAT else json.loads(v) if c in _JSON else v
    return out


def read_rows(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every complete row of an ``episodes.csv`` (a torn last line is ignored)."""
    path = Path(path)
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None:
        return []
    if tuple(reader.fieldnames) != COLUMNS:
        raise ValueError(
            f"{path}: not an episodes file of this compass version (columns {reader.fieldnames})"
        )
    return [_parse(r) for r in reader]


class EpisodeStore:
    """Appends rows to ``<run_dir>/episodes.csv``; knows which episodes are done."""

    def __init__(self, run_dir: str | os.PathLike) -> None:
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / EPISODES
        if self.path.exists():
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):  # torn by a kill: drop the partial row
                with open(self.path, "r+b") as f:
                    f.truncate(data.rfind(b"\n") + 1)
        if not self.path.exists() or self.path.stat().st_size == 0:
            atomic_write_text(self.path, ",".join(COLUMNS) + "\n")
        self.rows = read_rows(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def done(self) -> set[tuple[str, str, int]]:
        return {(r["config"], r["env"], r["seed"]) for r in self.rows}

    def append(self, row: dict[str, Any]) -> None:
        data = _line(row).encode("utf-8")
        os.write(self._fd, data)  # one write of the whole line: rows never interleave or tear mid-file
        os.fsync(self._fd)
        self.rows.append(row)

    def close(self) -> None:
        os.close(self._fd)


def read_meta(run_dir: str | os.PathLike) -> dict[str, Any]:
    path = Path(run_dir) / META
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def write_meta(run_dir: str | os.PathLike, meta: dict[str, Any]) -> None:
    atomic_write_json(Path(run_dir) / META, meta)
