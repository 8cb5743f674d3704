"""Into the night fed and sealed (compass.games.alem.skill_api.evening) on tiny hand-drawn maps, and
in the real env: alem's Request/Give of stone, and a non-miner sealing a corridor with one furnace."""

from __future__ import annotations

from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DO, LEFT, NOOP, PLACE_ACTIONS, RIGHT, give_action
from compass.games.alem.obs import Teammate

# A dead-end corridor among trees north of the agent: (1, 1)-(1, 2) with its entrance at (1, 3); no
# stone to dig a tunnel into.
CORRIDOR = ["TTT.....", "T.T.....", "T.T.....", "T.@.....", "........"]
MATE = Teammate(1, "miner", 6, 4, 4, 1, 5, 9.0)


def _inv(**kw) -> dict:
    return {"wood": 0, "stone": 0, "pickaxe": 0, "sword": 0} | kw


def _vitals(food: int = 9, drink: int = 9) -> dict:
    return {"health": 9, "food": food, "drink": drink, "energy": 9}


def test_a_stone_is_asked_for_when_it_is_all_a_shelter_lacks():
    forager = _obs(CORRIDOR, role="forager", inventory=_inv(pickaxe=1), teammates=[MATE], step=100)
    # A "dig" into the open corridor yields no stone: nothing to seal it with tonight.
    assert api.shelter_plan(forager, (2, 3)) == ("dig", ((1, 3), (1, 2), (1, 1)))
    assert api.stone_for_shelter(forager, (2, 3))
    assert api.shelter_stone_step(forager, (2, 3)) == api.request("stone")
    # Without a pickaxe it could not mine its way out of the seal: it asks for nothing.
    unarmed = _obs(CORRIDOR, role="forager", inventory=_inv(), teammates=[MATE], step=100)
    assert not api.stone_for_shelter(unarmed, (2, 3)) and api.shelter_stone_step(unarmed, (2, 3)) is None
    # With the stone in hand it has a plan (seal the corridor), so it asks for nothing.
    holding = _obs(CORRIDOR, role="forager", inventory=_inv(pickaxe=1, stone=1), teammates=[MATE])
    assert api.shelter_plan(holding, (2, 3))[0] == "seal"
    assert not api.stone_for_shelter(holding, (2, 3))
    assert api.shelter_stone_step(holding, (2, 3)) is None


def test_no_stone_is_asked_for_without_a_corridor_a_giver_or_a_free_request():
    open_field = _obs(
        ["........", "........", "..@.....", "........"], inventory=_inv(pickaxe=1), teammates=[MATE]
    )
    assert not api.stone_for_shelter(open_field)  # a stone would seal nothing known
    assert api.shelter_stone_step(open_field) is None
    alone = _obs(CORRIDOR, inventory=_inv(pickaxe=1))
    assert api.stone_for_shelter(alone, (2, 3)) and api.shelter_stone_step(alone, (2, 3)) is None
    asking = _obs(CORRIDOR, inventory=_inv(pickaxe=1), teammates=[MATE], my_request="food")
    assert api.shelter_stone_step(asking, (2, 3)) is None  # one request at a time
    below = _obs(CORRIDOR, inventory=_inv(pickaxe=1), teammates=[MATE], level=1)
    assert not api.stone_for_shelter(below, (2, 3))


def test_a_stone_mass_to_dig_into_needs_no_stone_asked_for():
    # A stone mass to dig into: a pickaxe is enough (digging yields the sealing stone).
    grid = ["#####", "#####", "#####", "..@..", "....."]
    d = _obs(grid, inventory=_inv(pickaxe=1), teammates=[MATE])
    assert api.shelter_plan(d)[0] == "dig" and not api.stone_for_shelter(d)


def test_evening_topup_drinks_and_eats_before_dusk_only():
    # Water three tiles west, drink 4: in the 30 steps before dusk (120) walk to it and drink.
    thirsty = ["~.....", "~..@..", "~....."]
    d = _obs(thirsty, status=_vitals(drink=4), teammates=[MATE], step=300 + 100)
    assert api.evening_topup_step(d) == LEFT
    at_water = _obs(
        ["~.....", "~@....", "~....."],
        status=_vitals(drink=4),
        step=100,
        facing="west",
        facing_xy=(0, 1),
        facing_block="water",
    )
    assert api.evening_topup_step(at_water) == DO
    # Outside the window (morning, or dusk already), or above the level: nothing.
    assert api.evening_topup_step(_obs(thirsty, status=_vitals(drink=4), step=50)) is None
    assert api.evening_topup_step(_obs(thirsty, status=_vitals(drink=4), step=130)) is None
    assert api.evening_topup_step(_obs(thirsty, status=_vitals(drink=6), step=100)) is None
    assert api.evening_topup_step(_obs(thirsty, status=_vitals(drink=6), step=100), level=6) == LEFT
    # Nothing near: ask the team for what is short (the scarcer first).
    bare = ["......", ".@....", "......"]
    hungry = _obs(bare, status=_vitals(food=3, drink=5), teammates=[MATE], step=110)
    assert api.evening_topup_step(hungry) == api.request("food")
    # Below the overworld there is no dusk to prepare for.
    assert api.evening_topup_step(_obs(thirsty, status=_vitals(drink=4), step=100, level=1)) is None


