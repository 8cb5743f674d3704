"""Hunting together, second pass: an agent that sees an elite creature calls the team (a request for a
sapphire, which every teammate sees with the caller's position wherever it stands), holds the creature in
view, and the teammates walk to it (docs/alem.md "Hunting together, second pass: calling the team";
issue 23, item 2)."""

from __future__ import annotations

from dataclasses import replace

from alem_testlib import add_team, site_with_room
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DOWN, LEFT, NOOP, RIGHT, UP
from compass.games.alem.obs import Mob
from compass.games.alem.skill_api.knowledge import obs_data_from_view

# 30 x 9 tiles of grass: room for a teammate out of view (the view is 9 x 7 tiles round the agent).
FIELD = ["." * 30 for _ in range(9)]
ZOMBIE = (4, 4)


def _agent(me, positions, mobs=((ZOMBIE, "melee", 2, 3),), requests=None, my_request=None, have=frozenset()):
    """Agent ``me``'s observation: the team at ``positions`` (``requests``: teammate id -> its request), the
    creatures ``(xy, kind, coord, need)`` that lie in ``me``'s view."""
    d = _obs(FIELD, agent_id=me, achievements=frozenset(have), my_request=my_request)
    d.position = positions[me]
    d.facing_xy = (d.position[0], d.position[1] - 1)
    add_team(d, positions)
    for i, what in (requests or {}).items():
        k = next(j for j, t in enumerate(d.teammates) if t.id == i)
        d.teammates[k] = replace(d.teammates[k], request=what)
    for k, (xy, kind, coord, need) in enumerate(mobs):
        if api.in_view_of(xy, d.position):
            dx, dy = xy[0] - d.position[0], xy[1] - d.position[1]
            name = "cow" if kind == "passive" else "zombie"
            mid = (100 if kind == "passive" else 200) + k
            d.mobs.append(Mob(mid, name, kind, xy[0], xy[1], dx, dy, abs(dx) + abs(dy), 5.0, coord, need))
    return d


def test_an_elite_is_called_for_when_the_team_can_kill_it_and_the_agent_lacks_its_unlock():
    pos = {0: (6, 4), 1: (20, 4), 2: (25, 4)}
    assert api.elite_to_call(_agent(0, pos)).id == 200
    # Not for a large cow (3 points, the hunt's own reach) nor an ordinary zombie.
    assert api.elite_to_call(_agent(0, pos, mobs=((ZOMBIE, "passive", 1, 3),))) is None
    assert api.elite_to_call(_agent(0, pos, mobs=((ZOMBIE, "melee", 0, 0),))) is None
    assert api.elite_to_call(_agent(0, pos, have={"COORD_ELITE_MELEE_KILL"})) is None
    # A 3-agent elite needs three living agents with the health to hunt; a 2-agent one two.
    weak = _agent(0, pos)
    weak.teammates[1] = replace(weak.teammates[1], health=2.0)
    assert api.elite_to_call(weak, min_health=5) is None
    assert api.elite_to_call(_agent(0, pos, mobs=((ZOMBIE, "melee", 2, 2),)), min_health=5).id == 200
    # Only with the agents it needs within reach of the caller: nobody would answer from further.
    assert api.elite_to_call(_agent(0, pos), reach=15) is None  # agent 2 is 19 tiles away
    assert api.elite_to_call(_agent(0, pos), reach=19).id == 200
    assert api.call_step(_agent(0, pos), reach=15) is None
    # The skeleton is called for only when asked for ranged ones too.
    skeleton = ((ZOMBIE, "ranged", 1, 3),)
    assert api.elite_to_call(_agent(0, pos, mobs=skeleton)).id == 200
    assert api.elite_to_call(_agent(0, pos, mobs=skeleton), kinds=("melee",)) is None


def test_the_agent_that_sees_it_calls_then_holds_it_in_view_without_stepping_next_to_it():
    pos = {0: (9, 4), 1: (25, 4), 2: (28, 4)}  # five tiles east of the zombie, at the edge of its view
    assert api.call_step(_agent(0, pos)) == api.request(api.CALL_REQUEST)
    calling = _agent(0, pos, my_request=api.CALL_REQUEST)
    assert api.call_step(calling) == LEFT  # closing in to hold it in view
    held = {0: (7, 4), 1: (25, 4), 2: (28, 4)}
    assert api.call_step(_agent(0, held, my_request=api.CALL_REQUEST)) == NOOP  # three tiles: wait there
    # A zombie two tiles off is led towards the team (east, where they are), not waited for.
    close = {0: (6, 4), 1: (25, 4), 2: (28, 4)}
    assert api.call_step(_agent(0, close, my_request=api.CALL_REQUEST)) == RIGHT
    # A request for food is not overwritten: the call waits, the agent does what it would have done.
    assert api.call_step(_agent(0, pos, my_request="food")) is None
    # Nobody calls and no elite in view: nothing to do.
    assert api.call_step(_agent(1, pos)) is None


