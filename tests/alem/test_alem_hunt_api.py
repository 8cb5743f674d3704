"""Hunting together: the team kills an elite creature or a large cow on one step, so that every hitter
unlocks COORD_ELITE_*_KILL or COORD_LARGE_PASSIVE_KILL (docs/alem.md "Hunting together"; issue 23, item 2)."""

from __future__ import annotations

import pytest
from alem_testlib import add_team, site_with_room
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DO, LEFT, NOOP, RIGHT, UP
from compass.games.alem.obs import Mob
from compass.games.alem.skill_api.knowledge import obs_data_from_view

FIELD = [
    ".........",
    ".........",
    ".........",
    ".........",
    ".........",
    ".........",
    ".........",
]
ZOMBIE = (4, 3)


def _mob(d, xy, kind="melee", coord=1, need=3, mid=201, health=5.0, name="zombie") -> Mob:
    dx, dy = xy[0] - d.position[0], xy[1] - d.position[1]
    return Mob(mid, name, kind, xy[0], xy[1], dx, dy, abs(dx) + abs(dy), health, coord, need)


def _agent(me, positions, mobs=((ZOMBIE, "melee", 1, 3),), step=0, have=frozenset(), facing=None):
    """Agent ``me``'s observation: the team at ``positions``, the creatures ``(xy, kind, coord, need)``."""
    d = _obs(FIELD, agent_id=me, achievements=frozenset(have), step=step)
    d.position = positions[me]
    fx, fy = facing or (d.position[0], d.position[1] - 1)
    d.facing_xy = (fx, fy)
    add_team(d, positions)
    for k, (xy, kind, coord, need) in enumerate(mobs):
        name = "cow" if kind == "passive" else "zombie"
        d.mobs.append(_mob(d, xy, kind, coord, need, mid=(100 if kind == "passive" else 200) + k, name=name))
    return d


def test_a_target_needs_its_agents_within_reach_and_pays_only_what_the_agent_lacks():
    far = {0: (4, 5), 1: (5, 5), 2: (0, 0)}  # agent 2 is 8 tiles from the zombie
    assert api.hunt_target(_agent(0, far), reach=5) is None  # two of the three it needs
    assert api.hunt_target(_agent(0, far, mobs=((ZOMBIE, "melee", 1, 2),)), reach=5).id == 200  # two suffice
    # Five tiles below it: within reach, but out of that teammate's view (4 rows each way), so it would not come.
    unseen = {0: (4, 5), 1: (5, 5), 2: (4, 8)}
    assert api.hunt_target(_agent(0, unseen), reach=5) is None
    near = {0: (4, 5), 1: (5, 5), 2: (2, 3)}
    assert api.hunt_target(_agent(0, near), reach=5).id == 200
    assert api.hunt_target(_agent(0, near, have={"COORD_ELITE_MELEE_KILL"}), reach=5) is None
    # An ordinary zombie is no hunt, and a 3-agent elite none for a team of two.
    assert api.hunt_target(_agent(0, near, mobs=((ZOMBIE, "melee", 0, 0),))) is None
    two = _agent(0, near)
    two.teammates[1] = type(two.teammates[1])(2, "miner", 2, 3, -2, -2, 4, 0.0, alive=False)
    assert api.hunt_target(two) is None
    # A teammate too weak to hunt does not count with min_health.
    weak = _agent(0, near)
    weak.teammates[0] = type(weak.teammates[0])(1, "miner", 5, 5, 1, 0, 1, 2.0)
    assert api.hunt_target(weak, min_health=4) is None
    assert api.hunt_target(weak).id == 200


def test_every_agent_picks_the_same_target_the_elite_before_the_large_cow():
    pos = {0: (1, 3), 1: (2, 4), 2: (3, 5)}
    mobs = (((2, 2), "passive", 1, 3), ((4, 3), "melee", 1, 3))
    picks = {i: api.hunt_target(_agent(i, pos, mobs=mobs)) for i in pos}
    assert {m.id for m in picks.values()} == {201}  # the elite (8 points) before the cow (3), for all three
    cow_only = {i: api.hunt_target(_agent(i, pos, mobs=mobs[:1])) for i in pos}
    assert {m.id for m in cow_only.values()} == {100}
    cows = {i: api.hunt_target(_agent(i, pos, mobs=mobs), kinds=("passive",)) for i in pos}
    assert {m.id for m in cows.values()} == {100}  # large cows only: the elite is left alone


