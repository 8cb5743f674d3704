"""benchmarks/alem_seek_diag.py: the per-episode record a helper reads to see which descents a
seeking variant gains and loses (docs/alem.md "Down armed, fifth pass")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alem_testlib import LIBRARY, needs_alem

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@needs_alem
@pytest.mark.slow
def test_seek_diag_records_deaths_and_no_seeking_before_from_step(monkeypatch, tmp_path, capfd):
    """Hard tuning seed 0, 330 steps, the library against itself: the rows are the same, no
    episode is reported changed, no agent-step counts as seeking before ``--from-step``, and the
    death on the overworld before step 330 (an agent of this team dies at step 319) is recorded
    with its step, level and day step."""
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    from alem_seek_diag import main

    lib = LIBRARY / "alem_role_policy.py"
    out = tmp_path / "seek.json"
    argv = [f"a={lib}", f"b={lib}", "--seeds", "0", "--steps", "330", "--out", str(out)]
    rows = main(argv + ["--from-step", "1200"])
    assert rows == json.loads(out.read_text())
    assert rows["a"] == rows["b"]
    (row,) = rows["a"]
    assert row["seed"] == 0 and row["level1"] is None
    assert row["seek_steps"] == [0, 0, 0]
    assert row["deaths"], "the team loses an agent before step 330 on seed 0"
    for death in row["deaths"]:
        assert 0 < death["step"] <= 330 and death["level"] == 0 and death["day_step"] == death["step"] % 300
        assert death["sought_recently"] is False
    printed = capfd.readouterr().out
    assert "[b]   seed" not in printed  # nothing changed
    assert "[a] team Total %" in printed and "on level 1 0 of 1" in printed
