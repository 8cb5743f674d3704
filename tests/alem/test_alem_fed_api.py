"""The team fed (compass.games.alem.skill_api.fed): eating and drinking only at what an agent can
reach, on tiny hand-drawn maps, and in the real env."""

from __future__ import annotations

from alem_testlib import restore_edited, seed0_overworld, with_blocks
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DO, DOWN, LEFT, RIGHT, UP
from compass.games.alem.obs import Mob, Teammate


def _vitals(food: int = 9, drink: int = 9) -> dict:
    return {"health": 5, "food": food, "drink": drink, "energy": 9}


# The seed-13 picture (Hard tuning seed 13, a revived miner at 0 food): water west and south, stone
# north, a teammate east; the ripe plant two tiles beyond the stone.
BOXED = [".....", ".....", "..#..", ".~@..", ".~~~."]
RIPE = (2, 1)
MATE_EAST = Teammate(1, "warrior", 3, 3, 1, 0, 1, 9.0)


def test_reach_step_needs_a_known_path_where_act_on_digs_or_does():
    d = with_blocks(
        _obs(BOXED, role="miner", status=_vitals(food=0), teammates=[MATE_EAST]), ripe_plant=[RIPE]
    )
    assert api.reach_step(d, RIPE) is None  # boxed in: no path
    assert api.act_on(d, RIPE) not in (None, RIGHT)  # the library's walk digs at the stone (or Does)
    free = with_blocks(_obs(BOXED, role="miner", status=_vitals(food=0)), ripe_plant=[RIPE])
    assert api.reach_step(free, RIPE) == RIGHT  # the teammate gone: round by the east
    # Next to it: turn, then Do.
    assert api.reach_step(_obs(["....", ".@~.", "...."]), (2, 1)) == RIGHT
    facing = _obs(["....", ".@~.", "...."], facing="east", facing_xy=(2, 1), facing_block="water")
    assert api.reach_step(facing, (2, 1)) == DO


# The nearer water lies in a walled pocket (its only open neighbour is enclosed): the library's
# ``nearest`` picks it; the agent can reach only the water three tiles east.
POCKET = ["........", ".###....", ".#~#@..~", ".#.#....", ".###...."]


def test_supply_step_drinks_at_the_nearest_water_it_can_reach():
    d = _obs(POCKET, status=_vitals(drink=1))
    assert api.nearest(d, "water") == (2, 2)
    assert api.supply_step(d, "drink") == RIGHT
    assert api.supply_step(d, "drink", reach=2) is None  # the reachable one is 3 tiles away
    assert api.supply_step(d, "food") is None  # no ripe plant known
    fed = with_blocks(_obs(POCKET, status=_vitals(food=0)), ripe_plant=[(4, 4)])
    assert api.supply_step(fed, "food") == DOWN
    # The forager also eats a cow; the others (1 time in 10 on Hard) do not go for one.
    cow = Mob(5, "cow", "passive", 4, 0, 0, -2, 2, 3.0)
    assert api.supply_step(_obs(POCKET, role="forager", mobs=[cow]), "food") == UP
    assert api.supply_step(_obs(POCKET, mobs=[cow]), "food") is None


def test_detour_step_only_when_the_chosen_target_is_walled_off():
    d = _obs(POCKET, status=_vitals(drink=3))
    assert api.detour_step(d, (7, 2), "drink") is None  # reachable: the skill's own walk gets there
    assert api.detour_step(d, (2, 2), "drink") == RIGHT  # walled off: the reachable water instead
    assert api.detour_step(d, None, "drink") is None
    # Nothing reachable: explore (a move), not a Do at the wall.
    only_pocket = _obs(["........", ".###....", ".#~#@...", ".#.#....", ".###...."], status=_vitals(drink=3))
    assert api.detour_step(only_pocket, (2, 2), "drink") in (LEFT, RIGHT, UP, DOWN)


