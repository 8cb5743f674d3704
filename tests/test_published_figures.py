"""Every marked figure in README.md, docs/ and benchmarks/README.md matches its results file.

A figure is marked ``<!-- figure: FILE.json:path.to.value[*SCALE] -->NUMBER`` (see
benchmarks/figures.py and benchmarks/README.md); the results files are what the benchmark
scripts wrote (benchmarks/_results.py), from a clean commit that is an ancestor of HEAD, with the
inputs they read hashed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import benchmarks._results as results_module
from benchmarks._results import ProvenanceError, write_results
from benchmarks.figures import ROOT, check, default_docs, expected, provenance, scan, update

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
    problems = provenance(record, path.name)
    assert not problems, "\n".join(problems)


def test_demos_readme_is_scanned():
    assert ROOT / "demos" / "README.md" in default_docs()


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A throwaway git repository standing in for the checkout, with one committed input file."""
    root = (tmp_path / "repo").resolve()
    (root / "benchmarks" / "results").mkdir(parents=True)
    (root / "data.txt").write_text("recorded input\n")
    (root / "notes.md").write_text("tracked\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    monkeypatch.setattr(results_module, "ROOT", root)
    monkeypatch.setattr(results_module, "RESULTS_DIR", root / "benchmarks" / "results")
    return root


def _write(name="bench_t", **kw):
    return write_results(name, {"x": 1.0}, seeds=[0], argv=["benchmarks/bench_t.py"], **kw)


def test_write_results_from_a_clean_commit_records_inputs_the_check_accepts(repo):
    path = _write(inputs=["data.txt"])
    record = json.loads(path.read_text())
    assert record["commit"] == _git(repo, "rev-parse", "HEAD") and record["dirty"] is False
    assert record["inputs"] == {"data.txt": _git(repo, "rev-parse", "HEAD:data.txt")}
    assert provenance(record, "bench_t.json", root=repo) == []


def test_an_earlier_results_file_does_not_make_the_tree_dirty(repo):
    _write()
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results")
    _write()  # rewrites the committed bench_t.json: the next benchmark of a batch still runs
    assert json.loads(_write(name="bench_u").read_text())["dirty"] is False


def test_write_results_refuses_a_dirty_tree_and_allow_dirty_marks_the_file(repo):
    (repo / "notes.md").write_text("changed after the commit\n")
    with pytest.raises(ProvenanceError, match="uncommitted changes.*notes.md"):
        _write()
    assert not (repo / "benchmarks" / "results" / "bench_t.json").exists()
    record = json.loads(_write(allow_dirty=True).read_text())
    assert record["dirty"] is True
    problems = provenance(record, "bench_t.json", root=repo)
    assert len(problems) == 1 and "marked dirty" in problems[0] and "notes.md" in problems[0]


@pytest.mark.parametrize(
    "make_input, error",
    [
        (lambda repo: repo / "new.txt", "not tracked"),
        (lambda repo: repo.parent / "outside.txt", "outside the repository"),
    ],
    ids=["untracked", "outside"],
)
def test_write_results_refuses_an_input_that_is_not_committed(repo, make_input, error):
    path = make_input(repo)
    path.write_text("read by the run\n")
    with pytest.raises(ProvenanceError, match=error):
        _write(inputs=[path])


def test_write_results_refuses_a_commit_on_no_branch(repo):
    (repo / "notes.md").write_text("a commit only a detached HEAD holds\n")
    _git(repo, "checkout", "-q", "--detach")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "detached")
    with pytest.raises(ProvenanceError, match="on no local branch"):
        _write()


def test_figure_check_rejects_a_foreign_or_unrelated_commit_and_changed_inputs(repo):
    record = json.loads(_write(inputs=["data.txt"]).read_text())
    # a commit on another branch: in the repository but not an ancestor of HEAD
    _git(repo, "checkout", "-q", "-b", "side")
    (repo / "data.txt").write_text("changed on a side branch\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "side")
    side = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "main")
    unrelated = provenance({**record, "commit": side}, "b.json", root=repo)
    assert any("not an ancestor of HEAD" in p for p in unrelated)
    assert any("input data.txt" in p for p in unrelated), "data.txt differs at the side commit"
    foreign = provenance({**record, "commit": "cd224b94" + "0" * 32}, "b.json", root=repo)
    assert foreign == ["b.json: commit cd224b940000 is not in this repository"]
    no_inputs = {k: v for k, v in record.items() if k != "inputs"}
    assert provenance(no_inputs, "b.json", root=repo) == [], "an older file whose command names no file"
    reads = provenance(
        {**no_inputs, "command": "python benchmarks/b.py --spec data.txt"}, "b.json", root=repo
    )
    assert reads == ["b.json: lists no inputs but its command reads data.txt; re-run it"]
    outside = provenance(
        {**record, "command": "python benchmarks/b.py --run /tmp/s15/run"}, "b.json", root=repo
    )
    assert outside == ["b.json: command reads /tmp/s15/run, outside the repository"]


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


def test_a_key_with_spaces_is_one_path(tmp_path):
    """Benchmarks name modes in words ("2 workers x batched 8"): such a key is one path step."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "b.json").write_text(
        json.dumps({"results": {"modes": {"2 workers x batched 8": {"x": 1.98}}}})
    )
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- figure: b.json:modes.2 workers x batched 8.x -->1.98x and <!-- figure: b.json:modes.2 workers.x -->1\n"
    )
    figs = scan(doc)
    assert [f.shown for f in figs] == ["1.98", "1"]
    assert check(figs[0], results) is None
    assert "no 'modes.2 workers'" in check(figs[1], results)


def test_checker_cli_exits_non_zero_on_a_mismatch(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- figure: bench_planner_tokens.json:tokens.episodes -->99\n")
    script = ROOT / "benchmarks" / "figures.py"
    out = subprocess.run([sys.executable, str(script), str(doc)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1 and "shows 99" in out.stderr
