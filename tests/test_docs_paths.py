"""Every repository path the README and docs/ name exists (a renamed module or example leaves
no dead path for a reader to follow)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: a path from the repository root; not part of a longer path (~/.cache/compass/jax) or a name
PATH = re.compile(r"(?<![\w/.~$-])(?:compass|tests|examples|benchmarks)/[\w./-]*[\w/]")
#: illustrative names in example output, not files
NOT_FILES = {"examples/eval/x.yaml"}


def _named_paths() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in PATH.finditer(line):
                out.setdefault(m.group(0), []).append(f"{doc.relative_to(ROOT)}:{n}")
    return out


def test_paths_named_in_the_docs_exist():
    named = _named_paths()
    assert "examples/eval/ablation.yaml" in named and "compass/eval/" in named  # the scan sees them
    missing = {p: where for p, where in named.items() if p not in NOT_FILES and not (ROOT / p).exists()}
    assert not missing, missing