def test_fed_step_reachable_first_then_asks_then_explores():
    d = with_blocks(
        _obs(BOXED, role="miner", status=_vitals(food=0), teammates=[MATE_EAST]), ripe_plant=[RIPE]
    )
    assert api.refuel_step(d) != api.request("food")  # main's refuel walks at the boxed-off plant
    assert api.fed_step(d) == api.request("food")  # no path to the plant: ask the teammate
    asked = with_blocks(
        _obs(BOXED, role="miner", status=_vitals(food=0), teammates=[MATE_EAST], my_request="food"),
        ripe_plant=[RIPE],
    )
    assert api.fed_step(asked) is None  # waits for the Give
    # The scarcer need first; drink on a tie; the water west is next to it: turn to face it.
    both = _obs(BOXED, role="miner", status=_vitals(food=1, drink=1), teammates=[MATE_EAST])
    assert api.fed_step(both) == LEFT
    assert api.fed_step(_obs(BOXED, status=_vitals(food=2, drink=3), teammates=[MATE_EAST])) is None
    # Alone with nothing reachable: explore near grass for food.
    alone = with_blocks(_obs(BOXED, status=_vitals(food=0)), stone=[(3, 3)], ripe_plant=[RIPE])
    step = api.fed_step(alone)
    assert step in (LEFT, RIGHT, UP, DOWN) and step != api.request("food")
    # Reachable within reach: eat it.
    near = with_blocks(_obs(["......", ".@....", "......"], status=_vitals(food=1)), ripe_plant=[(3, 1)])
    assert api.fed_step(near) == RIGHT
    far = with_blocks(
        _obs(["......", ".@....", "......"], status=_vitals(food=1), teammates=[MATE_EAST]),
        ripe_plant=[(3, 1)],
    )
    assert api.fed_step(far, reach=1) == api.request("food")  # out of reach: ask


def test_real_env_a_boxed_agent_asks_and_is_fed(alem_overworld):
    """Agent 2 (the miner) at 0 food, walled in by stone, a ripe plant two tiles north beyond the
    wall: main's ``refuel_step`` sends it at the wall (it never asks); ``fed_step`` asks, and agent
    1's Give (any teammate's, at any distance) brings its food up."""
    import jax.numpy as jnp
    from alem.alem_coop.constants import BlockType

    from compass.games.alem.names import NOOP, give_action
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = alem_overworld(40, text=False)
    cp, st, level, row, col, grid = seed0_overworld(env)
    c2 = col + 3
    for r in range(row - 3, row + 4):
        for c in range(col, col + 6):
            grid = grid.at[level, r, c].set(BlockType.GRASS.value)
    for r, c in ((row - 1, c2), (row + 1, c2), (row, c2 - 1), (row, c2 + 1)):
        grid = grid.at[level, r, c].set(BlockType.STONE.value)
    grid = grid.at[level, row - 2, c2].set(BlockType.RIPE_PLANT.value)
    st = st.replace(
        map=grid,
        player_position=st.player_position.at[2].set(jnp.array([row, c2], jnp.int32)),
        player_food=st.player_food.at[2].set(0),
    )
    views = restore_edited(env, cp, st)
    d2 = obs_data_from_view(views[2])
    assert d2.food == 0 and d2.alive
    plant = (c2, row - 2)
    assert api.nearest(d2, "ripe_plant") == plant
    assert api.reach_step(d2, plant) is None
    assert api.refuel_step(d2) != api.request("food")  # main's: at the wall
    act = api.fed_step(d2)
    assert act == api.request("food")
    views = env.step([NOOP, NOOP, act]).views
    assert obs_data_from_view(views[2]).my_request == "food"
    views = env.step([NOOP, give_action(1, 2), NOOP]).views
    assert obs_data_from_view(views[2]).food == 1


def test_walk_wasted_lets_a_dig_be_and_catches_a_do_at_water():
    # The seed-13 picture, facing the water west: act_on's walk to the plant Does at the water.
    at_water = with_blocks(
        _obs(
            BOXED,
            role="miner",
            status=_vitals(food=0),
            teammates=[MATE_EAST],
            facing="west",
            facing_xy=(1, 3),
            facing_block="water",
        ),
        ripe_plant=[RIPE],
    )
    assert api.act_on(at_water, RIPE) == DO
    assert api.walk_wasted(at_water, RIPE)
    assert api.detour_step(at_water, RIPE, "food", wasted_only=True) in (LEFT, RIGHT, UP, DOWN)
    # Facing the stone north with a pickaxe: the greedy dig opens the way, let it be.
    kw = dict(role="miner", status=_vitals(food=0), teammates=[MATE_EAST], facing_block="stone")
    dig = with_blocks(
        _obs(BOXED, inventory={"wood": 0, "stone": 0, "pickaxe": 1, "sword": 0}, **kw), ripe_plant=[RIPE]
    )
    assert api.act_on(dig, RIPE) == DO and not api.walk_wasted(dig, RIPE)
    assert api.detour_step(dig, RIPE, "food", wasted_only=True) is None
    assert api.detour_step(dig, RIPE, "food") is not None  # without wasted_only: any unreachable target
    # Without a pickaxe the same Do is wasted.
    assert api.walk_wasted(with_blocks(_obs(BOXED, **kw), ripe_plant=[RIPE]), RIPE)
    # Facing the target itself: never wasted.
    facing = _obs(["....", ".@~.", "...."], facing="east", facing_xy=(2, 1), facing_block="water")
    assert not api.walk_wasted(facing, (2, 1))
