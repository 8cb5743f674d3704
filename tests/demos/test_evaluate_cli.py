"""``compass demos evaluate`` measures and prints; it writes only where ``--out`` says (it used to
overwrite the tracked ``demos/*/eval.json``, a published figure, without a word)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compass.cli import app

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "demos" / "protoss_5_vs_5"

pytestmark = pytest.mark.skipif(not (SHIPPED / "checkpoint").is_dir(), reason="no shipped checkpoint")


def test_evaluate_writes_nothing_without_out_and_the_file_given_with_it(tmp_path):
    folder = tmp_path / "protoss_5_vs_5"
    shutil.copytree(
        SHIPPED / "checkpoint", folder / "checkpoint", ignore=shutil.ignore_patterns("train_state*")
    )
    published = SHIPPED / "eval.json"
    shutil.copy(published, folder / "eval.json")
    before = (folder / "eval.json").read_bytes()

    r = CliRunner().invoke(app, ["demos", "evaluate", str(folder / "checkpoint"), "--episodes", "2"])
    assert r.exit_code == 0, r.output
    assert "greedy win rate" in r.output and "not written" in r.output
    assert (folder / "eval.json").read_bytes() == before

    out = tmp_path / "check.json"
    r = CliRunner().invoke(
        app, ["demos", "evaluate", str(folder / "checkpoint"), "--episodes", "2", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["greedy_eval"]["episodes"] == 2
    assert (folder / "eval.json").read_bytes() == before
