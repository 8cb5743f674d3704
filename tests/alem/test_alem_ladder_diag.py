"""benchmarks/alem_ladder_diag.py: the relay counts a helper reads to size the ladder relay
(docs/alem.md "The ladder relayed")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alem_testlib import LIBRARY, needs_alem

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@needs_alem
@pytest.mark.slow
def test_ladder_diag_records_who_saw_the_ladder_and_who_took_the_team_down(monkeypatch, tmp_path, capfd):
    """Hard tuning seed 4, 700 steps (shorter episodes turn the library's late descent on before
    step 383), the library: the warrior first sees the ladder down at step 147 and is the one whose
    Descend takes the team to level 1 at step 383 (a gap of 0); before that, armed teammates knew
    no ladder while it did (``blind_armed``), and the report's lines say so."""
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    from alem_ladder_diag import main

    out = tmp_path / "ladder.json"
    recs = main([str(LIBRARY / "alem_role_policy.py"), "--seeds", "4", "--steps", "700", "--out", str(out)])
    assert json.loads(json.dumps(recs)) == json.loads(out.read_text())
    (rec,) = recs
    relay = rec["relay"]
    assert rec["level1"] == 383 and rec["descender"] == 0
    assert (relay["first_seen"], relay["first_seer"], relay["descender_seen"], relay["gap"]) == (
        147,
        0,
        147,
        0,
    )
    assert relay["blind_armed"] > 0 and relay["blind_armed_first"] >= 300
    assert relay["blind_armed_fit"] <= relay["blind_armed"]
    printed = capfd.readouterr().out
    assert "a ladder seen in 1, the team down in 1" in printed
    assert "down by another agent than the first seer: 0" in printed


@needs_alem
@pytest.mark.slow
def test_the_oracle_has_every_agent_know_the_ladder_before_it_acts(monkeypatch, tmp_path):
    """``--oracle-ladder`` (a bound for what finding the ladder is worth): on the same seed, where
    the library's warrior first sees the ladder at step 147, every agent knows it at step 0."""
    monkeypatch.syspath_prepend(str(BENCH))
    from alem_ladder_diag import main

    out = tmp_path / "oracle.json"
    argv = [str(LIBRARY / "alem_role_policy.py"), "--seeds", "4", "--steps", "20", "--out", str(out)]
    (rec,) = main([*argv, "--oracle-ladder"])
    assert rec["ladders"] and rec["relay"]["first_seen"] == 0
    assert [ag["ladder"] for ag in rec["agents"].values()] == [0, 0, 0]