def test_a_requested_stone_is_given_in_the_real_env(alem_overworld):
    """Seed 0's overworld: agent 0 holds no stone and asks for one; agent 1, holding three and far
    away, gives it the next step (Give reaches any distance): agent 0's stone becomes 1."""
    import jax
    import numpy as np

    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = alem_overworld(40, text=False)
    env.reset(0)
    cp = env.checkpoint()
    st = cp["state"]
    stone = st.inventory.stone.at[0].set(0).at[1].set(3)
    st = st.replace(inventory=st.inventory.replace(stone=stone))
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    views = env.step([api.request("stone"), NOOP, NOOP]).views
    assert obs_data_from_view(views[0]).my_request == "stone"
    assert any(t.request == "stone" for t in api.team_alive(obs_data_from_view(views[1])))
    views = env.step([NOOP, give_action(1, 0), NOOP]).views
    assert obs_data_from_view(views[0]).inventory["stone"] == 1
    assert obs_data_from_view(views[1]).inventory["stone"] == 2


def test_a_non_miner_seals_with_a_furnace_when_it_can_still_dig_out():
    stone, furnace = PLACE_ACTIONS["stone"], PLACE_ACTIONS["furnace"]
    # On the corridor's outer tile (1, 2), facing the entrance (1, 3) to the south; stone walls west/east.
    grid = ["###", "#.#", "#@#", "#.#", "..."]
    kw = dict(facing="south", facing_xy=(1, 3), facing_block="grass")
    warrior = _obs(grid, inventory=_inv(stone=1, pickaxe=1), **kw)
    assert api.furnace_seal(warrior, stone) == furnace
    assert api.furnace_seal(warrior, LEFT) == LEFT  # anything but Place Stone passes through
    assert api.furnace_seal(warrior, None) is None
    # The miner places its stone itself (no gate), and keeps the furnace-free seal it can mine.
    assert (
        api.furnace_seal(_obs(grid, role="miner", inventory=_inv(stone=1, pickaxe=1), **kw), stone) == stone
    )
    # No pickaxe: a furnace could never be left through another wall, so stone (mineable later) it is.
    assert api.furnace_seal(_obs(grid, inventory=_inv(stone=1), **kw), stone) == stone
    # Walls it cannot mine (trees, water): it would be walled in for good behind a furnace.
    trees = ["TTT", "T.T", "T@T", "T.T", "..."]
    assert api.furnace_seal(_obs(trees, inventory=_inv(stone=1, pickaxe=1), **kw), stone) == stone
    # A stone wall and a tree: dig_out might face the tree (never removed by a Do), so stone.
    mixed = ["###", "#.#", "#@T", "#.#", "..."]
    assert api.furnace_seal(_obs(mixed, inventory=_inv(stone=1, pickaxe=1), **kw), stone) == stone


def _with_furnace(d, xy):
    from compass.games.alem.names import BLOCK_ID

    d.memory.blocks[0, xy[1], xy[0]] = BLOCK_ID["furnace"]
    return d


def test_a_furnace_door_is_left_through_another_wall():
    # Walled in on (1, 2): the furnace door to the south (1, 3), stone elsewhere; facing the door.
    grid = ["###", "#.#", "#@#", "#.#", "..."]
    kw = dict(facing="south", facing_xy=(1, 3), facing_block="furnace", inventory=_inv(pickaxe=1))
    d = _with_furnace(_obs(grid, **kw), (1, 3))
    assert api.enclosed(d)
    assert api.furnace_exit_step(d, stay=True) is None  # night, fed: it sleeps on
    # Leaving: the stone walls west and east are equally far from the door; it turns toward one of
    # them (never the door, which a Do cannot open).
    step = api.furnace_exit_step(d, stay=False)
    assert step in (LEFT, RIGHT)
    facing_west = _with_furnace(
        _obs(grid, facing="west", facing_xy=(0, 2), facing_block="stone", inventory=_inv(pickaxe=1)), (1, 3)
    )
    assert api.furnace_exit_step(facing_west, stay=False) == DO  # facing a stone wall: mine it
    # No furnace beside it (a stone door): the library's own dig_out sees to it.
    assert api.furnace_exit_step(_obs(grid, inventory=_inv(pickaxe=1)), stay=False) is None
    # Not walled in: nothing.
    assert api.furnace_exit_step(_with_furnace(_obs(["...", ".@.", "..."]), (1, 2)), stay=False) is None


