"""Where benchmark numbers live: one JSON file per benchmark under ``benchmarks/results/``.

Every benchmark ends with ``write_results(name, data, seeds=..., notes=...)``. The file records
what produced the numbers (the exact command, the git commit and whether the tree was dirty, the
seeds, the machine) beside the numbers themselves, so a figure quoted in README.md, docs/ or
benchmarks/README.md can be traced to a run and checked against it (``benchmarks/figures.py``,
``tests/test_published_figures.py``). Writes are atomic: a failed run leaves the previous file.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"

sys.path.insert(0, str(ROOT))  # run from a checkout without installing
from compass.util.atomic import atomic_write_json  # noqa: E402


def git_commit() -> dict[str, Any]:
    """The checkout's HEAD and whether tracked files differ from it (``None`` outside git)."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    head = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": head, "dirty": bool(status) if status is not None else None}


def machine() -> dict[str, Any]:
    """What the timings ran on: CPU count, platform, Python and the versions that matter here."""
    versions: dict[str, str] = {}
    for dist in ("jax", "jaxlib", "jaxmarl", "alem-env", "openai", "anthropic", "tiktoken"):
        try:
            from importlib.metadata import version

            versions[dist] = version(dist)
        except Exception:  # not installed: simply not recorded
            continue
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.machine(),
        "python": platform.python_version(),
        "versions": versions,
    }


def command(argv: list[str] | None = None) -> str:
    """The command line that reproduces this run, relative to the repository root."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve() if argv else None
    if script is not None and script.is_file():
        try:
            argv[0] = str(script.relative_to(ROOT))
        except ValueError:
            argv[0] = str(script)
    return shlex.join(["python", *argv])


def results_path(name: str) -> Path:
    """``benchmarks/results/<name>.json``."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"results name must be a plain file stem, got {name!r}")
    return RESULTS_DIR / f"{name}.json"


def write_results(
    name: str,
    data: dict[str, Any],
    *,
    seeds: Any = None,
    notes: str = "",
    argv: list[str] | None = None,
) -> Path:
    """Write ``benchmarks/results/<name>.json`` atomically and return its path.

    ``data`` holds the numbers (nested dicts keyed by something a reader can name, e.g. the
    scenario, so a doc can point at ``winrate.protoss_5_vs_5.library.rate``). ``seeds`` says which
    seeds ran (a list, a range description or ``None`` for timing-only benchmarks); ``notes`` says
    anything a reader must know, e.g. "reduced seeds: 20 instead of 50 (CPU)".
    """
    record = {
        "benchmark": name,
        "command": command(argv),
        **git_commit(),
        "created": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seeds": seeds,
        "notes": notes,
        "machine": machine(),
        "results": data,
    }
    path = results_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, record)
    print(f"results written to {path.relative_to(ROOT)}")
    return path
