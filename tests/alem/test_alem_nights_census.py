"""benchmarks/alem_nights_diag.py's night census: where each agent-step of the library's night falls."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from test_alem_api import _obs

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
NIGHT = 300 + 150  # inside the library's night window (day steps 120-265)
# A dead end (1,1)-(2,1) whose entrance (3,1) one stone closes; the agent stands 5 tiles from it.
CORRIDOR = ["#####", "#...#", "###.#", "###.#", "##.@.", "....."]


@pytest.fixture
def census_key(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    from alem_nights_diag import night_census_key

    return night_census_key


def test_the_census_counts_only_the_overworld_night(census_key):
    assert census_key(_obs(CORRIDOR, step=300 + 60)) is None  # day
    assert census_key(_obs(CORRIDOR, step=NIGHT, level=1)) is None  # no night below


def test_the_census_tells_walled_in_from_out_with_or_without_a_plan(census_key):
    assert census_key(_obs(["####", "#@.#", "####"], step=NIGHT)) == "sealed"
    stone = {"wood": 0, "stone": 2, "pickaxe": 0, "sword": 0}
    assert census_key(_obs(CORRIDOR, step=NIGHT, inventory=stone)) == "plan 4-10 tiles"
    near = ["#####", "#...#", "###@#", "###.#", "##...", "....."]
    assert census_key(_obs(near, step=NIGHT, inventory=stone)) == "plan 0-3 tiles"
    # Without stone or a pickaxe no known spot can be closed: out with no plan.
    assert census_key(_obs(CORRIDOR, step=NIGHT)) == "no plan"
    assert census_key(replace(_obs(CORRIDOR, step=NIGHT), sleeping=True)) == "asleep in the open"
