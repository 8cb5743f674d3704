"""The mining sync sites, second pass: the miner works the coal and iron sync sites with the crew
(docs/alem.md "The mining sync sites, second pass: coal and iron"; issue 23, item 2)."""

from __future__ import annotations

from alem_testlib import add_sync_site, add_team
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, NOOP
from compass.games.alem.obs import CoordSite

# A 15x9 field: blocks at (3, 2), (8, 2) and (12, 2) carry the sites each test names.
FIELD = [
    "...............",
    "...............",
    "...#....#...#..",
    "...............",
    "...............",
    "...............",
    "...............",
    "...............",
    "...............",
]
ROLES = {0: "warrior", 1: "forager", 2: "miner"}
COAL_IRON = ("coal", "iron")


def _agent(me, positions, sites, pickaxe=1, have=frozenset(), facing=None):
    """Agent ``me``'s observation: the team at ``positions``; ``sites``: (name, tile, soft, required)."""
    d = _obs(FIELD, agent_id=me, role=ROLES[me], achievements=frozenset(have))
    d.position = positions[me]
    d.facing, d.facing_xy = "north", facing or (d.position[0], d.position[1] - 1)
    d.inventory["pickaxe"] = pickaxe
    for name, xy, soft, required in sites:
        add_sync_site(d, name, xy, soft, required)
    add_team(d, positions, ROLES)
    return d


def _site(d, **kw):
    got = api.mine_sync_site(d, **kw)
    return None if got is None else (got[0].name, (got[0].x, got[0].y))


def test_ores_leave_the_stone_sites_to_the_opening():
    team = {0: (5, 4), 1: (7, 4), 2: (5, 3)}
    sites = [("stone", (3, 2), True, 3), ("coal", (8, 2), True, 3)]
    # Every ore: the nearest site, the stone one; coal and iron only: the coal one, farther.
    assert _site(_agent(2, team, sites)) == ("stone", (3, 2))
    assert _site(_agent(2, team, sites), ores=COAL_IRON) == ("coal", (8, 2))
    # Stone only in view: nothing to work in the second pass.
    assert _site(_agent(2, team, sites[:1]), ores=COAL_IRON) is None


def test_iron_needs_the_stone_pickaxe_and_its_unlock_missing():
    team = {0: (10, 4), 1: (12, 4), 2: (9, 3)}
    iron = [("iron", (12, 2), False, 2)]
    assert _site(_agent(2, team, iron, pickaxe=1), ores=COAL_IRON) is None
    assert _site(_agent(2, team, iron, pickaxe=2), ores=COAL_IRON) == ("iron", (12, 2))
    have = {"COORD_MINE_IRON_HARD"}
    assert _site(_agent(2, team, iron, pickaxe=2, have=have), ores=COAL_IRON) is None
    # A soft iron site is another unlock (COORD_MINE_IRON_SOFT), still missing.
    soft = [("iron", (12, 2), True, 2)]
    assert _site(_agent(2, team, soft, pickaxe=2, have=have), ores=COAL_IRON) == ("iron", (12, 2))


def test_the_hunts_reach_brings_a_helper_from_farther():
    # The one helper a soft site needs (agent 0) stands 7 tiles from it, the site in its view: out of reach 4, in reach 7.
    team = {0: (0, 6), 1: (13, 8), 2: (6, 3)}
    coal = [("coal", (3, 2), True, 3)]
    assert api.mine_sync_helpers(_agent(2, team, coal), _agent(2, team, coal).coord_sites[0], 2) == [0]
    assert _site(_agent(2, team, coal), ores=COAL_IRON, reach=4) is None
    assert _site(_agent(2, team, coal), ores=COAL_IRON, reach=7) == ("coal", (3, 2))


def test_full_brings_every_agent_a_soft_site_requires():
    soft3 = CoordSite("coal", 0, 0, 0, 0, 0, "sync", required=3, soft=True)
    soft2 = CoordSite("coal", 0, 0, 0, 0, 0, "sync", required=2, soft=True)
    assert [api.mine_sync_need(s) for s in (soft3, soft2)] == [2, 2]
    assert [api.mine_sync_need(s, full=True) for s in (soft3, soft2)] == [3, 2]
    # The miner and agent 0 by the site, agent 1 (the second helper with full) two tiles out.
    team = {0: (2, 2), 1: (3, 5), 2: (4, 2)}
    coal = [("coal", (3, 2), True, 3)]
    d = _agent(2, team, coal, facing=(3, 2))
    assert api.mine_sync_helpers(d, d.coord_sites[0], 2, full=True) == [0, 1]
    # A pair is enough without full: the miner Does; with full it waits for agent 1 ...
    assert api.mine_sync_step(d, ores=COAL_IRON) == api.do()
    assert api.mine_sync_step(d, ores=COAL_IRON, full=True) == NOOP
    # ... which walks up to the free tile below the site, then all three Do on one step.
    assert api.mine_sync_step(_agent(1, team, coal), ores=COAL_IRON, full=True) is not None
    assert api.mine_sync_step(_agent(1, team, coal), ores=COAL_IRON) is None
    there = team | {1: (3, 3)}
    for me in (0, 1, 2):
        d = _agent(me, there, coal, facing=(3, 2))
        assert api.mine_sync_step(d, ores=COAL_IRON, full=True) == api.do()


