"""The opening: the whole team works a 3-agent sync site together (docs/alem.md "The opening";
issue 23, item 2)."""

from __future__ import annotations

from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, DOWN, LEFT, NOOP, RIGHT, UP
from compass.games.alem.obs import CoordSite, Teammate

# An 11x9 field: a hard 3-agent stone site at (2, 2), a soft 3-agent tree site at (8, 2).
FIELD = [
    "...........",
    "...........",
    "..#.....T..",
    "...........",
    "...........",
    "...........",
    "...........",
    "...........",
    "...........",
]
HARD, SOFT = (2, 2), (8, 2)
TEAM = {0: (4, 5), 1: (5, 5), 2: (6, 5)}


def _agent(me, positions=TEAM, sites=((HARD, False), (SOFT, True)), have=frozenset(), step=0, dead=()):
    """Agent ``me``'s observation with the team at ``positions`` and the given (tile, soft) 3-agent sites in view."""
    d = _obs(FIELD, agent_id=me, achievements=frozenset(have), step=step)
    d.position = positions[me]
    d.facing, d.facing_xy = "north", (d.position[0], d.position[1] - 1)
    for (x, y), soft in sites:
        name = "tree" if (x, y) == SOFT else "stone"
        dx, dy = x - d.position[0], y - d.position[1]
        d.coord_sites.append(CoordSite(name, x, y, dx, dy, abs(dx) + abs(dy), "sync", required=3, soft=soft))
    for i, (x, y) in positions.items():
        if i != me:
            dx, dy = x - d.position[0], y - d.position[1]
            d.teammates.append(
                Teammate(i, "miner", x, y, dx, dy, abs(dx) + abs(dy), 9.0, alive=i not in dead)
            )
    return d


def _site(d):
    s = api.opening_site(d)
    return None if s is None else (s.x, s.y)


def test_every_agent_names_the_same_site_hard_first_then_soft():
    assert [_site(_agent(i)) for i in TEAM] == [HARD] * 3
    got_hard = {"COORD_3_AGENTS_HARD"}
    assert [_site(_agent(i, have=got_hard)) for i in TEAM] == [SOFT] * 3
    assert _site(_agent(0, have=got_hard | {"COORD_3_AGENTS_SOFT"})) is None
    # Two living agents cannot work a 3-agent site.
    assert _site(_agent(0, dead=(2,))) is None


def test_only_sites_every_agent_sees_with_their_neighbours_count():
    # Agent 2 at x=7 sees x=2 only at its view's edge (5 columns away): the hard site's west
    # neighbour is out of its view, so nobody picks it; the soft one is in all views.
    far = {0: (4, 5), 1: (5, 5), 2: (7, 5)}
    assert [_site(_agent(i, far)) for i in far] == [SOFT] * 3
    # A site walled in on two sides leaves too few tiles to stand on.
    d = _agent(0)
    for x, y in ((2, 1), (1, 2)):
        d.memory.blocks[0, y, x] = BLOCK_ID["stone"]
    assert _site(d) == SOFT


def test_each_agent_gets_its_own_tile_and_all_agree():
    d = _agent(0)
    site = api.opening_site(d)
    stands = api.opening_stands(d, site)
    assert sorted(stands) == [0, 1, 2] and len(set(stands.values())) == 3
    assert all(abs(x - HARD[0]) + abs(y - HARD[1]) == 1 for x, y in stands.values())
    assert all(api.opening_stands(_agent(i), site) == stands for i in TEAM)
    # Seed 37's deadlock: two agents one step from the same free tile are sent to different ones.
    close = {0: (1, 3), 1: (3, 3), 2: (2, 4)}
    stands = api.opening_stands(_agent(0, close), api.opening_site(_agent(0, close)))
    assert len(set(stands.values())) == 3


