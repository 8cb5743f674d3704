"""Coordination conventions: which sites an agent joins, by what it can earn there (issue 23, item 2)."""

from __future__ import annotations

from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BUILD_ACTIONS
from compass.games.alem.obs import CoordSite, Mob, Teammate


def _site(x: int, y: int, kind: str = "sync", required: int = 2, soft: bool = False) -> CoordSite:
    return CoordSite(
        "stone", x, y, 0, 0, 1, kind, required=required, soft=soft, window=5 if kind == "handover" else 0
    )


def _with_miner(pickaxe: int, have: frozenset[str], sites: list[CoordSite]):
    d = _obs(["..#..", "..@..", "....."], role="warrior", achievements=have)
    d.inventory["pickaxe"] = pickaxe
    d.coord_sites.extend(sites)
    d.teammates.append(Teammate(1, "miner", 3, 2, 1, 1, 2, 9.0))
    return d


def test_an_agent_without_a_pickaxe_joins_the_miner_at_a_two_agent_stone_site():
    # alem counts every agent acting on a sync tile toward its requirement, pickaxe or not, and
    # gives each COORD_2_AGENTS_*: the teammate without a pickaxe is the miner's second agent.
    site = _site(2, 0)
    d = _with_miner(0, frozenset({"COLLECT_WOOD"}), [site])
    assert api.coordination_target(d, helpers=True) == site
    assert api.coordination_target(d) is None  # the library's default: only sites it can mine
    assert api.site_rewards_for(d, site) == ["COORD_2_AGENTS_HARD"]
    # Once it holds COORD_2_AGENTS_HARD the site pays it nothing new (COORD_MINE_* needs the pickaxe) ...
    d = _with_miner(0, frozenset({"COORD_2_AGENTS_HARD"}), [site])
    assert api.coordination_target(d, helpers=True) is None
    # ... while an agent that can mine still earns COORD_MINE_STONE_HARD there.
    d = _with_miner(1, frozenset({"COORD_2_AGENTS_HARD"}), [site])
    assert api.coordination_target(d) == site
    assert api.site_rewards_for(d, site) == ["COORD_2_AGENTS_HARD", "COORD_MINE_STONE_HARD"]


def test_a_handover_of_a_block_the_agent_cannot_mine_pays_it_nothing():
    site = _site(2, 0, kind="handover")
    assert api.site_rewards_for(_with_miner(0, frozenset(), [site]), site) == []
    assert api.coordination_target(_with_miner(0, frozenset({"COLLECT_WOOD"}), [site]), helpers=True) is None
    assert api.coordination_target(_with_miner(1, frozenset({"COLLECT_WOOD"}), [site])) == site


def _build_site(kind: str = "handover") -> CoordSite:
    return CoordSite(
        "construction_site",
        2,
        0,
        0,
        0,
        1,
        kind,
        required=2 if kind == "sync" else 0,
        window=20 if kind == "handover" else 0,
        construction=True,
    )


def test_a_payer_walks_to_a_construction_site_with_the_shelter_it_pays_for():
    # Build is legal only next to a site: the payer, two tiles away, still gets the Build to walk with.
    d = _obs(["..#..", ".....", "..@.."], role="miner", achievements=frozenset({"HANDOVER_COMPLETE"}))
    d.legal_indices = [i for i in d.legal_indices if i not in BUILD_ACTIONS.values()]
    site = _build_site()
    d.coord_sites.append(site)
    d.teammates.append(Teammate(1, "forager", 4, 2, 2, 0, 2, 9.0))  # the completer, not at the site
    assert api.construction_action(d, site) is None  # nobody pays: nothing to build
    assert api.coordination_target(d) is None
    d.inventory.update(wood=10, stone=5)
    assert api.construction_action(d, site) == api.build("shelter")
    # HANDOVER_COMPLETE from an earlier mining handover does not make the shelter "nothing new" ...
    assert api.coordination_target(d, helpers=True) == site
    assert "COORD_BUILD_SHELTER" in api.site_rewards_for(d, site)
    # ... except under the library's default rule, kept as it was (docs/alem.md "Daytime scoring").
    assert api.coordination_target(d) is None


def test_a_helper_joins_the_payer_standing_at_the_site():
    d = _obs(["..#..", ".....", "..@.."], role="forager")
    d.legal_indices = [i for i in d.legal_indices if i not in BUILD_ACTIONS.values()]
    site = _build_site()
    d.coord_sites.append(site)
    d.teammates.append(Teammate(1, "miner", 3, 0, 1, -2, 3, 9.0))  # next to the site: the payer
    assert api.construction_action(d, site) == api.build("shelter")
    d.teammates[0] = Teammate(1, "miner", 4, 2, 2, 0, 2, 9.0)  # away from it: nothing to join
    assert api.construction_action(d, site) is None


def test_a_large_cow_is_a_target_only_with_enough_of_the_team_around_it():
    cow = Mob(7, "large_cow", "passive", 2, 0, 0, -2, 2, 9.0, coord=2, agents_required=3)
    d = _obs(["..#..", ".....", "..@.."])
    d.mobs.append(cow)
    d.teammates.append(Teammate(1, "miner", 3, 2, 1, 0, 1, 9.0))
    assert api.large_passive_target(d) is None  # two of the three it needs
    d.teammates.append(Teammate(2, "forager", 1, 1, -1, -1, 1, 9.0))
    assert api.large_passive_target(d) == cow
    d.mobs[0] = Mob(7, "cow", "passive", 2, 0, 0, -2, 2, 3.0)  # an ordinary cow needs no team
    assert api.large_passive_target(d) is None
    d.mobs[0] = cow
    d.achievements = frozenset({"COORD_LARGE_PASSIVE_KILL"})  # nothing new for this agent
    assert api.large_passive_target(d) is None
