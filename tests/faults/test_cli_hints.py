"""Install hints reach the user whole: rich took ``[viewer]`` in ``pip install -e '.[viewer]'`` for
markup and printed ``pip install -e '.'``, a command that installs nothing the viewer needs."""

from __future__ import annotations

import sys

from typer.testing import CliRunner

from compass.cli import app


def test_viewer_hint_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # the viewer extra is not installed
    (tmp_path / "runs").mkdir()
    r = CliRunner().invoke(app, ["view", str(tmp_path / "runs")])
    assert r.exit_code == 2
    assert "pip install 'compass-agents[viewer]'" in r.output
    assert "pip install -e '.[viewer]'" in r.output


def test_local_model_hint_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    r = CliRunner().invoke(
        app,
        [
            "run",
            "--vlm",
            f"llamacpp:{model}",
            "--no-image",
            "--out",
            str(tmp_path / "runs"),
            "--max-steps",
            "2",
        ],
    )
    assert r.exit_code != 0
    assert "compass-agents[local]" in r.output


def test_a_path_with_brackets_is_printed_as_given(tmp_path):
    root = tmp_path / "lib[v2]"
    r = CliRunner().invoke(app, ["skills", "init", str(root), "--family", "combat"])
    assert r.exit_code == 0, r.output
    assert f"--library {root}" in r.output