def test_teammates_answer_the_nearest_call_within_reach_and_wait_near_the_caller():
    pos = {0: (7, 4), 1: (20, 4), 2: (7, 8)}
    calls = {0: api.CALL_REQUEST}
    d = _agent(1, pos, requests=calls)  # 13 tiles east of the caller, the zombie out of its view
    assert api.caller(d).id == 0
    assert api.call_step(d) == LEFT
    assert api.call_step(d, reach=10) is None  # too far to answer
    below = _agent(2, pos, requests=calls)  # sees the zombie itself: it calls too
    assert api.call_step(below) == api.request(api.CALL_REQUEST)
    near = {0: (7, 4), 1: (9, 4), 2: (7, 8)}
    assert api.call_step(_agent(1, near, requests=calls, mobs=())) == NOOP  # two tiles from the caller
    # A request for food is no call.
    assert api.call_step(_agent(1, pos, requests={0: "food"})) is None


def test_once_all_three_see_it_the_hunt_takes_over():
    pos = {0: (7, 4), 1: (9, 5), 2: (8, 2)}  # all within 5 tiles of the zombie and seeing it
    for i in pos:
        d = _agent(i, pos, requests={j: api.CALL_REQUEST for j in pos if j != i})
        assert api.hunt_target(d, reach=7).id == 200
    assert api.hunt_step(_agent(0, pos), reach=7) is not None


def test_a_called_team_kills_a_hard_elite_zombie_in_the_real_env(alem_overworld):
    """alem 0.2.1's overworld at Hard: a hard 3-agent elite zombie next to agent 0, agents 1 and 2 out of
    its view 10-12 tiles away; every agent plays hunt_step, else call_step: agent 0 calls, the others walk
    to it, and all three unlock COORD_ELITE_MELEE_KILL on the same step."""
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
    (r, c), _, _ = found
    # The caller two tiles from the zombie; the others far along the open grass (walls of the map aside).
    rows, cols = np.nonzero(grass)
    far = [(int(y), int(x)) for y, x in zip(rows, cols, strict=True) if 10 <= abs(y - r) + abs(x - c) <= 12]
    far = [p for p in far if not api.in_view_of((c, r), (p[1], p[0]))]
    assert len(far) >= 2
    starts = [(r, c + 2), far[0], next(p for p in far[1:] if p != far[0])]
    mobs = st.melee_mobs
    mobs = mobs.replace(
        position=mobs.position.at[0, 0].set(jnp.asarray([r, c], dtype=mobs.position.dtype)),
        health=mobs.health.at[0, 0].set(5.0),
        mask=mobs.mask.at[0].set(False).at[0, 0].set(True),
        type_id=mobs.type_id.at[0, 0].set(0),
    )
    st = st.replace(
        player_position=jnp.asarray(starts, dtype=st.player_position.dtype),
        mob_map=st.mob_map.at[0, r, c].set(True),
        melee_mobs=mobs,
        melee_mob_coordination=st.melee_mob_coordination.at[0, 0].set(2),
        melee_mob_agents_required=st.melee_mob_agents_required.at[0, 0].set(3),
    )
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    res = env.step([NOOP, NOOP, NOOP])
    called = False
    unlocked: dict[int, int] = {}
    for _ in range(120):
        ds = [obs_data_from_view(v) for v in res.views]
        acts = []
        for d in ds:
            a = api.hunt_step(d, reach=7)
            acts.append(a if a is not None else (api.call_step(d) or NOOP))
        called = called or acts[0] == api.request(api.CALL_REQUEST)
        res = env.step(acts)
        for i, v in enumerate(res.views):
            if "COORD_ELITE_MELEE_KILL" in v.obs.achievements and i not in unlocked:
                unlocked[i] = v.obs.step
        if len(unlocked) == 3:
            break
    assert called
    assert set(unlocked) == {0, 1, 2} and len(set(unlocked.values())) == 1, unlocked


def test_help_near_counts_the_agents_within_reach_of_a_hard_elite():
    far = {0: (5, 4), 1: (20, 4), 2: (25, 4)}
    d = _agent(0, far)
    m = d.mobs[0]
    assert not api.help_near(d, m, reach=7)  # the warrior alone: a hard elite takes no damage from it
    near = {0: (5, 4), 1: (8, 4), 2: (4, 8)}
    d = _agent(0, near)
    assert api.help_near(d, d.mobs[0], reach=7)
    assert not api.help_near(d, d.mobs[0], reach=3)  # agent 2 is 4 tiles from it
    weak = _agent(0, near)
    weak.teammates[1] = replace(weak.teammates[1], health=2.0)
    assert not api.help_near(weak, weak.mobs[0], reach=7, min_health=5)
    plain = _agent(0, far, mobs=((ZOMBIE, "melee", 0, 0),))
    assert api.help_near(plain, plain.mobs[0])  # an ordinary zombie needs no help


def test_lead_step_walks_towards_the_team_only_when_that_keeps_the_zombie_off():
    ahead = {0: (6, 4), 1: (20, 4), 2: (25, 4)}  # the team east, the zombie (4, 4) west
    assert api.lead_step(_agent(0, ahead), ZOMBIE) == RIGHT
    behind = {0: (6, 4), 1: (1, 4), 2: (0, 4)}  # the team beyond the zombie: no walk into it
    assert api.lead_step(_agent(0, behind), ZOMBIE) in (UP, DOWN, RIGHT)  # flee: any step away
