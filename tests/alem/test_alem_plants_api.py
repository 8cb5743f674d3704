"""Plants on the way (compass.games.alem.skill_api.plants): a sapling placed where the agent stands,
ripe plants eaten by whom the team wants, the forager's body revived first; hand-drawn maps and the
real env."""

from __future__ import annotations

from alem_testlib import restore_edited, seed0_overworld, with_blocks
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DO, DOWN, LEFT, RIGHT, UP
from compass.games.alem.obs import Mob, Teammate


def _inv(sapling: int = 1) -> dict:
    return {"wood": 0, "stone": 0, "pickaxe": 0, "sword": 0, "sapling": sapling}


FIELD = ["........", "........", "....@...", "........", "........"]


def test_plant_step_places_on_faced_grass_near_the_base_only():
    # The agent at (4, 2) faces north (4, 1); the table (the base) at (1, 1): 3 tiles off.
    d = with_blocks(_obs(FIELD, inventory=_inv()), crafting_table=[(1, 1)])
    assert api.base_anchor(d) == (1, 1)
    assert api.plant_step(d) == api.place("plant")
    assert api.plant_step(d, radius=2) is None  # beyond the radius
    assert api.plant_step(d, clear=3) is None  # too close to the table
    assert (
        api.plant_step(with_blocks(_obs(FIELD, inventory=_inv(0)), crafting_table=[(1, 1)])) is None
    )  # no sapling
    # Something on the faced tile, or not grass: no placing, and never a walk or a turn.
    cow = Mob(5, "cow", "passive", 4, 1, 0, -1, 1, 3.0)
    assert (
        api.plant_step(with_blocks(_obs(FIELD, inventory=_inv(), mobs=[cow]), crafting_table=[(1, 1)]))
        is None
    )
    sand = with_blocks(_obs(FIELD, inventory=_inv(), facing_block="stone"), crafting_table=[(1, 1)])
    assert api.plant_step(sand) is None
    below = with_blocks(_obs(FIELD, inventory=_inv(), level=1), crafting_table=[(1, 1)])
    assert api.plant_step(below) is None


def test_ripe_step_eats_within_reach_at_or_below_the_level():
    def fed(food: int):
        d = _obs(FIELD, role="forager", status={"health": 9, "food": food, "drink": 9, "energy": 9})
        return with_blocks(d, ripe_plant=[(7, 2)])

    assert api.ripe_step(fed(4), at=4) == RIGHT  # 3 tiles east
    assert api.ripe_step(fed(5), at=4) is None  # not hungry enough: left to the team
    assert api.ripe_step(fed(4), at=4, reach=2) is None  # too far
    facing = with_blocks(
        _obs(
            FIELD, status={"health": 9, "food": 1, "drink": 9, "energy": 9}, facing="north", facing_xy=(4, 1)
        ),
        ripe_plant=[(4, 1)],
    )
    assert api.ripe_step(facing, at=5) == DO
    assert api.ripe_step(_obs(FIELD, status={"health": 9, "food": 0, "drink": 9, "energy": 9}), at=5) is None


def test_revive_first_step_walks_to_the_forager_before_a_nearer_body():
    miner = Teammate(2, "miner", 2, 2, -2, 0, 2, 0.0, alive=False)
    forager = Teammate(1, "forager", 4, 4, 0, 2, 2, 0.0, alive=False)
    far_forager = Teammate(1, "forager", 7, 4, 3, 2, 5, 0.0, alive=False)
    near_miner = Teammate(2, "miner", 3, 2, -1, 0, 1, 0.0, alive=False)
    d = _obs(FIELD, teammates=[near_miner, far_forager])
    assert api.revive_step(d) == LEFT  # main: the nearest body, the miner next to it (turn to face)
    assert api.first_body(d) == (7, 4)
    step = api.revive_first_step(d)
    assert step in (RIGHT, DOWN)  # toward the forager's body
    assert api.first_body(d, reach=3) is None
    assert api.revive_first_step(d, reach=3) == LEFT  # the forager out of reach: the nearest body
    # Only the forager's body: the same as revive_step.
    alone = _obs(FIELD, teammates=[forager])
    assert api.revive_first_step(alone) == api.revive_step(alone) == DOWN
    assert api.first_body(_obs(FIELD, teammates=[miner])) is None
    assert api.revive_first_step(_obs(FIELD)) is None
    assert api.revive_first_step(_obs(FIELD, teammates=[miner]), roles=("warrior",)) == LEFT
    assert UP not in (api.revive_first_step(alone),)


def test_real_env_the_forager_plants_and_a_ripe_plant_feeds_the_warrior(alem_overworld):
    """In alem: the forager (agent 1) holding a sapling and facing grass near the table places it with
    ``plant_step`` (the tile becomes a plant, the sapling is spent); a ripe plant the warrior (agent 0,
    at 3 food) faces is eaten with ``ripe_step``: +4 food for a role that eats a cow 1 time in 10."""
    import jax.numpy as jnp
    from alem.alem_coop.constants import BlockType

    from compass.games.alem.names import NOOP
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = alem_overworld(40, text=False)
    cp, st, level, row, col, grid = seed0_overworld(env)
    for r in range(row - 4, row + 5):
        for c in range(col - 4, col + 5):
            grid = grid.at[level, r, c].set(BlockType.GRASS.value)
    grid = grid.at[level, row + 3, col].set(BlockType.CRAFTING_TABLE.value)
    # The warrior two tiles west of the forager, a ripe plant north of it.
    grid = grid.at[level, row - 1, col - 2].set(BlockType.RIPE_PLANT.value)
    # Make sure no creature stands on the tiles the test uses.
    st = st.replace(
        map=grid,
        player_position=st.player_position.at[0]
        .set(jnp.array([row, col - 2], jnp.int32))
        .at[2]
        .set(jnp.array([row + 2, col + 3], jnp.int32)),
        player_direction=st.player_direction.at[0].set(3).at[1].set(3),  # both face north
        player_food=st.player_food.at[0].set(3),
        inventory=st.inventory.replace(sapling=st.inventory.sapling.at[1].set(1)),
    )
    views = restore_edited(env, cp, st)
    d0, d1 = obs_data_from_view(views[0]), obs_data_from_view(views[1])
    assert d1.inventory["sapling"] == 1 and d1.facing_block == "grass"
    act1 = api.plant_step(d1)
    assert act1 == api.place("plant")
    assert d0.facing_block == "ripe_plant" and d0.food == 3
    act0 = api.ripe_step(d0, at=d0.max_food - 4)
    assert act0 == DO
    assert api.ripe_step(d0, at=2) is None  # a lower level leaves it
    views = env.step([act0, act1, NOOP]).views
    d0, d1 = obs_data_from_view(views[0]), obs_data_from_view(views[1])
    assert d1.inventory["sapling"] == 0 and d1.facing_block == "plant"
    assert d0.food == 7 and d0.facing_block == "plant"  # eaten: back to a growing plant