def test_the_team_walks_each_to_its_own_tile_round_the_creature():
    pos = {0: (4, 6), 1: (1, 3), 2: (7, 3)}
    stands = {}
    for i in pos:
        d = _agent(i, pos)
        stands[i] = api.opening_stands(d, api.hunt_target(d)).get(i)
    assert len(set(stands.values())) == 3 and all(api.distance(s, ZOMBIE) == 1 for s in stands.values())
    assert api.hunt_step(_agent(0, pos)) == UP  # from below, towards (4, 4)
    assert api.hunt_step(_agent(1, pos)) == RIGHT
    assert api.hunt_step(_agent(2, pos)) == LEFT


def test_next_to_it_an_agent_turns_waits_for_the_team_and_hits_together():
    around = {0: (4, 4), 1: (3, 3), 2: (5, 3)}  # all three next to the zombie at (4, 3)
    d = _agent(0, around, facing=(4, 5))  # facing away: turn first
    assert api.hunt_step(d) == UP
    arriving = {0: (4, 4), 1: (3, 3), 2: (5, 5)}
    assert api.hunt_step(_agent(0, arriving, step=2)) == NOOP  # facing it, one teammate still coming
    assert api.hunt_step(_agent(0, around, step=2)) == DO  # all there: hit on an even step...
    assert api.hunt_step(_agent(0, around, step=3)) == NOOP  # ... a soft elite not on an odd one
    hard = ((ZOMBIE, "melee", 2, 3),)
    assert api.hunt_step(_agent(0, around, mobs=hard, step=3)) == DO  # a hard one every step
    # A 2-agent creature: two next to it are enough.
    pair = {0: (4, 4), 1: (3, 3), 2: (7, 6)}
    assert api.hunt_step(_agent(0, pair, mobs=((ZOMBIE, "melee", 1, 2),), step=4)) == DO
    assert api.hunt_step(_agent(0, pair, step=4)) is None  # a 3-agent one: agent 2 is out of reach


@pytest.mark.parametrize(
    ("cls", "coord", "unlock"),
    [("passive", 1, "COORD_LARGE_PASSIVE_KILL"), ("melee", 2, "COORD_ELITE_MELEE_KILL")],
)
def test_three_agents_kill_it_together_in_the_real_env(alem_overworld, cls, coord, unlock):
    """alem 0.2.1's overworld at Hard: a 3-agent creature (a soft large cow; a hard elite zombie, which
    takes no damage from fewer) placed two tiles from each agent on seed 0; every agent plays
    hunt_step; the kill unlocks the achievement for all three on the same step."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from compass.games.alem.names import BLOCK_ID

    env = alem_overworld(200, text=False)
    env.reset(0)
    cp = env.checkpoint()
    st = cp["state"]
    grass = np.asarray(st.map[0]) == BLOCK_ID["grass"]
    found = site_with_room(grass, grass, 3)
    assert found is not None
    (r, c), _, starts = found
    mobs = getattr(st, f"{cls}_mobs")
    lv = 0
    mobs = mobs.replace(
        position=mobs.position.at[lv, 0].set(jnp.asarray([r, c], dtype=mobs.position.dtype)),
        health=mobs.health.at[lv, 0].set(5.0 if cls == "melee" else 3.0),
        mask=mobs.mask.at[lv].set(False).at[lv, 0].set(True),
        type_id=mobs.type_id.at[lv, 0].set(0),  # a cow, a zombie
    )
    st = st.replace(
        player_position=jnp.asarray(starts, dtype=st.player_position.dtype),
        mob_map=st.mob_map.at[lv, r, c].set(True),
        **{
            f"{cls}_mobs": mobs,
            f"{cls}_mob_coordination": getattr(st, f"{cls}_mob_coordination").at[lv, 0].set(coord),
            f"{cls}_mob_agents_required": getattr(st, f"{cls}_mob_agents_required").at[lv, 0].set(3),
        },
    )
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    res = env.step([NOOP, NOOP, NOOP])
    unlocked: dict[int, int] = {}
    for _ in range(60):
        ds = [obs_data_from_view(v) for v in res.views]
        res = env.step([api.hunt_step(d) or NOOP for d in ds])
        for i, v in enumerate(res.views):
            if unlock in v.obs.achievements and i not in unlocked:
                unlocked[i] = v.obs.step
        if len(unlocked) == 3:
            break
    assert set(unlocked) == {0, 1, 2} and len(set(unlocked.values())) == 1, unlocked
