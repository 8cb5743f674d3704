"""Chores toward unseen ground (compass.games.alem.skill_api.frontier, and ``explore(d, wide=)``):
on hand-drawn memories, where the rest of the 48 x 48 map is unseen, and on real views."""

from __future__ import annotations

import numpy as np
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, LEFT, RIGHT


def _seen(d, x0: int, x1: int, y0: int, y1: int, name: str = "grass"):
    """``d`` with the tiles x0..x1, y0..y1 (inclusive) drawn as ``name`` in its memory."""
    d.memory.blocks[0, y0 : y1 + 1, x0 : x1 + 1] = BLOCK_ID[name]
    return d


def test_unseen_around_counts_the_view_window_and_off_map_as_seen():
    d = _obs(["." * 11] * 9)  # x 0..10, y 0..8 seen; the rest of the map never seen
    assert api.unseen_around(d, (5, 4)) == 0  # the window is exactly the drawn block
    # Window x 5..15, y 4..12 (99 tiles), of them x 5..10, y 4..8 seen (30).
    assert api.unseen_around(d, (10, 8)) == 99 - 30
    # At the corner the window is cut by the map's edge: x 0..5, y 0..4, all seen.
    assert api.unseen_around(d, (0, 0)) == 0
    assert api.unseen_around(d, (-1, 3)) == 0  # off the map
    # The summed-area grid equals a plain count everywhere, on a ragged memory.
    rng = np.random.default_rng(0)
    d.memory.blocks[0] = np.where(rng.random((48, 48)) < 0.5, BLOCK_ID["grass"], -1)
    grid = api.unseen_grid(d)
    unknown = d.memory.blocks[0] < 0
    for x, y in ((0, 0), (47, 47), (20, 13), (3, 40), (45, 2)):
        want = unknown[max(0, y - 4) : y + 5, max(0, x - 5) : x + 6].sum()
        assert grid[y, x] == want == api.unseen_around(d, (x, y))


# Two trees three steps west and east of the agent; the east one lies by the unseen map (x >= 9).
TWO_TREES = ["." * 9] * 3 + ["..T...T.."] + ["." * 9] * 3


def test_nearest_frontier_breaks_ties_toward_unseen_ground_at_no_cost():
    d = _obs(TWO_TREES[:3] + ["..T.@.T.."] + TWO_TREES[4:])
    assert d.position == (4, 3)
    assert api.nearest(d, "tree") == (2, 3)  # nearest's tie-break: the row, then the column
    assert api.unseen_around(d, (6, 3)) > api.unseen_around(d, (2, 3))
    assert api.nearest_frontier(d, "tree") == (6, 3)
    # Never farther than nearest's tile with slack 0: a tree one step nearer in the west wins.
    near_west = _obs(TWO_TREES[:3] + ["...T@.T.."] + TWO_TREES[4:])
    assert api.nearest_frontier(near_west, "tree") == (3, 3)
    # Slack 1 takes the east tree one step farther, not with a gain asked beyond what it shows.
    assert api.nearest_frontier(near_west, "tree", slack=1) == (6, 3)
    gain = api.unseen_around(near_west, (6, 3)) - api.unseen_around(near_west, (3, 3))
    assert api.nearest_frontier(near_west, "tree", slack=1, min_gain=gain + 1) == (3, 3)
    # avoid skips a tile as nearest does.
    assert api.nearest_frontier(d, "tree", avoid={(6, 3)}) == (2, 3)
    assert api.nearest_frontier(d, "water") is None


def test_explore_wide_heads_for_the_large_unseen_area_not_a_hole():
    """Seen x 0..20, y 0..20 but for a one-tile hole four steps west; the unseen map begins six steps
    east, ahead of the agent (worth 2 steps to plain ``explore``: a tie, which goes to the hole).
    Plain ``explore`` fills the hole; ``wide=4`` heads east."""
    d = _obs(["."], position=(15, 10), facing="east", facing_xy=(16, 10))
    _seen(d, 0, 20, 0, 20)
    d.memory.blocks[0, 10, 11] = -1
    assert api.wide_frontier(d, 0.0) == (11, 10)
    assert api.explore(d) == LEFT
    assert api.wide_frontier(d, 4.0) == (21, 10)
    assert api.explore(d, wide=4.0) == RIGHT


def test_real_views_the_frontier_choice_costs_no_step(overworld_views):
    """Seed 3's first 40 steps by day: the agent's own window is all seen, and ``nearest_frontier``
    (slack 0) picks a tree at ``nearest``'s distance with at least as much unseen ground round it."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    checked = 0
    for views in overworld_views[1:]:
        for v in views:
            d = obs_data_from_view(v)
            if not d.alive or d.level != 0:
                continue
            assert api.unseen_around(d, d.position) == 0
            base = api.nearest(d, "tree")
            pick = api.nearest_frontier(d, "tree")
            if base is None:
                assert pick is None
                continue
            assert api.distance(d.position, pick) == api.distance(d.position, base)
            assert api.unseen_around(d, pick) >= api.unseen_around(d, base)
            checked += 1
    assert checked > 0


SKILL = '''def frontier_probe(obs: str) -> int:
    """Calls the frontier helpers as a skill does (through the sandbox's API)."""
    d = parse_obs(obs)
    spot = nearest_frontier(d, "tree", slack=1, solo=True)
    if spot is not None and unseen_around(d, spot) >= 0:
        return explore(d, wide=4.0)
    return explore(d, near="grass", wide=4.0)
'''


def test_a_skill_calls_the_frontier_helpers_in_the_sandbox(overworld_views):
    """The helpers are in the skill API a sandboxed skill sees, ``explore``'s ``wide`` included."""
    from alem_testlib import run_skill

    from compass.sandbox import compile_skill

    skill = compile_skill(SKILL, "frontier_probe", "alem")
    for view in overworld_views[1]:
        res = run_skill(skill, view)
        assert res.error is None, res.error
        assert res.action in view.avail_actions
