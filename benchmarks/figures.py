"""Published figures, checked against (or regenerated from) the benchmark results files.

A number in README.md, docs/*.md or benchmarks/README.md that a benchmark produced is marked with
an HTML comment right before it (invisible when rendered)::

    sandboxed call <!-- figure: bench_combat.json:sandbox.ratio_call -->1.37x a plain one
    **<!-- figure: bench_comm_epo.json:epo.multihop.rate -->0.80**

``FILE`` is a file in ``benchmarks/results/``; ``PATH`` walks its ``results`` object by keys
(digits index lists). An optional ``*SCALE`` multiplies the stored value first (``*100`` for a
percentage, ``*1e-6`` for millions). The number shown must equal the stored value rounded to the
decimals shown. Markers inside inline code (backticks) are examples, not figures.

A quoted file must also be traceable (``provenance``): its commit is in this repository and an
ancestor of HEAD, it is not marked dirty (``--allow-dirty``), every input it lists has the same
git blob hash at that commit, and its command names no path outside the repository (a file
written before inputs were recorded passes only if its command names no file at all).
``python benchmarks/figures.py`` checks every marked figure and the provenance of every file
they quote; ``--update`` rewrites each marked number from its file (after re-running a benchmark).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"

sys.path.insert(0, str(ROOT))  # run as a script from a checkout
from benchmarks._results import git  # noqa: E402

MARKER = re.compile(
    r"<!--\s*figure:\s*(?P<file>[\w.\-]+\.json):(?P<path>[\w.\-=,]+(?: [\w.\-=,]+)*)(?:\s*\*\s*(?P<scale>[0-9.eE+\-]+))?\s*-->"
    r"(?P<gap>[\s*\[(~≈]*)(?P<number>-?\d+(?:\.\d+)?)"
)


@dataclass(frozen=True)
class Figure:
    """One marked number: where it is, what it claims to be and what it shows."""

    doc: Path
    line: int
    file: str
    path: str
    scale: float
    shown: str
    start: int  # offsets of the number in the document text (for --update)
    end: int

    @property
    def where(self) -> str:
        try:
            doc = self.doc.relative_to(ROOT)
        except ValueError:
            doc = self.doc
        return f"{doc}:{self.line}"

    @property
    def decimals(self) -> int:
        return len(self.shown.split(".")[1]) if "." in self.shown else 0


def default_docs() -> list[Path]:
    """README.md, benchmarks/README.md, demos/README.md and every docs/*.md."""
    return [
        ROOT / "README.md",
        ROOT / "benchmarks" / "README.md",
        ROOT / "demos" / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
    ]


def scan(doc: Path) -> list[Figure]:
    """The marked figures of one document, in order."""
    text = doc.read_text(encoding="utf-8")
    out = []
    for m in MARKER.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text.count("`", line_start, m.start()) % 2:
            continue  # inside an inline code span: an example of the syntax, not a figure
        out.append(
            Figure(
                doc=doc,
                line=text.count("\n", 0, m.start()) + 1,
                file=m["file"],
                path=m["path"],
                scale=float(m["scale"]) if m["scale"] else 1.0,
                shown=m["number"],
                start=m.start("number"),
                end=m.end("number"),
            )
        )
    return out


def lookup(results: Any, path: str) -> Any:
    """``results`` walked along the dotted ``path`` (digits index lists); KeyError says where it stopped."""
    node = results
    for i, part in enumerate(path.split(".")):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(f"no {'.'.join(path.split('.')[: i + 1])!r}")
    return node


def _load(file: str, results_dir: Path, cache: dict[str, Any]) -> Any:
    if file not in cache:
        cache[file] = json.loads((results_dir / file).read_text(encoding="utf-8"))["results"]
    return cache[file]


def expected(fig: Figure, results_dir: Path = RESULTS_DIR, cache: dict[str, Any] | None = None) -> float:
    """The stored value of ``fig``, scaled (raises FileNotFoundError, KeyError or TypeError)."""
    value = lookup(_load(fig.file, results_dir, {} if cache is None else cache), fig.path)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{fig.file}:{fig.path} is {type(value).__name__}, not a number")
    return value * fig.scale


def check(fig: Figure, results_dir: Path = RESULTS_DIR, cache: dict[str, Any] | None = None) -> str | None:
    """``None`` if the shown number is the stored one at the shown precision, else a one-line problem."""
    try:
        value = expected(fig, results_dir, cache)
    except FileNotFoundError:
        return f"{fig.where}: {fig.file} does not exist in benchmarks/results/"
    except (KeyError, TypeError, json.JSONDecodeError) as e:
        return f"{fig.where}: {fig.file}: {e.args[0] if e.args else e}"
    if f"{value:.{fig.decimals}f}" != f"{float(fig.shown):.{fig.decimals}f}":
        return f"{fig.where}: shows {fig.shown}, {fig.file}:{fig.path} gives {value:.{fig.decimals}f}"
    return None


def provenance(record: dict[str, Any], name: str = "results", root: Path = ROOT) -> list[str]:
    """Why ``record`` (a results file's content) cannot be traced to a checked-out commit; [] if it can."""
    commit = record.get("commit")
    if not isinstance(commit, str) or len(commit) != 40:
        return [f"{name}: no commit recorded"]
    problems = []
    if record.get("dirty") is not False:
        why = "; ".join(record.get("provenance_problems") or []) or "written from a dirty tree"
        problems.append(f"{name}: marked dirty ({why}); re-run from a clean, committed tree")
    if git("cat-file", "-e", f"{commit}^{{commit}}", root=root) is None:
        return [*problems, f"{name}: commit {commit[:12]} is not in this repository"]
    if git("merge-base", "--is-ancestor", commit, "HEAD", root=root) is None:
        problems.append(f"{name}: commit {commit[:12]} is not an ancestor of HEAD")
    try:
        argv = shlex.split(str(record.get("command", "")))
    except ValueError:
        argv = str(record.get("command", "")).split()
    values = [token.split("=", 1)[-1] for token in argv[2:]]  # after "python SCRIPT"
    for value in values:
        if value.startswith(("/", "~")):
            problems.append(f"{name}: command reads {value}, outside the repository")
    inputs = record.get("inputs")
    if not isinstance(inputs, dict):
        # Written before inputs were recorded: traceable only if the command names no file (then
        # everything the run read is the committed tree at that commit).
        named = [v for v in values if not v.startswith(("/", "~")) and (root / v).exists()]
        if named:
            problems.append(f"{name}: lists no inputs but its command reads {named[0]}; re-run it")
        inputs = {}
    for path, blob in sorted(inputs.items()):
        at_commit = git("rev-parse", f"{commit}:{path}", root=root)
        if at_commit != blob:
            state = "absent" if at_commit is None else f"{at_commit[:12]}"
            problems.append(f"{name}: input {path} is {str(blob)[:12]} in the file, {state} at {commit[:12]}")
    return problems


def provenance_of(file: str, results_dir: Path = RESULTS_DIR, root: Path = ROOT) -> list[str]:
    """``provenance`` of ``results_dir/file`` (a missing or unreadable file is reported by ``check``)."""
    try:
        record = json.loads((results_dir / file).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return []
    return provenance(record, file, root)


def update(doc: Path, results_dir: Path = RESULTS_DIR) -> int:
    """Rewrite every marked number in ``doc`` from its file (same decimals); the count changed."""
    text = doc.read_text(encoding="utf-8")
    cache: dict[str, Any] = {}
    changed = 0
    for fig in reversed(scan(doc)):  # from the end, so earlier offsets stay valid
        try:
            new = f"{expected(fig, results_dir, cache):.{fig.decimals}f}"
        except (FileNotFoundError, KeyError, TypeError):
            continue  # left as is; the check reports it
        if new != fig.shown:
            text = text[: fig.start] + new + text[fig.end :]
            changed += 1
    if changed:
        doc.write_text(text, encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "docs", nargs="*", type=Path, help="documents to scan (default: README, docs/, benchmarks/)"
    )
    ap.add_argument("--update", action="store_true", help="rewrite marked numbers from the results files")
    args = ap.parse_args(argv)
    docs = args.docs or default_docs()
    if args.update:
        for doc in docs:
            n = update(doc)
            if n:
                print(f"{doc}: {n} figure(s) updated")
    figures = [fig for doc in docs for fig in scan(doc)]
    cache: dict[str, Any] = {}
    problems = [p for fig in figures if (p := check(fig, cache=cache)) is not None]
    quoted = sorted({fig.file for fig in figures})
    untraceable = [p for file in quoted for p in provenance_of(file)]
    for p in problems + untraceable:
        print(p, file=sys.stderr)
    print(f"{len(figures)} marked figures, {len(problems)} do not match their results file")
    print(f"{len(quoted)} results files quoted, {len(untraceable)} provenance problem(s)")
    return 1 if problems or untraceable else 0


if __name__ == "__main__":
    sys.exit(main())
