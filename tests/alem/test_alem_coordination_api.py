"""Coordination conventions: which sites an agent joins, by what it can earn there (issue 23, item 2)."""

from __future__ import annotations

from alem_testlib import add_sync_site
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, BUILD_ACTIONS, LEFT, RIGHT
from compass.games.alem.obs import CoordSite, Mob, Teammate
from compass.games.alem.skill_api.coordination import known_sites


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


# --------------------------------------------------------------------------- the leader's choice
def _mate(i: int, role: str, me: tuple[int, int], at: tuple[int, int], alive: bool = True) -> Teammate:
    dx, dy = at[0] - me[0], at[1] - me[1]
    return Teammate(i, role, at[0], at[1], dx, dy, abs(dx) + abs(dy), 9.0 if alive else 0.0, alive=alive)


def _agent(i: int, role: str, at: tuple[int, int], mates: list[tuple[int, str, tuple[int, int]]], sites):
    """Agent ``i`` at ``at`` on a 14x5 grass field, seeing ``sites``, with a wood pickaxe."""
    grid = ["." * 14 for _ in range(5)]
    row = grid[at[1]]
    grid[at[1]] = row[: at[0]] + "@" + row[at[0] + 1 :]
    d = _obs(grid, agent_id=i, role=role)
    d.inventory["pickaxe"] = 1
    d.coord_sites.extend(sites)
    d.teammates.extend(_mate(j, r, at, p) for j, r, p in mates)
    return d


def test_leader_and_follower_name_the_site_nearest_the_leader():
    # The leader (agent 0) stands at (2, 2) near site A; the follower (agent 1), five tiles east,
    # stands next to site B and sees both. team_site ranks from the leader's position, which both
    # know (the observation gives teammates' coordinates), so both name A.
    a, b = _site(3, 1), _site(7, 1)
    leader = _agent(0, "warrior", (2, 2), [(1, "miner", (7, 2))], [a, b])
    follower = _agent(1, "miner", (7, 2), [(0, "warrior", (2, 2))], [a, b])
    assert api.leader_position(follower) == (2, 2) == api.leader_position(leader)
    assert api.team_site(leader) == a
    assert api.team_site(follower) == a
    # A site only the follower sees, beyond the leader's view (reach 5), is nobody's target.
    far = _agent(1, "miner", (7, 2), [(0, "warrior", (2, 2))], [_site(9, 1)])
    assert api.team_site(far) is None
    assert api.team_site(far, reach=8) == _site(9, 1)
    # With the leader dead the lowest living id leads: the follower itself, and its nearest site.
    alone = _agent(1, "miner", (7, 2), [(2, "forager", (12, 4))], [a, b])
    alone.teammates.append(_mate(0, "warrior", (7, 2), (2, 2), alive=False))
    assert api.leader_position(alone) == (7, 2) and api.team_site(alone) == b
    # Another leader by id: the miner leads, and the warrior ranks sites from the miner.
    assert api.team_site(leader, lead=1) == b


def test_a_follower_out_of_the_leader_s_view_walks_back_and_the_leader_never_does():
    follower = _agent(1, "forager", (10, 2), [(0, "warrior", (2, 2))], [])
    assert api.cohesion_step(follower, radius=6) == LEFT  # 8 tiles east of the leader
    assert api.cohesion_step(follower, radius=8) is None  # within the leash: free to work
    leader = _agent(0, "warrior", (2, 2), [(1, "forager", (10, 2))], [])
    assert api.cohesion_step(leader, radius=6) is None
    orphan = _agent(1, "forager", (10, 2), [], [])
    orphan.teammates.append(_mate(0, "warrior", (10, 2), (2, 2), alive=False))
    assert api.cohesion_step(orphan, radius=6) is None  # a dead leader is not followed
    # Led by agent 2 (to the east), the same agent walks the other way.
    east = _agent(1, "forager", (4, 2), [(0, "warrior", (2, 2)), (2, "miner", (13, 2))], [])
    assert api.cohesion_step(east, radius=6, lead=2) == RIGHT


def test_a_follower_gathers_the_tree_near_the_leader_not_the_one_near_itself():
    grid = ["T............T", ".............."]
    d = _obs(grid, agent_id=1, role="miner", position=(10, 1), facing_xy=(10, 0))
    d.teammates.append(_mate(0, "warrior", (10, 1), (1, 1)))
    assert api.nearest(d, "tree") == (13, 0)  # its own nearest: 13 tiles from the leader
    assert api.nearest_on_leash(d, "tree", radius=6) == (0, 0)
    assert api.within_leash(d, (0, 0), 6) and not api.within_leash(d, (13, 0), 6)
    assert api.nearest_on_leash(d, "tree", radius=1) is None  # no tree that close to the leader
    lead = _obs(grid, agent_id=0, role="warrior", position=(10, 1), facing_xy=(10, 0))
    assert api.nearest_on_leash(lead, "tree", radius=1) == (13, 0)  # the leader gathers freely


def test_followers_join_the_site_the_leader_stands_by_even_when_it_pays_them_nothing_new():
    a, b = _site(3, 1), _site(7, 1)
    # The leader (warrior, no pickaxe) picks the stone site beside it as a helper ...
    leader = _agent(0, "warrior", (3, 2), [(1, "miner", (7, 2))], [a, b])
    leader.inventory["pickaxe"] = 0
    assert api.team_site(leader) is None  # it cannot mine stone: a site only as a helper
    assert api.shared_site(leader) == a
    # ... and the miner, standing next to B, goes to A: the site the leader stands by.
    follower = _agent(1, "miner", (7, 2), [(0, "warrior", (3, 2))], [a, b])
    assert api.team_site(follower) == a and api.shared_site(follower) == a
    # It joins even holding every achievement A pays: the team's score needs only the leader's.
    follower.achievements = frozenset({"COORD_2_AGENTS_HARD", "COORD_MINE_STONE_HARD"})
    assert api.coordination_target(follower) is None and api.shared_site(follower) == a
    # While the leader is not next to a site yet, followers have no target of their own.
    walking = _agent(1, "miner", (7, 2), [(0, "warrior", (2, 4))], [a, b])
    assert api.shared_site(walking) is None


def test_known_sites_are_the_seen_ones_then_the_remembered_ones_on_this_level():
    d = _obs(["@....", ".....", "..#.#", "....."])
    d.memory.coord[0, 2, 2] = 3  # a remembered 3-agent stone site ...
    add_sync_site(d, "stone", (2, 2), soft=True)  # ... also in view, as soft: the view wins
    d.memory.coord[0, 2, 4] = 2  # a remembered 2-agent site, not in view
    d.memory.blocks[0, 0, 4] = BLOCK_ID["construction_site"]
    d.memory.coord[0, 0, 4] = -4  # a remembered construction handover
    sites = known_sites(d, lambda s: s.kind == "sync")
    assert sorted(sites) == [(2, 2), (4, 2)]
    assert sites[(2, 2)].soft and sites[(2, 2)].required == 3
    assert not sites[(4, 2)].soft and sites[(4, 2)].required == 2 and sites[(4, 2)].dist == 6
    built = known_sites(d, lambda s: s.construction)
    assert list(built) == [(4, 0)] and built[(4, 0)].kind == "handover" and built[(4, 0)].window == 4
    # A memory last updated on another level says nothing about this one.
    d.memory.level = 1
    assert list(known_sites(d, lambda s: s.kind == "sync")) == [(2, 2)]
