"""benchmarks/alem_deeper_diag.py: the per-episode record of what a team does below the overworld,
and the table of below-the-overworld achievements teams on level 1 miss (docs/alem.md "Below the
overworld, second pass")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alem_testlib import LIBRARY, needs_alem

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@needs_alem
@pytest.mark.slow
def test_deeper_diag_records_what_the_team_gains_below_and_the_gap_table(monkeypatch, tmp_path, capfd):
    """Hard tuning seed 10, 430 steps, the library: the team reaches level 1 at step 405 (all three
    unlock ENTER_DUNGEON there, the warrior its chest and bow soon after), its agent-steps below are
    counted per role, and the gap table lists each level-1 and level-2 achievement with what this one
    team got and missed (0.80 team Total % per miss)."""
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    from alem_deeper_diag import BELOW_ACHIEVEMENTS, main

    out = tmp_path / "deeper.json"
    assert (
        main([str(LIBRARY / "alem_role_policy.py"), "--seeds", "10", "--steps", "430", "--out", str(out)])
        == 0
    )
    report = json.loads(out.read_text())
    (rec,) = report["episodes"]
    assert rec["seed"] == 10 and rec["first_step"] == {"1": 405}
    entered = [g for g in rec["gained_below"] if g["achievement"] == "ENTER_DUNGEON"]
    assert [(g["step"], g["agent"]) for g in entered] == [(405, 0), (405, 1), (405, 2)]
    assert {"OPEN_CHEST", "FIND_BOW"} <= {
        g["achievement"] for g in rec["gained_below"] if g["role"] == "warrior"
    }
    alive = rec["alive_below"]
    assert alive["l1"] == sum(alive[f"l1_{r}"] for r in ("warrior", "forager", "miner")) > 0
    assert sum(v for k, v in rec["seen_below"].items() if k.startswith("l1_act_")) == alive["l1"]
    gaps = {g["achievement"]: g for g in report["gaps"]}
    assert set(gaps) == {a for names in BELOW_ACHIEVEMENTS.values() for a in names}
    assert gaps["ENTER_DUNGEON"]["got"] == 1 and gaps["ENTER_GNOMISH_MINES"]["missed"] == 1
    assert gaps["ENTER_GNOMISH_MINES"]["missed_pct_sum"] == pytest.approx(0.80)
    assert "1 of 1 teams reached level 1" in capfd.readouterr().out
