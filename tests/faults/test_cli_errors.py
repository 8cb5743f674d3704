"""The command line's bad inputs: one clear ``error:`` line and a non-zero exit, never a traceback,
unless ``--debug`` asks for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compass.cli import app


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "runs.txt"
    path.write_text("not a folder\n")
    return path


def bad_inputs(a_file: Path, tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """argv -> words the one error line must contain."""
    return {
        "out_is_a_file": (["run", "--out", str(a_file)], "is a file"),
        "out_under_a_file": (["run", "--out", str(a_file / "sub")], "is a file"),
        "unknown_vlm_prefix": (
            ["run", "--vlm", "foo:bar", "--out", str(tmp_path)],
            "unknown VLM spec 'foo:bar'",
        ),
        "replay_without_trace": (
            ["run", "--vlm", f"replay:{tmp_path / 'nowhere'}", "--out", str(tmp_path)],
            "no trace at",
        ),
        "unknown_env_family": (
            ["run", "--env", "nope:x", "--out", str(tmp_path)],
            "unknown environment 'nope'",
        ),
        "env_without_scenario": (["run", "--env", "smax", "--out", str(tmp_path)], "FAMILY:SCENARIO"),
        "missing_library": (
            ["run", "--library", str(tmp_path / "nolib"), "--out", str(tmp_path)],
            "no skill library",
        ),
        "library_is_a_file": (["skills", "list", "--library", str(a_file)], "runs.txt"),
        "unknown_family": (["skills", "list", "--family", "chess"], "chess"),
        "unknown_skill": (["skills", "show", "no_such_skill"], "no skill named 'no_such_skill'"),
        "bad_isolation": (["run", "--isolation", "bad", "--out", str(tmp_path)], "isolation"),
        "bad_comm": (["run", "--comm", "bogus", "--out", str(tmp_path)], "invalid comm mode"),
        "bad_planner": (["run", "--planner", "magic", "--out", str(tmp_path)], "planner"),
    }


CASES = sorted(bad_inputs(Path("/x"), Path("/y")))


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_and_non_zero(case, a_file, tmp_path):
    argv, words = bad_inputs(a_file, tmp_path)[case]
    result = _invoke(*argv)
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output and "╭" not in result.output, result.output
    lines = _error_lines(result.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert words in lines[0], lines[0]
    assert not [p for p in tmp_path.iterdir() if p != a_file]  # nothing that looks like a result


@pytest.mark.parametrize("argv", [["--vlm", "foo:bar"], ["--env", "nope:x"]])
def test_debug_shows_the_traceback(tmp_path, argv):
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "compass.cli", "--debug", "run", *argv, "--out", str(tmp_path)]
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}
    plain = subprocess.run(command[:3] + command[4:], cwd=root, env=env, capture_output=True, text=True)
    debug = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    assert plain.returncode != 0 and debug.returncode != 0
    assert "Traceback" not in plain.stderr and "most recent call last" not in plain.stderr
    assert "Traceback" in debug.stderr or "most recent call last" in debug.stderr, debug.stderr[-2000:]


def test_unexpected_failure_is_one_line_with_a_hint(monkeypatch, tmp_path):
    import compass.episode.session

    def broken(*args, **kwargs):
        raise ZeroDivisionError("something inside broke")

    monkeypatch.setattr(compass.episode.session, "run", broken)
    result = _invoke("run", "--out", str(tmp_path))
    assert result.exit_code == 1
    lines = _error_lines(result.output)
    assert lines == ["error: ZeroDivisionError: something inside broke (run with --debug for the traceback)"]


def test_one_exit_code_rule():
    """compass/core/errors.py: a CompassError carries its code (VLMError, SkillError: 1; the
    rest 2), a bad request is 2, anything else 1; only the last gets the --debug hint."""
    from compass.cli.errors import describe
    from compass.core.errors import CompassError, exit_code, is_expected
    from compass.eval.spec import SpecError
    from compass.sandbox import SkillError
    from compass.vlm import VLMError

    codes = {
        VLMError("no model"): 1,
        SkillError("bad skill"): 1,
        CompassError("bad request"): 2,
        FileNotFoundError("nope"): 2,
        SpecError("bad spec"): 2,
        ZeroDivisionError("bug"): 1,
    }
    assert {type(e).__name__: exit_code(e) for e in codes} == {type(e).__name__: c for e, c in codes.items()}
    assert [is_expected(e) for e in codes] == [True, True, True, True, True, False]
    assert describe(ZeroDivisionError("bug")) == "ZeroDivisionError: bug" and describe(VLMError("x")) == "x"
