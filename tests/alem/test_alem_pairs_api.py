"""The one-shot pair harvest of a 2-agent sync site (docs/alem.md "Pair harvest"; issue 23, item 2)."""

from __future__ import annotations

from alem_testlib import place_pair
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import RIGHT, UP
from compass.games.alem.obs import CoordSite, Teammate

# A 9x5 field: '#' stone. Two stone tiles carry a 2-agent requirement in the agents' memories.
FIELD = [
    ".........",
    ".#.....#.",
    ".........",
    ".........",
    ".........",
]
LEFT_SITE, RIGHT_SITE = (1, 1), (7, 1)


def _agent(
    me: int,
    positions: dict[int, tuple[int, int]],
    pickaxe: int = 1,
    have=frozenset(),
    sites=(LEFT_SITE, RIGHT_SITE),
):
    """Agent ``me``'s observation of the field with the team at ``positions`` (id -> (x, y))."""
    d = _obs(FIELD, agent_id=me, achievements=frozenset(have))
    d.position = positions[me]
    d.facing, d.facing_xy = "north", (positions[me][0], positions[me][1] - 1)
    d.inventory["pickaxe"] = pickaxe
    for x, y in sites:
        d.memory.coord[0, y, x] = 2
    for i, (x, y) in positions.items():
        if i != me:
            dx, dy = x - d.position[0], y - d.position[1]
            d.teammates.append(Teammate(i, "miner", x, y, dx, dy, abs(dx) + abs(dy), 9.0))
    return d


def test_every_agent_names_the_same_pair_the_two_closest():
    team = {0: (0, 4), 1: (6, 3), 2: (8, 4)}
    assert {api.harvest_pair(_agent(i, team)) for i in team} == {(1, 2)}
    alone = _obs(FIELD)
    assert api.harvest_pair(alone) is None


def test_remembered_two_agent_sites_count_and_three_agent_ones_do_not():
    d = _agent(0, {0: (4, 4), 1: (4, 3)})
    assert [(s.x, s.y) for s in api.pair_sites(d)] == [LEFT_SITE, RIGHT_SITE]
    # Out of view, softness is unknown: either tier still pays.
    assert set(api.pair_site_pays(d, api.pair_sites(d)[0])) == {
        "COORD_2_AGENTS_HARD",
        "COORD_2_AGENTS_SOFT",
        "COORD_MINE_STONE_HARD",
        "COORD_MINE_STONE_SOFT",
    }
    d.memory.coord[0, 1, 1] = 3  # a 3-agent site is not a pair's
    assert [(s.x, s.y) for s in api.pair_sites(d)] == [RIGHT_SITE]
    # A visible site carries its tier.
    d.coord_sites.append(CoordSite("stone", 7, 1, 3, -3, 6, "sync", required=2, soft=True))
    assert set(api.pair_site_pays(d, api.pair_sites(d)[0])) == {
        "COORD_2_AGENTS_SOFT",
        "COORD_MINE_STONE_SOFT",
    }


def test_both_partners_pick_the_same_site_and_the_third_agent_none():
    team = {0: (6, 4), 1: (8, 3), 2: (0, 0)}
    picks = [api.pair_harvest_site(_agent(i, team)) for i in team]
    assert picks[0][0].x == picks[1][0].x == RIGHT_SITE[0] and (picks[0][1], picks[1][1]) == (1, 0)
    assert picks[2] is None
    # Out of reach of either partner: no harvest.
    assert api.pair_harvest_site(_agent(0, team), reach=3) is None


def test_a_partner_already_by_a_site_announces_it():
    # Agent 1 stands next to the left site: agent 0, nearer the right one, joins it there.
    team = {0: (5, 1), 1: (1, 2)}
    site, partner = api.pair_harvest_site(_agent(0, team))
    assert (site.x, site.y, partner) == (*LEFT_SITE, 1)
    # Both by different sites: the lower id's site wins for both.
    team = {0: (7, 2), 1: (1, 2)}
    assert [(api.pair_harvest_site(_agent(i, team))[0].x) for i in team] == [7, 7]


def test_the_step_walks_faces_waits_for_the_partner_then_acts():
    far = {0: (7, 4), 1: (8, 4)}
    assert api.pair_harvest_step(_agent(0, far)) == UP  # walks toward the right site
    d = _agent(0, {0: (6, 1), 1: (8, 4)})
    assert d.facing == "north" and api.pair_harvest_step(d) == RIGHT  # next to it: turns to face it
    d.facing, d.facing_xy = "east", RIGHT_SITE
    assert api.pair_harvest_step(d) == api.noop()  # the partner is not there yet: wait, do not mine alone
    d = _agent(0, {0: (6, 1), 1: (7, 2)})
    d.facing, d.facing_xy = "east", RIGHT_SITE
    assert api.pair_harvest_step(d) == api.do()  # both by it: Do on the same steps


def test_one_shot_a_site_that_pays_nothing_new_is_left():
    team = {0: (6, 1), 1: (7, 2)}
    done = {"COORD_2_AGENTS_HARD", "COORD_2_AGENTS_SOFT", "COORD_MINE_STONE_HARD", "COORD_MINE_STONE_SOFT"}
    assert api.pair_harvest_step(_agent(0, team, have=done)) is None
    # Without a pickaxe the COORD_MINE_* are out of reach, so the 2-agent unlocks alone decide.
    assert (
        api.pair_harvest_step(_agent(0, team, pickaxe=0, have={"COORD_2_AGENTS_HARD", "COORD_2_AGENTS_SOFT"}))
        is None
    )
    assert api.pair_harvest_step(_agent(0, team, pickaxe=0, have={"COORD_2_AGENTS_HARD"})) is not None


def test_a_real_pair_unlocks_the_two_agent_achievements_together(alem_overworld):
    """The real game (the overworld at Hard): agents 0 and 1 stand two tiles from a required-2
    sync tile, agent 2 far off; both follow ``pair_harvest_step`` and unlock COORD_2_AGENTS_*
    on the same step, mining the site."""
    import numpy as np

    from compass.games.alem.names import NOOP
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = alem_overworld(60, text=False)
    site, res = place_pair(
        env, lambda st: np.asarray(st.coordination_map[0]) == 2, pickaxe=1, what="a required-2 sync tile"
    )
    unlocked: dict[int, int] = {}
    for _ in range(12):
        ds = [obs_data_from_view(v) for v in res.views]
        actions = [api.pair_harvest_step(d) if i < 2 else None for i, d in enumerate(ds)]
        res = env.step([NOOP if a is None else a for a in actions])
        for i in (0, 1):
            got = {a for a in res.views[i].obs.achievements if a.startswith("COORD_2_AGENTS_")}
            if got and i not in unlocked:
                unlocked[i] = res.views[i].obs.step
        if len(unlocked) == 2:
            break
    assert set(unlocked) == {0, 1} and unlocked[0] == unlocked[1], unlocked
    # Mined together: the tile's requirement is gone, and so is the site from both partners' lists.
    assert int(env.state.coordination_map[0][site]) == 0
    for v in res.views[:2]:
        assert (site[1], site[0]) not in [(s.x, s.y) for s in api.pair_sites(obs_data_from_view(v))]
