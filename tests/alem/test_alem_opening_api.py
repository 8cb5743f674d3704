"""The opening: the whole team works a 3-agent sync site together (docs/alem.md "The opening";
issue 23, item 2)."""

from __future__ import annotations

from alem_testlib import add_sync_site, add_team, site_with_room
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, DOWN, LEFT, NOOP, RIGHT, UP
from compass.games.alem.obs import CoordSite

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
    for xy, soft in sites:
        add_sync_site(d, "tree" if xy == SOFT else "stone", xy, soft)
    add_team(d, positions, dead=dead)
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


def _place_around(alem_overworld, soft: bool, required: int = 3, done: tuple[str, ...] = (), seed: int = 0):
    """Overworld ``seed`` (Hard) with the three agents two tiles from a sync tile needing ``required``
    agents (``soft`` or hard), with room for all three around it, and ``done`` already unlocked by
    all (so the team does not pick a dearer site first). Returns the env and the tile (row, col)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from alem.alem_coop.constants import Achievement

    env = alem_overworld(60, text=False)
    env.reset(seed)
    cp = env.checkpoint()
    st = cp["state"]
    grass = np.asarray(st.map[0]) == BLOCK_ID["grass"]
    coord = np.asarray(st.coordination_map[0])
    mask = np.asarray(st.soft_coordination_mask[0])
    block = np.asarray(st.map[0]) != BLOCK_ID["construction_site"]  # a block to Do on, not a build
    found = site_with_room(grass, (coord == required) & (mask == soft) & block, 3)
    assert found is not None, (
        f"seed {seed}'s overworld has a required-{required} {soft=} sync tile with room around it"
    )
    (r, c), _, starts = found
    edits = {"player_position": jnp.asarray(starts, dtype=st.player_position.dtype)}
    ach = st.achievements
    for name in done:
        ach = ach.at[:, Achievement[name].value].set(True)
    st = st.replace(**edits, achievements=ach)
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    return env, (int(r), int(c))


def test_a_real_team_unlocks_both_three_agent_achievements_together(alem_overworld):
    """The real game (the overworld at Hard): the three agents stand two tiles from a required-3
    hard sync tile, follow ``opening_step`` and unlock COORD_3_AGENTS_HARD on the same step; then
    the same beside a soft one for COORD_3_AGENTS_SOFT."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    for soft, name in ((False, "COORD_3_AGENTS_HARD"), (True, "COORD_3_AGENTS_SOFT")):
        # For the soft one the hard one is done already, else the team would pick a hard site first.
        env, site = _place_around(alem_overworld, soft, done=("COORD_3_AGENTS_HARD",) if soft else ())
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


# --------------------------------------------------------------------------- second pass: 2-agent sites
PAIR_HARD = (5, 2)  # a hard 2-agent stone site between the two 3-agent ones of FIELD


def _with_pair_site(d, xy=PAIR_HARD, soft=False):
    """``d`` with a 2-agent sync site at ``xy`` in view as well."""
    dx, dy = xy[0] - d.position[0], xy[1] - d.position[1]
    d.coord_sites.append(CoordSite("stone", *xy, dx, dy, abs(dx) + abs(dy), "sync", required=2, soft=soft))
    return d


def test_two_agent_sites_only_when_asked_and_after_the_dearer_ones():
    three = {"COORD_3_AGENTS_HARD", "COORD_3_AGENTS_SOFT"}
    # By default the opening keeps to 3-agent sites, as before.
    assert _site(_with_pair_site(_agent(0, have=three))) is None
    pair = (2, 3)
    # Asked for, a hard 2-agent site (5 points) comes after the hard 3-agent one (8) and the soft
    # one (5, more agents first), and every agent names it.
    pick = [api.opening_site(_with_pair_site(_agent(i)), pair) for i in TEAM]
    assert {(s.x, s.y) for s in pick} == {HARD}
    pick = [api.opening_site(_with_pair_site(_agent(i, have=three)), pair) for i in TEAM]
    assert {(s.x, s.y) for s in pick} == {PAIR_HARD}
    # Once the team has COORD_2_AGENTS_HARD, a hard 2-agent site pays nothing more.
    assert api.opening_site(_with_pair_site(_agent(0, have=three | {"COORD_2_AGENTS_HARD"})), pair) is None
    # With one agent dead, the two left still work the 2-agent site, not the 3-agent ones.
    d = _with_pair_site(_agent(0, dead=(2,)))
    assert (api.opening_site(d, pair).x, api.opening_site(d, pair).y) == PAIR_HARD
    assert api.opening_site(_agent(0, dead=(2,)), pair) is None


def test_the_whole_team_goes_to_a_two_agent_site_and_does_once_two_are_by_it():
    three = {"COORD_3_AGENTS_HARD", "COORD_3_AGENTS_SOFT"}
    pair = (2, 3)
    d = _with_pair_site(_agent(0, have=three))
    stands = api.opening_stands(d, api.opening_site(d, pair))
    assert sorted(stands) == [0, 1, 2] and len(set(stands.values())) == 3
    # Two agents by the hard 2-agent site, facing it, the third still away: they Do (alem needs 2).
    two = dict(TEAM) | {0: stands[0], 1: stands[1]}
    for me in (0, 1):
        d = _with_pair_site(_agent(me, two, have=three))
        d.facing_xy = PAIR_HARD
        assert api.opening_step(d, pair) == api.do()
    # One agent alone by it waits.
    d = _with_pair_site(_agent(0, dict(TEAM) | {0: stands[0]}, have=three))
    d.facing_xy = PAIR_HARD
    assert api.opening_step(d, pair) == NOOP


def test_a_real_team_unlocks_both_two_agent_achievements_together(alem_overworld):
    """The real game (the overworld at Hard): with the 3-agent achievements done, the three agents
    stand two tiles from a required-2 hard sync tile (seed 1's overworld: 2-agent sites are rare,
    5-20 on a Hard overworld against about 100 3-agent ones), follow ``opening_step(d, (2, 3))`` and unlock
    COORD_2_AGENTS_HARD, those that do on the same step (at least two); then beside a soft one (the same
    overworld) for COORD_2_AGENTS_SOFT."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    three = ("COORD_3_AGENTS_HARD", "COORD_3_AGENTS_SOFT")
    for soft, name, seed in ((False, "COORD_2_AGENTS_HARD", 1), (True, "COORD_2_AGENTS_SOFT", 1)):
        done = three + (("COORD_2_AGENTS_HARD",) if soft else ())
        env, site = _place_around(alem_overworld, soft, required=2, done=done, seed=seed)
        res = env.step([NOOP] * 3)
        unlocked: dict[int, int] = {}
        for _ in range(20):
            ds = [obs_data_from_view(v) for v in res.views]
            picks = {(s.x, s.y) for s in (api.opening_site(d, (2, 3)) for d in ds) if s is not None}
            assert len(picks) == 1, picks  # all three agree on one site
            res = env.step([api.opening_step(d, (2, 3)) for d in ds])
            for i, v in enumerate(res.views):
                if name in v.obs.achievements and i not in unlocked:
                    unlocked[i] = v.obs.step
            if unlocked:
                break
        assert len(unlocked) >= 2 and len(set(unlocked.values())) == 1, (name, unlocked)
