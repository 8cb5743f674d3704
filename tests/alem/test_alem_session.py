"""``compass run --env alem:...``: a named skill runs and the paper's metrics are reported."""

from __future__ import annotations

import json

from compass.config import RunConfig
from compass.episode.session import run


def test_alem_run_reports_base_coord_total_with_cis(tmp_path):
    summary = run(
        RunConfig(
            env="alem:overworld", episodes=2, max_steps=30, out=tmp_path, run_id="a", skill="alem_role_policy"
        )
    )
    on_disk = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert all(set(e["skills_used"]) == {"alem_role_policy"} for e in on_disk["episodes"])
    for key in ("base_pct", "coord_pct", "total_pct"):
        m = on_disk["alem"][key]
        assert 0.0 <= m["ci95"][0] <= m["mean"] <= m["ci95"][1] <= 100.0
    assert all("total_pct" in e["alem"] for e in summary["episodes"])
