"""Into the night fed and sealed (compass.games.alem.skill_api.evening) on tiny hand-drawn maps, and
alem's Request/Give of stone in the real env."""

from __future__ import annotations

from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DO, LEFT, NOOP, give_action
from compass.games.alem.obs import Teammate

# A dead-end corridor north of the agent: (1, 1)-(1, 2) with its entrance at (1, 3).
CORRIDOR = ["###.....", "#.#.....", "#.#.....", "#.@.....", "........"]
MATE = Teammate(1, "miner", 6, 4, 4, 1, 5, 9.0)


def _inv(**kw) -> dict:
    return {"wood": 0, "stone": 0, "pickaxe": 0, "sword": 0} | kw


def _vitals(food: int = 9, drink: int = 9) -> dict:
    return {"health": 9, "food": food, "drink": drink, "energy": 9}


def test_a_stone_is_asked_for_when_it_is_all_a_shelter_lacks():
    forager = _obs(CORRIDOR, role="forager", inventory=_inv(), teammates=[MATE], step=100)
    assert api.shelter_plan(forager, (2, 3)) is None  # no stone, no pickaxe: no shelter tonight
    assert api.stone_for_shelter(forager, (2, 3))
    assert api.shelter_stone_step(forager, (2, 3)) == api.request("stone")
    # With the stone in hand it has a plan (seal the corridor), so it asks for nothing.
    holding = _obs(CORRIDOR, role="forager", inventory=_inv(stone=1), teammates=[MATE])
    assert api.shelter_plan(holding, (2, 3))[0] == "seal"
    assert not api.stone_for_shelter(holding, (2, 3))
    assert api.shelter_stone_step(holding, (2, 3)) is None


def test_no_stone_is_asked_for_without_a_corridor_a_giver_or_a_free_request():
    open_field = _obs(["........", "........", "..@.....", "........"], inventory=_inv(), teammates=[MATE])
    assert not api.stone_for_shelter(open_field)  # a stone would seal nothing known
    assert api.shelter_stone_step(open_field) is None
    alone = _obs(CORRIDOR, inventory=_inv())
    assert api.stone_for_shelter(alone, (2, 3)) and api.shelter_stone_step(alone, (2, 3)) is None
    asking = _obs(CORRIDOR, inventory=_inv(), teammates=[MATE], my_request="food")
    assert api.shelter_stone_step(asking, (2, 3)) is None  # one request at a time
    below = _obs(CORRIDOR, inventory=_inv(), teammates=[MATE], level=1)
    assert not api.stone_for_shelter(below, (2, 3))


def test_a_pickaxe_and_stone_to_dig_need_no_stone_asked_for():
    # A stone mass to dig into: a pickaxe is enough (digging yields the sealing stone).
    grid = ["#####", "#####", "#####", "..@..", "....."]
    d = _obs(grid, inventory=_inv(pickaxe=1), teammates=[MATE])
    assert api.shelter_plan(d) is not None and not api.stone_for_shelter(d)


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

