"""benchmarks/alem_food_diag.py: the plant and detour figures (docs/alem.md "Plants on the way")."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest
from alem_testlib import LIBRARY, needs_alem

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _diag(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    import alem_food_diag

    return alem_food_diag


def test_ripe_at_and_walk_before(monkeypatch):
    diag = _diag(monkeypatch)
    plant = {"t": 100, "eats": [{"t": 650, "role": "miner"}]}
    assert not diag.ripe_at(plant, 599)
    assert diag.ripe_at(plant, 600) and diag.ripe_at(plant, 649)
    assert not diag.ripe_at(plant, 700)  # eaten at 650: growing again
    assert diag.ripe_at(plant, 1150)
    tail = deque({"kind": k} for k in ("do other", "move", "move", "move", "do ripe_plant"))
    assert diag.walk_before(tail) == 3
    assert diag.walk_before(deque([{"kind": "do water"}])) == 0


def test_plant_report_counts_ripened_eaten_and_walks(monkeypatch):
    diag = _diag(monkeypatch)
    out = {
        "plants": [
            {
                "t": 150,
                "role": "forager",
                "base": 3,
                "table": 3,
                "eats": [{"t": 700, "role": "forager"}],
                "seed": 0,
            },
            {"t": 160, "role": "forager", "base": 6, "table": 6, "eats": [], "seed": 0},
            {"t": 900, "role": "miner", "base": 15, "table": 15, "eats": [], "seed": 1},
        ],
        "saplings": {"forager": 2, "miner": 1},
        "walks": {"warrior / give": [0, 0], "forager / do ripe_plant": [2, 4]},
        "hungry_ripe": {"none": 10, "within 12": 2},
    }
    out["plants"][0]["end"] = out["plants"][1]["end"] = 1000
    out["plants"][2]["end"] = 1200  # 300 steps: never ripe
    r = diag.plant_report(out)
    assert r["plants_placed_by_role"] == {"forager": 2, "miner": 1}
    assert r["episodes_with_plants"] == 2
    assert r["plants_lived_to_ripen"] == 2 and r["plants_eaten_ever"] == 1
    assert r["plant_eats_by_role"] == {"forager": 1}
    assert r["walk_before_food_mean"] == {"warrior / give": [2, 0], "forager / do ripe_plant": [2, 3]}
    assert r["plant_step_median"] == 160 and r["plant_base_dist_median"] == 6


def test_report_says_why_a_starving_askers_request_went_unserved(monkeypatch):
    """A near-starving warrior's requests: one served, one with the forager dead, one with it alive
    but holding 5 (it shares from 8), one with it asleep holding 12; a miner's at 6 food is not
    counted as near starving."""
    diag = _diag(monkeypatch)

    def req(have, served, alive=True, has=None, asleep=False, role="warrior"):
        return {
            "role": role,
            "what": "food",
            "have": have,
            "served_after": served,
            "forager_alive": alive,
            "forager_has": has,
            "forager_asleep": asleep,
        }

    reqs = [
        req(0, 3, has=9),
        req(1, None, alive=False),
        req(2, None, has=5),
        req(0, None, has=12, asleep=True),
    ]
    reqs.append(req(6, None, has=3, role="miner"))
    r = diag.report({"requests": reqs, "deaths": []})["requests"]
    k = "warrior food at <=2"
    assert r[k + " asked"] == 4 and r[k + " unserved"] == 3
    assert r[k + " unserved, forager alive"] == 2
    assert r[k + " unserved, forager alive holding <8"] == 1
    assert r[k + " unserved, forager asleep"] == 1
    assert r["miner food asked"] == 1 and not any(x.startswith("miner food at") for x in r)


@needs_alem
@pytest.mark.slow
def test_food_diag_records_the_foragers_plants(monkeypatch, tmp_path):
    """Hard tuning seed 1, 250 steps, the library: the forager gathers saplings and plants them by
    the table (within 8 of the forager: 9 of the plant); none ripens within 250 steps."""
    diag = _diag(monkeypatch)
    out = tmp_path / "food.json"
    assert (
        diag.main([str(LIBRARY / "alem_role_policy.py"), "--seeds", "1", "--steps", "250", "--out", str(out)])
        == 0
    )
    rep = json.loads(out.read_text())
    s = rep["summary"]
    assert s["plants_placed_by_role"].get("forager", 0) >= 1
    assert s["saplings_gathered"]["forager"] >= s["plants_placed_by_role"]["forager"]
    assert s["plants_lived_to_ripen"] == 0 and s["plants_eaten_ever"] == 0
    for plant in rep["plants"]:
        assert plant["role"] == "forager" and plant["table"] is not None and plant["table"] <= 9
        assert 0 < plant["t"] < 250 and plant["end"] == 250
