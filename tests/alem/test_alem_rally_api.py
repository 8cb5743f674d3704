"""The rally: the team walks, later in the day, to a seen or remembered sync site with room and
works it there with the opening (docs/alem.md "The opening, third pass"; issue 23, item 2)."""

from __future__ import annotations

from alem_testlib import add_sync_site, add_team, site_with_room
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import NOOP

# A 24x12 field. The team stands bottom left; a 3-agent stone site with room at (17, 3), a
# 3-agent tree site at (7, 3) boxed in by trees (one walkable neighbour), both only remembered.
FIELD = [
    "........................",
    "........................",
    "......TTT...............",
    "......TTT........#......",
    "......T.T...............",
    "........................",
    "........................",
    "........................",
    "........................",
    "........................",
    "........................",
    "........................",
]
ROOM, BOXED = (17, 3), (7, 3)
TEAM = {0: (11, 8), 1: (12, 8), 2: (12, 9)}


def _agent(me, positions=TEAM, have=frozenset(), remembered=(ROOM, BOXED), seen=(), dead=()):
    """Agent ``me``'s observation: the team at ``positions``; the 3-agent sites ``remembered`` (in
    the memory only) and ``seen`` ((tile, soft) pairs, in view)."""
    d = _obs(FIELD, agent_id=me, achievements=frozenset(have))
    d.position = positions[me]
    for x, y in remembered:
        d.memory.coord[0, y, x] = 3
    for (x, y), soft in seen:
        add_sync_site(d, "tree" if FIELD[y][x] == "T" else "stone", (x, y), soft)
    add_team(d, positions, dead=dead)
    return d


def _site(d, **kw):
    s = api.rally_site(d, **kw)
    return None if s is None else (s.x, s.y)


def test_the_remembered_site_with_room_around_the_leader_for_every_agent():
    # The boxed tree site is nearer but has one free neighbour: three agents cannot stand by it.
    assert [_site(_agent(i)) for i in TEAM] == [ROOM] * 3
    # Only within reach of the leader (agent 0 at (11, 8): the site is 11 tiles away).
    assert _site(_agent(0), reach=10) is None
    # A remembered site has no known tier: it still pays while either tier is missing.
    assert _site(_agent(0, have={"COORD_3_AGENTS_HARD"})) == ROOM
    assert _site(_agent(0, have={"COORD_3_AGENTS_HARD", "COORD_3_AGENTS_SOFT"})) is None
    # Two living agents cannot work a 3-agent site.
    assert _site(_agent(0, dead=(2,))) is None


def test_a_seen_site_counts_by_its_tier_and_reach_is_from_the_leader():
    hard = {"COORD_3_AGENTS_HARD"}
    # In view as a hard site: once the team has the hard unlock it pays nothing more.
    assert _site(_agent(0, have=hard, remembered=(), seen=((ROOM, False),))) is None
    assert _site(_agent(0, have=hard, remembered=(), seen=((ROOM, True),))) == ROOM
    # Agent 2 measures from the leader (agent 0), not from itself: far from the leader, nothing.
    far = dict(TEAM) | {0: (0, 11)}
    assert _site(_agent(2, far)) is None
    assert _site(_agent(2)) == ROOM


def test_the_leader_walks_to_the_site_and_waits_the_followers_close_in():
    lead = _agent(0)
    assert api.rally_step(lead) not in (None, NOOP)  # walking toward (17, 3)
    # A follower more than ``radius`` from the leader walks toward it; a close one goes on with its day.
    assert api.rally_step(_agent(2, dict(TEAM) | {2: (16, 10)})) not in (None, NOOP)
    assert api.rally_step(_agent(1)) is None
    # The leader by the site waits for the followers...
    there = {0: (17, 4), 1: (12, 8), 2: (12, 9)}
    assert api.rally_step(_agent(0, there)) == NOOP
    # ... and once all three see the site (now in view), the opening takes over: no rally step.
    near = {0: (17, 4), 1: (16, 5), 2: (18, 5)}
    d = _agent(0, near, seen=((ROOM, False),))
    assert api.opening_site(d) is not None and api.rally_step(d) is None


def _rally_or_opening(d) -> int:
    step = api.opening_step(d)
    if step is None:
        step = api.rally_step(d)
    return NOOP if step is None else step


def test_a_real_team_rallies_to_a_remembered_site_and_unlocks_it_together(alem_overworld):
    """The real game (the overworld at Hard, seed 0): the three agents see a required-3 hard sync
    tile with room (one step two tiles out from it), are then moved out of its sight (the site only
    remembered), follow ``opening_step``, else ``rally_step``, and unlock COORD_3_AGENTS_HARD on one step."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from compass.games.alem.names import BLOCK_ID, VIEW_ROWS
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = alem_overworld(120, text=False)
    env.reset(0)
    st = env.checkpoint()["state"]
    grass = np.asarray(st.map[0]) == BLOCK_ID["grass"]
    coord = np.asarray(st.coordination_map[0])
    soft = np.asarray(st.soft_coordination_mask[0])
    block = np.asarray(st.map[0]) != BLOCK_ID["construction_site"]

    def place(positions):
        cp = env.checkpoint()
        s = cp["state"].replace(player_position=jnp.asarray(positions, dtype=st.player_position.dtype))
        env.restore(cp | {"state": s, "np": jax.tree_util.tree_map(np.asarray, s)})
        return env.step([NOOP] * 3)

    # A hard site with room whose three starts, moved straight down out of every agent's view
    # (more than VIEW_ROWS // 2 - 1 rows away), stand on grass too.
    cands = (coord == 3) & ~soft.astype(bool) & block
    for _ in range(int(cands.sum())):
        found = site_with_room(grass, cands, 3)
        assert found is not None, "seed 0's overworld has a hard 3-agent tile with room and grass below it"
        (r, c), _, starts = found
        away = [(a + VIEW_ROWS // 2 + 2, b) for a, b in starts]
        if all(grass[a, b] for a, b in away):
            break
        cands[r, c] = False
    place(starts)
    res = place(away)
    ds = [obs_data_from_view(v) for v in res.views]
    assert all(api.opening_site(d) is None for d in ds)  # out of sight: no opening
    assert {(s.x, s.y) for s in (api.rally_site(d) for d in ds)} == {(int(c), int(r))}
    unlocked: dict[int, int] = {}
    for _ in range(40):
        ds = [obs_data_from_view(v) for v in res.views]
        res = env.step([_rally_or_opening(d) for d in ds])
        for i, v in enumerate(res.views):
            if "COORD_3_AGENTS_HARD" in v.obs.achievements and i not in unlocked:
                unlocked[i] = v.obs.step
        if len(unlocked) == 3:
            break
    assert set(unlocked) == {0, 1, 2} and len(set(unlocked.values())) == 1, unlocked