def test_a_furnace_seals_a_corridor_in_the_real_env(alem_overworld):
    """Seed 0's overworld: a 2-tile corridor cut into stone around agent 0 (a warrior or forager),
    its mouth to the south on grass: the agent steps to the outer tile (facing the mouth) and one
    Place Furnace closes it (walled in), where Place Stone works for a non-miner 1 time in 10."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from alem.alem_coop.constants import BlockType

    from compass.games.alem.names import DOWN, NOOP
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = alem_overworld(40, text=False)
    roles = [obs_data_from_view(v).role for v in env.reset(0)]
    cp = env.checkpoint()
    st = cp["state"]
    me = next(i for i, r in enumerate(roles) if r != "miner")
    level = int(st.player_level)
    row, col = (int(v) for v in st.player_position[me])
    grid = st.map
    for dr in (-1, 0, 1, 2):
        for dc in (-1, 0, 1):
            grid = grid.at[level, row + dr, col + dc].set(BlockType.STONE.value)
    for dr in (0, 1, 2):  # inner, outer, mouth
        grid = grid.at[level, row + dr, col].set(BlockType.GRASS.value)
    others = [i for i in range(3) if i != me]
    pos = st.player_position
    for k, i in enumerate(others):  # the teammates out of the way, on grass 5 tiles west
        pos = pos.at[i].set(jnp.array([row + k, col - 5], jnp.int32))
        grid = grid.at[level, row + k, col - 5].set(BlockType.GRASS.value)
    inv = st.inventory
    inv = inv.replace(stone=inv.stone.at[me].set(1), pickaxe=inv.pickaxe.at[me].set(1))
    st = st.replace(map=grid, player_position=pos, inventory=inv)
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    acts = [NOOP] * 3
    acts[me] = DOWN
    d = obs_data_from_view(env.step(acts).views[me])
    assert d.position == (col, row + 1) and d.facing_xy == (col, row + 2) and not api.enclosed(d)
    act = api.furnace_seal(d, PLACE_ACTIONS["stone"])
    assert act == PLACE_ACTIONS["furnace"]
    acts[me] = act
    d = obs_data_from_view(env.step(acts).views[me])
    assert api.enclosed(d, walls_only=True) and d.inventory["stone"] == 0
    assert api.block_at(d, (col, row + 2)) == "furnace"


def test_fed_by_give_seals_a_short_non_forager_in_at_night_while_a_forager_lives():
    forager = Teammate(1, "forager", 6, 4, 4, 1, 5, 9.0)
    field = ["~.....", "~..@..", "~....."]
    # Night (day step 150), food 2 and drink 3, a forager alive: it may seal in on what it holds.
    night = _obs(field, status=_vitals(food=2, drink=3), teammates=[forager], step=300 + 150)
    assert api.fed_by_give(night)
    # By day it is not (it drinks and eats first), unless it is dark.
    assert not api.fed_by_give(_obs(field, status=_vitals(food=2, drink=3), teammates=[forager], step=50))
    dark = _obs(field, status=_vitals(food=2, drink=3), teammates=[forager], step=50, light=0.2)
    assert api.fed_by_give(dark)
    # Too short, or nobody to give: it goes for water as before.
    assert not api.fed_by_give(_obs(field, status=_vitals(food=2, drink=2), teammates=[forager], step=150))
    assert not api.fed_by_give(_obs(field, status=_vitals(food=1, drink=9), teammates=[forager], step=150))
    assert api.fed_by_give(
        _obs(field, status=_vitals(food=1, drink=2), teammates=[forager], step=150), food=1, drink=2
    )
    assert not api.fed_by_give(_obs(field, status=_vitals(food=2, drink=3), teammates=[MATE], step=150))
    dead = Teammate(1, "forager", 6, 4, 4, 1, 5, 0.0, alive=False)
    assert not api.fed_by_give(_obs(field, status=_vitals(food=2, drink=3), teammates=[dead], step=150))
    # The forager itself (the team's giver) and agents below the overworld are not concerned.
    assert not api.fed_by_give(
        _obs(field, role="forager", status=_vitals(food=2, drink=3), teammates=[MATE], step=150)
    )
    assert not api.fed_by_give(
        _obs(field, status=_vitals(food=2, drink=3), teammates=[forager], step=150, level=1)
    )
