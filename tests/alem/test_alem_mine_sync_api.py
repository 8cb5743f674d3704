"""The mining sync sites: the miner mines a stone sync tile while the helpers it needs Do on it
(docs/alem.md "The mining sync sites"; issue 23, item 2)."""

from __future__ import annotations

from alem_testlib import add_sync_site, add_team
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, LEFT, NOOP, RIGHT, UP
from compass.games.alem.obs import CoordSite

# An 11x9 field: a soft 3-agent stone site at (3, 2), a hard 3-agent one at (8, 2).
FIELD = [
    "...........",
    "...........",
    "...#....#..",
    "...........",
    "...........",
    "...........",
    "...........",
    "...........",
    "...........",
]
SOFT, HARD = (3, 2), (8, 2)
ROLES = {0: "warrior", 1: "forager", 2: "miner"}
TEAM = {0: (2, 4), 1: (6, 6), 2: (4, 3)}


def _agent(me, positions=TEAM, sites=((SOFT, True),), pickaxe=1, have=frozenset(), step=0, facing=None):
    """Agent ``me``'s observation: the team at ``positions``, the given (tile, soft) 3-agent stone sites in view."""
    d = _obs(FIELD, agent_id=me, role=ROLES[me], achievements=frozenset(have), step=step)
    d.position = positions[me]
    d.facing, d.facing_xy = "north", facing or (d.position[0], d.position[1] - 1)
    d.inventory["pickaxe"] = pickaxe
    for xy, soft in sites:
        add_sync_site(d, "stone", xy, soft)
    add_team(d, positions, ROLES)
    return d


def _site(d, reach=4):
    got = api.mine_sync_site(d, reach)
    return None if got is None else ((got[0].x, got[0].y), got[1])


def test_need_and_unlock_follow_alems_rules():
    soft = CoordSite("stone", 0, 0, 0, 0, 0, "sync", required=3, soft=True)
    hard = CoordSite("coal", 0, 0, 0, 0, 0, "sync", required=3, soft=False)
    pair = CoordSite("stone", 0, 0, 0, 0, 0, "sync", required=2, soft=False)
    # A soft site pays COORD_MINE_*_SOFT to a miner with one other agent Doing; a hard one needs all it requires.
    assert [api.mine_sync_need(s) for s in (soft, hard, pair)] == [2, 3, 2]
    assert [api.mine_unlock(s) for s in (soft, hard)] == [
        "COORD_MINE_STONE_SOFT",
        "COORD_MINE_COAL_HARD",
    ]
    # A tree's sync site pays COORD_<n>_AGENTS_* only: there is no block to mine.
    assert api.mine_unlock(CoordSite("tree", 0, 0, 0, 0, 0, "sync", required=3, soft=False)) is None


def test_the_miner_picks_a_site_it_can_mine_and_still_lacks():
    assert _site(_agent(2)) == (SOFT, 2)
    # Without a pickaxe, or with the unlock already, the miner has no site.
    assert _site(_agent(2, pickaxe=0)) is None
    assert _site(_agent(2, have={"COORD_MINE_STONE_SOFT"})) is None
    # The helper (the nearest other agent, 0) farther than reach from the site: none either.
    assert _site(_agent(2), reach=2) is None
    # A hard 3-agent site needs both others within reach: agent 1 is 6 tiles from it.
    both = ((SOFT, True), (HARD, False))
    assert _site(_agent(2, sites=both, have={"COORD_MINE_STONE_SOFT"})) is None
    near = {0: (7, 4), 1: (9, 4), 2: (8, 4)}
    assert _site(_agent(2, near, sites=both, have={"COORD_MINE_STONE_SOFT"})) == (HARD, 2)


def test_helpers_come_only_when_the_miner_stands_by_the_site():
    assert api.mine_sync_helpers(_agent(0), _agent(0).coord_sites[0], 2) == [0]
    # The miner two tiles away: the helper does not know it is coming (it cannot see its pickaxe).
    assert _site(_agent(0)) is None
    by = dict(TEAM) | {2: (4, 2)}
    assert _site(_agent(0, by)) == (SOFT, 2)
    # Agent 1 is not the helper of a soft site (one helper: the nearest), so it goes on with its day.
    assert _site(_agent(1, by)) is None
    assert api.mine_sync_step(_agent(1, by)) is None


