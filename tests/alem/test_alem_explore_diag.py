"""benchmarks/alem_explore_diag.py: what a team has seen, when it first saw what it looks for, and the
freedom its chores leave (docs/alem.md "Chores toward unseen ground")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alem_testlib import LIBRARY, needs_alem

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@needs_alem
@pytest.mark.slow
def test_explore_diag_records_seen_shares_first_sightings_and_chores(monkeypatch, tmp_path, capfd):
    """Hard tuning seed 0, 250 steps: the team has seen at least what each agent has and more as the
    day goes on; the first sightings lie within the episode; chores and explore steps are counted
    among the sampled agent-steps, and a chore's alternatives grow with the slack."""
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    from alem_explore_diag import main

    out = tmp_path / "explore.json"
    argv = [str(LIBRARY / "alem_role_policy.py"), "--seeds", "0", "--steps", "250"]
    recs = main(argv + ["--at", "50,200", "--every", "5", "--out", str(out)])
    assert recs == json.loads(out.read_text())
    (rec,) = recs
    assert rec["seed"] == 0 and set(rec["seen"]) == set(rec["team_seen"]) == {"50", "200"}
    for at in ("50", "200"):
        assert all(0 < x <= rec["team_seen"][at] <= 1 for x in rec["seen"][at])
    assert rec["team_seen"]["200"] > rec["team_seen"]["50"]
    assert set(rec["first"]) <= {"ladder down", "coal", "iron", "diamond", "water"}
    assert all(0 <= s < 250 for s in rec["first"].values())
    c = rec["counts"]
    assert 0 < c["chore"] + c.get("explore", 0) <= c["agent_steps"]
    assert c.get("alt0", 0) <= c.get("alt1", 0) <= c.get("alt2", 0) <= c["chore"]
    printed = capfd.readouterr().out
    assert "step 200: seen per agent mean" in printed and "first seen water" in printed
