"""A corpus of broken library files: each is reported by name with its cause and skipped, the
rest load; ``skills check`` reports hangs and exits as failures with a non-zero exit code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compass.cli import app
from compass.core.family import get_family
from compass.skills.check import check_library
from compass.skills.library import SkillLibrary

GOOD = "# provenance: human\ndef good_one(obs: str) -> int:\n    '''Always the default.'''\n    return default_action(obs)\n"

#: file name -> (content, words the reported cause must contain)
BROKEN: dict[str, tuple[str | bytes, str]] = {
    "deep_expression.py": (
        "def deep_expression(obs):\n    return " + "+".join(["1"] * 20_000) + "\n",
        "nested too deeply",
    ),
    "syntax_error.py": ("def syntax_error(obs):\n    return (\n", "syntax error"),
    "unterminated.py": ("def unterminated(obs):\n    return 'abc\n", "syntax error"),
    "null_byte.py": ("def null_byte(obs):\n    return 1\x00\n", "syntax error"),
    "not_utf8.py": (b"def not_utf8(obs):\n    return '\xff\xfe'\n", "unreadable"),
    "two_functions.py": (
        "def two_functions(obs):\n    return 1\ndef other(obs):\n    return 2\n",
        "exactly one",
    ),
    "wrong_name.py": ("def another_name(obs):\n    return 1\n", "named"),
    "uses_exec.py": ("def uses_exec(obs):\n    exec('x = 1')\n    return 1\n", "not allowed"),
    "dunder.py": ("def dunder(obs):\n    return obs.__class__\n", "not allowed"),
    "empty.py": ("", "exactly one function, found 0"),
    "huge.py": ("def huge(obs):\n    return 1\n" + "#" * 300_000 + "\n", "too large"),
    "shout.PY": ("def shout(obs):\n    return 1\n", "lower-case .py"),
}


def _write(folder: Path, name: str, content: str | bytes) -> None:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


@pytest.fixture
def broken_root(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    folder = root / "combat"
    shutil.copytree(
        get_family("combat").seed_skills_dir, folder, ignore=shutil.ignore_patterns("_stats.json")
    )
    (folder / "good_one.py").write_text(GOOD)
    for name, (content, _) in BROKEN.items():
        _write(folder, name, content)
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "_stats.json").write_text("[]")
    return root


def test_each_broken_file_is_reported_and_the_rest_load(broken_root):
    lib = SkillLibrary(broken_root, "combat")
    shipped = {p.stem for p in get_family("combat").seed_skills_dir.glob("*.py")}
    assert set(lib.names()) == shipped | {"good_one"}
    problems = {p.path.name: p for p in lib.problems}
    for name, (_, cause) in BROKEN.items():
        assert name in problems, f"{name} not reported"
        assert cause in problems[name].message, (name, problems[name].message)
        assert problems[name].fatal
    assert "expected an object" in problems["_stats.json"].message and lib.stats == {}
    assert not problems["notes.txt"].fatal  # reported, but a stray note is no failure


@pytest.mark.parametrize(
    ("stats", "kept"),
    [
        ("[]", {}),
        ("null", {}),
        ('{"focus_fire": [1, 2]}', {}),
        ('{"focus_fire": {"uses": 3, "errors": "many"}}', {"focus_fire": {"uses": 3}}),
        ("{not json", {}),
    ],
)
def test_stats_of_any_shape_load(tmp_path, stats, kept):
    folder = tmp_path / "combat"
    folder.mkdir()
    (folder / "good_one.py").write_text(GOOD)
    (folder / "_stats.json").write_text(stats)
    lib = SkillLibrary(tmp_path, "combat")
    assert lib.stats == kept and lib.names() == ["good_one"]
    assert [p.path.name for p in lib.problems] == ["_stats.json"]
    lib.record_use("good_one", uses=1)
    lib.save_stats()
    assert json.loads((folder / "_stats.json").read_text())["good_one"]["uses"] == 1


def test_cli_lists_the_good_skills_and_reports_the_bad(broken_root):
    result = CliRunner().invoke(app, ["skills", "list", "--library", str(broken_root)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "good_one" in result.output and "focus_fire" in result.output
    for name in BROKEN:
        assert f"skipped {name}:" in result.output, name


HANGS_IN_C = (
    "def hangs_in_c(obs: str) -> int:\n    '''Loops in C code.'''\n    return len(list(iter(int, 1)))\n"
)
EXITS = "def exits(obs: str) -> int:\n    '''Tries to end the process.'''\n    raise SystemExit(0)\n"
LOOPS = "def loops(obs: str) -> int:\n    '''Loops in Python.'''\n    while True:\n        pass\n"


@pytest.mark.timeout(300)
def test_check_reports_hangs_and_exits_as_failures(tmp_path):
    folder = tmp_path / "combat"
    folder.mkdir()
    for code in (GOOD, HANGS_IN_C, EXITS, LOOPS):
        name = code.split("def ", 1)[1].split("(", 1)[0]
        (folder / f"{name}.py").write_text(code)
    lib = SkillLibrary(tmp_path, "combat")
    texts = [
        json.loads(line)["text"]
        for line in get_family("combat").observations_path.read_text().splitlines()[:4]
    ]
    rows = {r.name: r for r in check_library(lib, observations=texts)}
    assert rows["good_one"].ok and rows["good_one"].runs == 4
    for name in ("hangs_in_c", "loops"):
        # Stopped by the sandbox's limits and reported on every observation, instead of a hang.
        assert rows[name].runs == 4 and len(rows[name].errors) == 4, rows[name]
        assert all("[budget]" in e or "[resource]" in e for e in rows[name].errors), rows[name].errors
    assert len(rows["exits"].errors) == 4 and "SystemExit" in rows["exits"].errors[0]

    result = CliRunner().invoke(app, ["skills", "check", "--library", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "3 skill file(s) with problems" in result.output


def test_compass_run_says_which_files_it_skipped_once(broken_root, tmp_path):
    """The run goes on with the good skills and says on the console (not only in the trace) which
    file it skipped and why, once each."""
    result = CliRunner().invoke(
        app,
        ["run", "--library", str(broken_root), "--max-steps", "2", "--out", str(tmp_path / "runs")],
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    for name, (_, reason) in BROKEN.items():
        lines = [ln for ln in result.output.splitlines() if f"skipped {broken_root / 'combat' / name}:" in ln]
        assert len(lines) == 1, (name, result.output)
        assert reason in lines[0], (name, lines[0])