def test_the_step_walks_faces_waits_then_does_together():
    # The miner two tiles from the site walks next to it.
    assert api.mine_sync_step(_agent(2)) in (LEFT, UP)
    by = dict(TEAM) | {2: (4, 2)}
    d = _agent(2, by)
    assert api.mine_sync_step(d) == LEFT  # next to it, facing north: turns to it
    d = _agent(2, by, facing=SOFT)
    assert api.mine_sync_step(d) == NOOP  # the helper is not there yet: never Do alone on a soft site
    # The helper walks to a free tile next to the site, then turns to it.
    assert api.mine_sync_step(_agent(0, by)) in (RIGHT, UP)
    both = by | {0: (2, 2)}
    assert api.mine_sync_step(_agent(0, both)) == RIGHT
    # Both next to it and facing it: both Do, every step.
    for step in (7, 8):
        assert api.mine_sync_step(_agent(2, both, facing=SOFT, step=step)) == api.do()
        assert api.mine_sync_step(_agent(0, both, facing=SOFT, step=step)) == api.do()
    # Once the miner walks away the helper stops.
    gone = both | {2: (6, 2)}
    assert api.mine_sync_step(_agent(0, gone, facing=SOFT)) is None


def test_a_real_team_unlocks_coord_mine_stone_with_the_miner_mining(alem_overworld):
    """The real game (the overworld at Hard): the miner, given a wood pickaxe, and its helpers stand
    two tiles from a required-3 stone sync tile and follow ``mine_sync_step``. At a hard tile all
    three Do together: the miner unlocks COORD_MINE_STONE_HARD (the others, without a pickaxe, do
    not) and the tile is mined; at a soft one the miner and one helper Do until the miner's Do
    succeeds (1 in 10 each): COORD_MINE_STONE_SOFT, while the third agent goes on."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from alem.alem_coop.constants import Achievement

    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    def place_around(soft: bool):
        env = alem_overworld(200, text=False)
        views = env.reset(0)
        miner = next(v.obs.agent_id for v in views if v.obs.role == "miner")
        cp = env.checkpoint()
        st = cp["state"]
        stone = np.asarray(st.map[0]) == BLOCK_ID["stone"]
        coord = np.asarray(st.coordination_map[0])
        mask = np.asarray(st.soft_coordination_mask[0])
        h, w = stone.shape
        tiles = [
            (int(r), int(c))
            for r, c in np.argwhere((coord == 3) & (mask == soft) & stone)
            if 5 <= r < h - 5 and 5 <= c < w - 5
        ]
        assert tiles, f"seed 0's overworld has a required-3 {soft=} stone sync tile"
        r, c = tiles[0]
        # Stone sites lie in the mountains: clear grass around it (no other sync tile there).
        game = st.map[0]
        for dr in range(-4, 5):
            for dc in range(-4, 5):
                if (dr, dc) != (0, 0) and abs(dr) + abs(dc) <= 4:
                    game = game.at[r + dr, c + dc].set(BLOCK_ID["grass"])
        cmap = st.coordination_map.at[0, r - 4 : r + 5, c - 4 : c + 5].set(0).at[0, r, c].set(3)
        st = st.replace(map=st.map.at[0].set(game), coordination_map=cmap)
        free = [(r, c - 1), (r, c + 1), (r - 1, c)]
        # The miner and the first helper two tiles out; at a soft tile the third agent 4 out, so the
        # nearest one helps and it does not.
        starts = [(2 * a - int(r), 2 * b - int(c)) for a, b in free[:3]]
        if soft:
            a, b = free[2]
            starts[2] = (4 * a - 3 * int(r), 4 * b - 3 * int(c))
        order = [miner] + [i for i in range(3) if i != miner]
        pos = [None] * 3
        for i, p in zip(order, starts, strict=True):
            pos[i] = p
        inv = st.inventory.replace(pickaxe=st.inventory.pickaxe.at[miner].set(1))
        st = st.replace(player_position=jnp.asarray(pos, dtype=st.player_position.dtype), inventory=inv)
        env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
        return env, miner, (int(c), int(r))

    for soft, name in ((False, "COORD_MINE_STONE_HARD"), (True, "COORD_MINE_STONE_SOFT")):
        env, miner, site = place_around(soft)
        res = env.step([NOOP] * 3)
        unlocked: dict[int, int] = {}
        for _ in range(120):
            ds = [obs_data_from_view(v) for v in res.views]
            acts = [api.mine_sync_step(d) for d in ds]
            res = env.step([NOOP if a is None else a for a in acts])
            for i, v in enumerate(res.views):
                if name in v.obs.achievements and i not in unlocked:
                    unlocked[i] = v.obs.step
            if unlocked:
                break
        assert set(unlocked) == {miner}, (name, unlocked)
        st = env.checkpoint()["state"]
        assert int(st.map[0][site[1], site[0]]) == BLOCK_ID["path"]  # the miner mined it
        if not soft:
            got = np.asarray(st.achievements[:, Achievement.COORD_3_AGENTS_HARD.value])
            assert got.all()  # the helpers, pickaxe or not, counted toward the three