def test_the_step_walks_faces_waits_then_does_together():
    d = _agent(0, step=1)
    stand = api.opening_stands(d, api.opening_site(d))[0]
    assert api.opening_step(d) in (LEFT, UP)  # walks toward its tile (both start a shortest path)
    # On the way each agent pauses one step in six, in turn by id (two agents refused the same tile forever).
    assert api.opening_step(_agent(0, step=6)) == NOOP
    assert api.opening_step(_agent(1, step=6)) != NOOP
    # On its tile, not facing the site: turns to it.
    at = dict(TEAM) | {0: stand}
    d = _agent(0, at)
    face = {(1, 0): LEFT, (-1, 0): RIGHT, (0, 1): UP, (0, -1): DOWN}[(stand[0] - HARD[0], stand[1] - HARD[1])]
    if d.facing_xy != HARD:
        assert api.opening_step(d) == face
    d.facing_xy = HARD
    assert api.opening_step(d) == NOOP  # the others are not there yet: wait
    everyone = api.opening_stands(d, api.opening_site(d))
    d = _agent(0, everyone)
    d.facing_xy = HARD
    assert api.opening_step(d) == api.do()  # all three by it: Do (a hard site fails alone, so no harm)


def test_a_soft_site_is_done_only_on_even_steps():
    soft_only = (((SOFT), True),)
    d = _agent(0, sites=soft_only)
    stands = api.opening_stands(d, api.opening_site(d))
    for step, want in ((7, NOOP), (8, api.do())):
        d = _agent(0, stands, sites=soft_only, step=step)
        d.facing_xy = SOFT
        assert api.opening_step(d) == want


def test_a_real_team_unlocks_both_three_agent_achievements_together(alem_overworld):
    """The real game (the overworld at Hard): the three agents stand two tiles from a required-3
    hard sync tile, follow ``opening_step`` and unlock COORD_3_AGENTS_HARD on the same step; then
    the same beside a soft one for COORD_3_AGENTS_SOFT."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    def place_around(soft: bool):
        env = alem_overworld(60, text=False)
        env.reset(0)
        cp = env.checkpoint()
        st = cp["state"]
        grass = np.asarray(st.map[0]) == BLOCK_ID["grass"]
        coord = np.asarray(st.coordination_map[0])
        mask = np.asarray(st.soft_coordination_mask[0])
        for r, c in np.argwhere((coord == 3) & (mask == soft)):
            free = [
                (r + dr, c + dc)
                for dr, dc in ((0, -1), (0, 1), (-1, 0), (1, 0))
                if 1 <= r + 2 * dr < grass.shape[0] - 1
                and 1 <= c + 2 * dc < grass.shape[1] - 1
                and grass[r + dr, c + dc]
                and grass[r + 2 * dr, c + 2 * dc]
            ]
            if len(free) >= 3:
                break
        else:
            raise AssertionError(f"seed 0's overworld has a required-3 {soft=} sync tile with room around it")
        starts = [(2 * a - int(r), 2 * b - int(c)) for a, b in free[:3]]
        edits = {"player_position": jnp.asarray(starts, dtype=st.player_position.dtype)}
        if soft:  # the hard one done already, else the team would pick a hard site first
            from alem.alem_coop.constants import Achievement

            edits["achievements"] = st.achievements.at[:, Achievement.COORD_3_AGENTS_HARD.value].set(True)
        st = st.replace(**edits)
        env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
        return env, (int(r), int(c))

    for soft, name in ((False, "COORD_3_AGENTS_HARD"), (True, "COORD_3_AGENTS_SOFT")):
        env, site = place_around(soft)
        res = env.step([NOOP] * 3)
        unlocked: dict[int, int] = {}
        for _ in range(16):
            ds = [obs_data_from_view(v) for v in res.views]
            assert {(s.x, s.y) for s in (api.opening_site(d) for d in ds)} == {(site[1], site[0])}
            res = env.step([api.opening_step(d) for d in ds])
            for i, v in enumerate(res.views):
                if name in v.obs.achievements and i not in unlocked:
                    unlocked[i] = v.obs.step
            if len(unlocked) == 3:
                break
        assert set(unlocked) == {0, 1, 2} and len(set(unlocked.values())) == 1, (name, unlocked)
