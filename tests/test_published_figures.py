"""Every marked figure in README.md, docs/ and benchmarks/README.md matches its results file.

A figure is marked ``<!-- figure: FILE.json:path.to.value[*SCALE] -->NUMBER`` (see
benchmarks/figures.py and benchmarks/README.md); the results files are what the benchmark
scripts wrote (benchmarks/_results.py).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks.figures import ROOT, check, default_docs, expected, scan, update

RESULTS = ROOT / "benchmarks" / "results"


def _figures():
    return [fig for doc in default_docs() for fig in scan(doc)]


def test_published_figures_match_their_results_files():
    figures = _figures()
    assert len(figures) >= 20, "README, docs and benchmarks/README quote their numbers through markers"
    cache: dict = {}
    problems = [p for fig in figures if (p := check(fig, cache=cache)) is not None]
    assert not problems, "\n".join(problems)


def test_headline_sections_quote_marked_figures():
    """The README's standing and the benchmark tables are marked (not typed in by hand)."""
    docs = {fig.doc.name for fig in _figures()} | {fig.doc.parent.name for fig in _figures()}
    assert {"README.md", "benchmarks"} <= docs


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_results_files_say_what_produced_them(path):
    record = json.loads(path.read_text())
    if "benchmark" not in record:
        # Some benchmarks predate benchmarks/_results.py (bench_sandbox, bench_faults); they adopt
        # it by ending with write_results(). Their figures cannot be marked until then.
        pytest.skip(f"{path.name} is not written by benchmarks/_results.py yet")
    assert record["benchmark"] == path.stem
    assert record["command"].startswith("python benchmarks/")
    script = record["command"].split()[1]
    assert (ROOT / script).is_file(), f"{path.name}: {script} is not a committed script"
    assert record["commit"] and len(record["commit"]) == 40
    assert {"cpus", "python", "platform"} <= set(record["machine"])
    assert "seeds" in record and isinstance(record["results"], dict)


def test_checker_catches_a_wrong_figure_and_update_fixes_it(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "b.json").write_text(json.dumps({"results": {"scenario": {"rate": 0.8571, "rows": [1, 2.5]}}}))
    doc = tmp_path / "doc.md"
    doc.write_text(
        "win **<!-- figure: b.json:scenario.rate -->0.80** and "
        "<!-- figure: b.json:scenario.rate*100 -->85.7 % and <!-- figure: b.json:scenario.rows.1 -->2.5\n"
        "missing <!-- figure: nope.json:x -->1 and <!-- figure: b.json:scenario.nope -->1\n"
        "an example: `<!-- figure: b.json:scenario.rate -->0.1` is not a figure\n"
    )
    figs = scan(doc)
    assert [f.shown for f in figs] == ["0.80", "85.7", "2.5", "1", "1"]
    problems = [check(f, results) for f in figs]
    assert "shows 0.80" in problems[0] and "0.86" in problems[0] and "doc.md:1" in problems[0]
    assert problems[1] is None and problems[2] is None
    assert "nope.json does not exist" in problems[3] and "no 'scenario.nope'" in problems[4]
    assert expected(figs[1], results) == pytest.approx(85.71)
    doc.write_text(doc.read_text().split("\n")[0] + "\n")
    assert update(doc, results) == 1
    assert "-->0.86**" in doc.read_text()


def test_checker_cli_exits_non_zero_on_a_mismatch(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- figure: bench_planner_tokens.json:tokens.episodes -->99\n")
    script = ROOT / "benchmarks" / "figures.py"
    out = subprocess.run([sys.executable, str(script), str(doc)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1 and "shows 99" in out.stderr
