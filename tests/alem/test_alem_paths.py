"""Walking that does not get stuck (docs/alem.md "Walking that does not get stuck"): creatures that
enter and leave the view (``path_to(mob_cost=...)``), teammates' bodies (``path_to(bodies=True)``)."""

from __future__ import annotations

import math

from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DOWN, LEFT, NOOP, RIGHT, UP
from compass.games.alem.obs import Mob, Teammate

# A one-tile corridor (row 2) to a tree at its east end; the long way round goes out west, along
# row 0 and back in from the east (~17 steps). The agent starts at (2, 2), heading east.
CORRIDOR = [
    "...........",
    ".#########.",
    "..@.....T..",
    ".#########.",
    "...........",
]
TREE = (8, 2)


def _at(x: int, y: int, snail: tuple[int, int] | None, view: int = 3):
    """The agent at ``(x, y)`` in the corridor, seeing the snail only within ``view`` tiles."""
    grid = [row.replace("@", ".") for row in CORRIDOR]
    grid[y] = grid[y][:x] + "@" + grid[y][x + 1 :]
    mobs = []
    if snail is not None and api.distance((x, y), snail) <= view:
        dx, dy = snail[0] - x, snail[1] - y
        mobs = [Mob(150, "snail", "passive", snail[0], snail[1], dx, dy, abs(dx) + abs(dy), 3.0)]
    return _obs(grid, mobs=mobs, facing="east", facing_xy=(x + 1, y))


def test_a_creature_in_view_no_longer_flips_the_way_in_a_corridor():
    snail = (5, 2)
    # Creatures as walls (the default): the snail in view sends the agent the long way round
    # (west), and one step west, with the snail out of view, the corridor is the way again (east).
    assert api.path_to(_at(2, 2, snail), TREE) == LEFT
    assert api.path_to(_at(1, 2, snail), TREE, mob_cost=math.inf) == RIGHT
    # With mob_cost=8 the snail's tile costs 8 steps, far less than the way round: east from both.
    assert api.path_to(_at(2, 2, snail), TREE, mob_cost=8) == RIGHT
    assert api.path_to(_at(1, 2, snail), TREE, mob_cost=8) == RIGHT
    # A short way round is still taken: in the open, a creature ahead is walked around.
    open_field = _obs(["......", "@.....", "......"], mobs=[Mob(151, "cow", "passive", 1, 1, 1, 0, 1, 3.0)])
    assert api.path_to(open_field, (5, 1), adjacent=False, mob_cost=8) in (UP, DOWN)
    # A hostile creature stays a wall: no way through a zombie to save steps.
    zombie = Mob(152, "zombie", "melee", 5, 2, 3, 0, 3, 5.0)
    assert (
        api.path_to(_obs(CORRIDOR, mobs=[zombie], facing="east", facing_xy=(3, 2)), TREE, mob_cost=8) == LEFT
    )


def _walk(steps: int, **kw) -> list[tuple[int, int]]:
    """Follow path_to toward the tree; the snail moves on east once the agent stands next to it."""
    x, y = 2, 2
    snail: tuple[int, int] | None = (5, 2)
    seen = [(x, y)]
    for _ in range(steps):
        if snail is not None and api.distance((x, y), snail) == 1:
            snail = (snail[0] + 1, 2) if snail[0] + 1 < TREE[0] else None  # leaves by a burrow
        act = api.path_to(_at(x, y, snail), TREE, **kw)
        if act is None:
            break
        dx, dy = {LEFT: (-1, 0), RIGHT: (1, 0), UP: (0, -1), DOWN: (0, 1), NOOP: (0, 0)}[act]
        if (x + dx, y + dy) != snail:  # a move into a creature only turns the agent
            x, y = x + dx, y + dy
        seen.append((x, y))
    return seen


def test_the_walk_down_the_corridor_arrives():
    before = _walk(30)
    assert (7, 2) not in before  # paced between (1, 2) and (2, 2) for all 30 steps
    assert set(before[-10:]) <= {(1, 2), (2, 2)}
    after = _walk(30, mob_cost=8)
    assert after[-1] == (7, 2) and len(after) < 15  # next to the tree, having followed the snail
    assert all(b[0] >= a[0] for a, b in zip(after, after[1:], strict=False))  # never a step back


def test_bodies_as_walls_on_request():
    """alem refuses a move onto any player's tile, dead or alive (``is_in_other_player``)."""
    body = Teammate(1, "miner", 2, 1, 1, 0, 1, 0.0, alive=False)
    d = _obs(["......", ".@....", "......"], teammates=[body])
    assert api.path_to(d, (4, 1), adjacent=False) == RIGHT  # the default, as before: into the body
    assert api.path_to(d, (4, 1), adjacent=False, bodies=True) in (UP, DOWN)  # around it
    assert api.path_to(d, (4, 1), adjacent=False, avoid_mobs=False, bodies=True) in (UP, DOWN)
    # A one-tile corridor closed by a body: no way through, so no move into it either.
    shut = _obs(["#####", "#@.##", "###.#", "#####"], teammates=[Teammate(1, "", 2, 1, 1, 0, 1, 0.0, False)])
    assert api.path_to(shut, (3, 2), adjacent=False) == RIGHT
    assert api.path_to(shut, (3, 2), adjacent=False, bodies=True) != RIGHT
    # Parsed from text a body has no position, so it is no wall there.
    text = _obs(["......", ".@....", "......"], teammates=[body], from_text=True)
    assert api.path_to(text, (4, 1), adjacent=False, bodies=True) == RIGHT


def test_a_body_blocks_a_move_in_the_real_env(downed_teammate):
    """In alem itself: agent 1 cannot step onto agent 2's body, and path_to goes round it."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env, views = downed_teammate(50, east=1, rows=(-1, 0, 1), beyond=2)  # the way round is open
    d = obs_data_from_view(views[1])
    assert (d.x + 1, d.y) in api.knowledge._occupied(d, bodies=True)
    views = env.step([NOOP, RIGHT, NOOP]).views
    assert obs_data_from_view(views[1]).position == d.position  # the body's tile refused the move
    assert api.path_to(obs_data_from_view(views[1]), (d.x + 3, d.y), adjacent=False, bodies=True) in (
        UP,
        DOWN,
    )