def test_a_real_team_unlocks_coord_mine_coal_at_a_soft_site(alem_overworld):
    """The real game (the overworld at Hard): a soft required-3 coal sync tile drawn on seed 0's
    map with grass round it, the miner given a wood pickaxe two tiles out, the others 3 and 6 tiles
    out (each with the tile in view), all following ``mine_sync_step(ores=("coal", "iron"), full=True)``: the three walk up and
    Do on one step; the miner alone unlocks COORD_MINE_COAL_SOFT and collects the coal, every agent
    unlocks COORD_3_AGENTS_SOFT, and the tile is mined."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from alem.alem_coop.constants import Achievement

    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = alem_overworld(200, text=False)
    views = env.reset(0)
    miner = next(v.obs.agent_id for v in views if v.obs.role == "miner")
    cp = env.checkpoint()
    st = cp["state"]
    h, w = np.asarray(st.map[0]).shape
    r, c = h // 2, w // 2
    game = st.map[0]
    for dr in range(-6, 7):
        for dc in range(-6, 7):
            if abs(dr) + abs(dc) <= 6:
                game = game.at[r + dr, c + dc].set(BLOCK_ID["grass"])
    game = game.at[r, c].set(BLOCK_ID["coal"])
    cmap = st.coordination_map.at[0, r - 6 : r + 7, c - 6 : c + 7].set(0).at[0, r, c].set(3)
    soft = st.soft_coordination_mask.at[0, r, c].set(True)
    others = [i for i in range(3) if i != miner]
    pos = [None] * 3
    pos[miner], pos[others[0]], pos[others[1]] = (r, c - 2), (r, c + 3), (r + 4, c + 2)
    inv = st.inventory.replace(pickaxe=st.inventory.pickaxe.at[miner].set(1))
    st = st.replace(
        map=st.map.at[0].set(game),
        coordination_map=cmap,
        soft_coordination_mask=soft,
        player_position=jnp.asarray(pos, dtype=st.player_position.dtype),
        inventory=inv,
    )
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    res = env.step([NOOP] * 3)
    for _ in range(40):
        ds = [obs_data_from_view(v) for v in res.views]
        acts = [api.mine_sync_step(d, reach=7, ores=COAL_IRON, full=True) for d in ds]
        res = env.step([NOOP if a is None else a for a in acts])
        if "COORD_MINE_COAL_SOFT" in res.views[miner].obs.achievements:
            break
    st = env.checkpoint()["state"]
    got = np.asarray(st.achievements[:, Achievement.COORD_MINE_COAL_SOFT.value])
    assert got.tolist() == [i == miner for i in range(3)]
    assert np.asarray(st.achievements[:, Achievement.COORD_3_AGENTS_SOFT.value]).all()
    assert int(st.inventory.coal[miner]) >= 1
    assert int(st.map[0][r, c]) == BLOCK_ID["path"]


def test_anyone_with_the_pickaxe_mines_and_the_helpers_follow_whoever_stands_there():
    # The warrior (0) holds a pickaxe by a soft coal site; the miner role (2) is far off.
    team = {0: (7, 3), 1: (10, 4), 2: (1, 8)}
    coal = [("coal", (8, 2), True, 3)]
    warrior = _agent(0, team, coal)
    assert _site(warrior, ores=COAL_IRON) is None  # the miner role only: the warrior is no miner
    assert api.mine_sync_site(warrior, ores=COAL_IRON, anyone=True)[1] == 0
    # With its COORD_MINE_COAL_SOFT already, it is no miner there either.
    assert _site(_agent(0, team, coal, have={"COORD_MINE_COAL_SOFT"}), ores=COAL_IRON, anyone=True) is None
    # The forager, without a pickaxe, sees nobody next to the site yet: it goes on with its day ...
    assert _site(_agent(1, team, coal, pickaxe=0), ores=COAL_IRON, anyone=True) is None
    # ... then the warrior standing by it: the forager is its helper and walks over.
    by = team | {0: (8, 3)}
    forager = _agent(1, by, coal, pickaxe=0)
    assert api.mine_sync_site(forager, ores=COAL_IRON, anyone=True)[1] == 0
    assert api.mine_sync_step(forager, ores=COAL_IRON, anyone=True) is not None
    assert _site(forager, ores=COAL_IRON) is None  # the miner role is not there
    # Both next to it and facing it: both Do.
    both = by | {1: (9, 2)}
    assert api.mine_sync_step(_agent(0, both, coal, facing=(8, 2)), ores=COAL_IRON, anyone=True) == api.do()
    forager = _agent(1, both, coal, pickaxe=0, facing=(8, 2))
    assert api.mine_sync_step(forager, ores=COAL_IRON, anyone=True) == api.do()


def test_a_site_without_room_for_the_crew_is_left():
    # The coal tile (8, 2) walled in by stone on three sides: room for one agent only, and a pair needs two.
    team = {0: (7, 5), 1: (10, 4), 2: (8, 4)}
    coal = [("coal", (8, 2), True, 3)]
    d = _agent(2, team, coal)
    assert _site(d, ores=COAL_IRON) == ("coal", (8, 2))
    for xy in ((7, 2), (9, 2), (8, 1)):
        d.memory.blocks[0, xy[1], xy[0]] = BLOCK_ID["stone"]
    assert _site(d, ores=COAL_IRON) is None
