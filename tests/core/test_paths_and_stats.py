"""``find_path`` (the A* helper skills call) and ``wilson_interval`` (every published win rate)."""

from __future__ import annotations

import math

import pytest

from compass.eval.stats import wilson_interval
from compass.games.combat.skill_api import find_path
from compass.games.combat.text import MOVE_EAST, MOVE_NORTH, MOVE_SOUTH, MOVE_WEST, parse_combat_text

HEAD = """Step 5. You are Ally #0, a stalker (shoot range 6.0, sight range 9.0).
Own unit: position ({x:.3f}, 0.500) of the 32x32 map, health 1.00, shield 0.00, weapon cooldown 0.00, last action: stop
Can move North: yes
Can move South: yes
Can move East: yes
Can move West: {west}
"""
# An ally one world unit east of us (0.111 of the sight range 9), standing in the way.
BLOCKER = (
    "Ally #1: stalker, relative position (+0.111, +0.000), distance 0.111, health 1.00, shield 0.00, "
    "last action: stop\n"
)


def obs(blocker: bool = False, x: float = 0.5, west: bool = True):
    actions = "1, 2, 3, 4, 5" if west else "1, 2, 3, 4"
    text = HEAD.format(x=x, west="yes" if west else "no") + (BLOCKER if blocker else "")
    return parse_combat_text(text + f"Available actions: {actions}")


def test_find_path_goes_straight_when_the_way_is_free():
    assert find_path(obs(), 0.5, 0.0) == MOVE_EAST
    assert find_path(obs(), -0.5, 0.0) == MOVE_WEST
    assert find_path(obs(), 0.0, 0.5) == MOVE_NORTH
    assert find_path(obs(), 0.0, 0.0) is None  # already there


def test_find_path_steps_around_a_unit_in_the_way():
    first = find_path(obs(blocker=True), 0.5, 0.0)
    assert first in (MOVE_NORTH, MOVE_SOUTH)  # around the ally, not into it


def test_find_path_never_returns_an_unavailable_move():
    # At the west edge with West unavailable, a target to the west gets no move that makes progress.
    d = obs(x=0.02, west=False)
    assert find_path(d, -0.5, 0.0) not in (MOVE_WEST,)
    assert find_path(d, -0.5, 0.4) in (MOVE_NORTH, None)


@pytest.mark.parametrize(
    ("wins", "n", "lo", "hi"),
    [
        (0, 20, 0.0, 0.1611),  # the published "0.00 [0.00, 0.16]" for 20 seeds
        (20, 20, 0.8389, 1.0),
        (43, 50, 0.7381, 0.9305),  # by hand from the formula
        (17, 20, 0.6396, 0.9476),
    ],
)
def test_wilson_interval_known_values(wins, n, lo, hi):
    got = wilson_interval(wins, n)
    assert got == pytest.approx((lo, hi), abs=1e-4)
    assert got[0] <= wins / n <= got[1]


def test_wilson_interval_edges_and_width():
    assert wilson_interval(0, 0) == (0.0, 0.0)
    narrow, wide = wilson_interval(50, 100), wilson_interval(5, 10)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]
    # Symmetric around one half.
    lo, hi = wilson_interval(3, 10)
    lo2, hi2 = wilson_interval(7, 10)
    assert math.isclose(lo, 1 - hi2) and math.isclose(hi, 1 - lo2)
