"""Finding and reading results: eval directories and ``compass run`` directories, as rows."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compass.core.runformat import RunFiles, RunFormatError, RunSummary, read_summary
from compass.eval.episode import episode_row
from compass.eval.store import EPISODES, META, read_meta, read_rows


@dataclass
class RunInfo:
    path: Path
    kind: str  # eval | run
    envs: list[str]
    configs: list[str]
    episodes: int
    planned: int | None
    modified: float
    headline: str


def _run_summary(path: Path) -> RunSummary | None:
    """A finished ``compass run``'s summary; None when ``path`` has none. A summary of a newer
    format (or of the wrong shape) is a :class:`~compass.core.runformat.RunFormatError`."""
    return read_summary(path)


def is_eval_dir(path: Path) -> bool:
    return (path / META).exists() and (path / EPISODES).exists()


def run_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a ``compass run`` directory (its summary.json), config = the run id."""
    from compass.core.family import family_for_env

    s = _run_summary(path)
    if s is None:
        raise FileNotFoundError(f"{path} is neither an eval directory nor a finished compass run")
    family = family_for_env(s.env).name
    # A run's summary holds no per-episode wall time: NaN (shown as "-"), not a measured 0.
    return [
        episode_row(s.run_id, s.env, ep["seed"], ep, float(ep.get("wall_s", "nan")), family)
        for ep in s.episodes
    ]


def rows_of(path: Path) -> list[dict[str, Any]]:
    return read_rows(path / EPISODES) if is_eval_dir(path) else run_rows(path)


def resolve_run(target: str, out: Path) -> tuple[Path, str | None]:
    """``RUN`` or ``RUN:CONFIG`` (RUN: a directory, or a name under ``out``) -> (dir, config)."""
    for cand in (target, *[target[:i] for i in range(len(target)) if target[i] == ":"]):
        for base in (Path(cand), out / cand):
            if base.is_dir() and (is_eval_dir(base) or _run_summary(base) is not None):
                config = target[len(cand) + 1 :] if len(cand) < len(target) else None
                return base, config or None
    raise FileNotFoundError(
        f"no run {target!r} (looked for a directory and for {out / target.split(':')[0]})"
    )


def list_runs(out: Path) -> list[RunInfo]:
    """Every eval and run directory directly under ``out``, newest first."""
    infos = []
    if not out.is_dir():
        return infos
    for p in sorted(out.iterdir()):
        if not p.is_dir():
            continue
        if is_eval_dir(p):
            meta = read_meta(p)
            try:
                rows = read_rows(p / EPISODES)
            except ValueError:
                continue
            envs = list(dict.fromkeys(r["env"] for r in rows))
            spec = (p / "spec.yaml").exists()
            done = (p / "report.md").exists()
            infos.append(
                RunInfo(
                    p,
                    "eval",
                    envs,
                    meta.get("config_order", []),
                    len(rows),
                    None,
                    (p / EPISODES).stat().st_mtime,
                    "report written"
                    if done
                    else ("partial: resume with compass eval" if spec else "partial"),
                )
            )
            continue
        try:
            s = _run_summary(p)
        except RunFormatError as e:  # listed, saying why it cannot be read
            infos.append(RunInfo(p, "run", [], [], 0, None, p.stat().st_mtime, f"unreadable: {e}"))
            continue
        if s is None:
            continue
        head = s.headline or f"win rate {s.overall.get('win_rate', 0):.2f}"
        infos.append(
            RunInfo(
                p,
                "run",
                [s.env],
                [s.planner or ""],
                len(s.episodes),
                None,
                RunFiles(p).summary.stat().st_mtime,
                head,
            )
        )
    return sorted(infos, key=lambda i: -i.modified)


def fmt_time(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))
