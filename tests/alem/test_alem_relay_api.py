"""The ladder down relayed (compass.games.alem.skill_api.relay): hand-drawn maps, and the real game
(docs/alem.md "The ladder relayed")."""

from __future__ import annotations

from dataclasses import replace

import pytest
from alem_testlib import LADDER_DOWN, add_team, needs_alem
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, LEFT, NOOP


def _inv(**kw) -> dict:
    return {"wood": 0, "stone": 0, "coal": 0, "iron": 0, "pickaxe": 0, "sword": 0} | kw


ARMED = _inv(pickaxe=1, sword=1)


def _view(me=0, step=320, inventory=None, ladder=False, requests=None, my_request=None, health=9, food=9):
    """Agent ``me`` at (4, 0) of a two-row field, teammates 0-2 at (4, 1), (6, 1), (2, 1); a
    ladder down remembered at (0, 0) with ``ladder``; ``requests``: teammate id -> its request."""
    positions = {0: (4, 0), 1: (6, 1), 2: (2, 1)}
    d = _obs(
        ["........", "........"],
        agent_id=me,
        step=step,
        inventory=inventory or _inv(),
        status={"health": health, "food": food, "drink": 9, "energy": 9},
        my_request=my_request,
    )
    d.position = (4, 0)
    d.facing_xy = (4, -1)
    add_team(d, {**positions, me: (4, 0)})
    for i, what in (requests or {}).items():
        k = next(j for j, t in enumerate(d.teammates) if t.id == i)
        d.teammates[k] = replace(d.teammates[k], request=what)
    if ladder:
        d.memory.items[0, 0, 0] = LADDER_DOWN
    return d


def test_ready_signal_only_when_armed_blind_and_the_slot_is_free():
    """An agent armed for the descent that knows no ladder requests the ruby; not with a ladder
    known, not unarmed, not before ``from_step``, not with a request of its own open."""
    ready = api.request(api.READY_REQUEST)
    assert api.READY_REQUEST == "ruby" and api.READY_REQUEST != api.CALL_REQUEST
    assert api.ready_signal_step(_view(inventory=ARMED)) == ready
    assert api.ready_signal_step(_view(inventory=ARMED, ladder=True)) is None  # it walks there itself
    assert api.ready_signal_step(_view(inventory=_inv(pickaxe=1))) is None  # no sword
    assert api.ready_signal_step(_view(inventory=ARMED, health=6)) is None  # armed_for_descent's health
    assert api.ready_signal_step(_view(inventory=ARMED, step=320), from_step=900) is None
    assert api.ready_signal_step(_view(inventory=ARMED, step=300 + 100)) is None  # the morning is over
    assert api.ready_signal_step(_view(inventory=ARMED, my_request="food")) is None
    assert api.ready_signal_step(_view(inventory=ARMED, my_request="ruby")) is None  # still open


def test_relay_descent_answers_a_ready_teammate_with_a_known_ladder():
    """A knower without tools walks to its ladder once a teammate signals ready; without the signal,
    without a ladder, or below its own looser health and supplies, nothing."""
    signal = {1: api.READY_REQUEST}
    assert [t.id for t in api.ready_mates(_view(requests=signal))] == [1]
    assert api.ready_mates(_view(requests={1: "food", 2: api.CALL_REQUEST})) == []
    assert api.relay_descent_step(_view(ladder=True, requests=signal)) == LEFT  # toward (0, 0)
    assert api.relay_descent_step(_view(ladder=True)) is None  # nobody ready
    assert api.relay_descent_step(_view(ladder=True, requests={1: "food"})) is None
    assert api.relay_descent_step(_view(requests=signal)) is None  # no ladder known
    assert api.relay_descent_step(_view(ladder=True, requests=signal, health=5)) == LEFT
    assert api.relay_descent_step(_view(ladder=True, requests=signal, health=4)) is None
    assert api.relay_descent_step(_view(ladder=True, requests=signal, food=2)) is None
    assert api.relay_descent_step(_view(ladder=True, requests=signal), pickaxe=1) is None  # its own tools
    assert api.relay_descent_step(_view(ladder=True, requests=signal, step=299)) is None  # from_step 300


@needs_alem
@pytest.mark.slow
def test_a_ready_teammate_that_never_saw_the_ladder_is_taken_down_by_the_one_that_did():
    """The real game (Hard tuning seed 27, whose ladder down the team sees from its spawn). The
    forager is moved to the grass nearest the spawn that lies out of sight of the ladder, its map
    memory blanked, and given a wood pickaxe and sword: armed, it knows no ladder. The warrior, no
    tools, knows the ladder. With the warrior playing ``relay_descent_step`` and the forager
    ``ready_signal_step`` (the miner idle), the forager's ruby request reaches the warrior, which
    walks to the ladder and Descends: the forager, which never saw the ladder, enters level 1
    (ENTER_DUNGEON). Before the forager's signal the warrior has nothing to do."""
    import numpy as np

    from compass.games.alem.env import make_alem
    from compass.games.alem.obs import AlemMemory
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = make_alem("hard", max_steps=200, text=False)
    env.reset(27)
    cp = env.checkpoint()
    s = cp["state"]
    grass = BLOCK_ID["grass"]
    blocks = np.asarray(s.map)[0]
    spawn = np.asarray(s.player_position)[1]  # (row, col)
    ladders = np.argwhere(np.asarray(s.item_map)[0] == LADDER_DOWN)
    # The grass tile nearest the spawn from which no ladder is within 10 rows or 12 columns.
    far = [
        (abs(r - spawn[0]) + abs(c - spawn[1]), int(r), int(c))
        for r, c in np.argwhere(blocks == grass)
        if all(abs(r - lr) > 10 or abs(c - lc) > 12 for lr, lc in ladders)
    ]
    _, row, col = min(far)
    inv = s.inventory
    cp["state"] = s.replace(
        player_position=s.player_position.at[1].set(np.array([row, col], dtype=np.int32)),
        inventory=inv.replace(pickaxe=inv.pickaxe.at[1].set(1), sword=inv.sword.at[1].set(1)),
    )
    cp["memories"][1] = AlemMemory(len(cp["memories"][1].blocks))
    env.restore(cp)
    res = env.step([NOOP, NOOP, NOOP])
    warrior, forager = (obs_data_from_view(v) for v in res.views[:2])
    assert api.nearest(warrior, "ladder down") is not None
    assert api.nearest(forager, "ladder down") is None, "the forager never saw the ladder"
    assert api.relay_descent_step(warrior, from_step=0) is None  # nobody signals yet
    for _ in range(60):
        ds = [obs_data_from_view(v) for v in res.views]
        if ds[1].level == 1:
            break
        assert api.nearest(ds[1], "ladder down") is None, "the forager walks nowhere near the ladder"
        actions = [
            api.relay_descent_step(ds[0], from_step=0) or NOOP,
            api.ready_signal_step(ds[1], from_step=0) or NOOP,
            NOOP,
        ]
        res = env.step(actions)
    assert all(obs_data_from_view(v).level == 1 for v in res.views)
    assert "ENTER_DUNGEON" in res.views[1].obs.achievements
