"""The team's structures: a payer and a completer build a shelter at a handover site (issue 23, item 2)."""

from __future__ import annotations

import pytest
from alem_testlib import needs_alem
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, BUILD_ACTIONS, LEFT, NOOP, RIGHT, UP
from compass.games.alem.obs import CoordSite, Handover, Teammate

SITE = (3, 1)


def _field(at: tuple[int, int], role: str = "miner", agent_id: int = 0, window: int = -5, **kw):
    """A 7x4 grass field with a construction site at SITE (coordination value ``window``: < 0 a
    handover, > 0 a sync site for that many agents), remembered; the agent at ``at``, facing north."""
    grid = ["......." for _ in range(4)]
    grid[at[1]] = grid[at[1]][: at[0]] + "@" + grid[at[1]][at[0] + 1 :]
    d = _obs(grid, agent_id=agent_id, role=role, **kw)
    d.memory.blocks[0, SITE[1], SITE[0]] = BLOCK_ID["construction_site"]
    d.memory.coord[0, SITE[1], SITE[0]] = window
    d.legal_indices = [i for i in d.legal_indices if i not in BUILD_ACTIONS.values()]
    return d


def _mate(i: int, role: str, me: tuple[int, int], at: tuple[int, int]) -> Teammate:
    dx, dy = at[0] - me[0], at[1] - me[1]
    return Teammate(i, role, at[0], at[1], dx, dy, abs(dx) + abs(dy), 9.0)


def test_build_sites_come_from_memory_with_their_kind_nearest_first():
    d = _field((0, 3))
    d.memory.blocks[0, 3, 6] = BLOCK_ID["construction_site"]
    d.memory.coord[0, 3, 6] = 3  # a sync site for 3 agents, farther away
    assert [(s.x, s.y, s.kind, s.window) for s in api.build_sites(d)] == [(3, 1, "handover", 5)]
    got = api.build_sites(d, kinds=("handover", "sync"))
    assert [(s.x, s.y, s.kind, s.required) for s in got] == [(3, 1, "handover", 0), (6, 3, "sync", 3)]
    # A site turned into a structure is no site any more, and the structure counts as built.
    assert api.built_structures(d) == set()
    d.memory.blocks[0, SITE[1], SITE[0]] = BLOCK_ID["epic_shelter"]
    assert api.build_sites(d) == [] and api.built_structures(d) == {"shelter"}


def test_the_payer_walks_to_the_site_waits_for_a_teammate_then_builds():
    me = (1, 1)
    d = _field(me)
    d.teammates.append(_mate(1, "forager", me, (6, 3)))
    assert api.pay_step(d) is None  # nothing to pay with
    d.inventory.update(wood=10, stone=5)
    assert api.structure_to_pay(d) == "shelter"
    assert api.pay_step(d) == RIGHT  # toward the tile west of the site
    at = (2, 1)
    d = _field(
        at, facing="east", facing_xy=SITE, inventory={"wood": 10, "stone": 5, "pickaxe": 1, "sword": 0}
    )
    d.teammates.append(_mate(1, "forager", at, (6, 3)))
    assert api.pay_step(d) == NOOP  # next to it, facing it: wait for the completer
    d.teammates[0] = _mate(1, "forager", at, (4, 1))  # the completer next to it
    assert api.pay_step(d) == api.build("shelter")
    # No teammate within call of the site: the payer does not go (nobody could complete it).
    d.teammates[0] = _mate(1, "forager", at, (6, 3))
    assert api.pay_step(d, call=3) is None
    # A shelter already standing: the payer keeps its wood and stone.
    d.memory.blocks[0, 0, 0] = BLOCK_ID["epic_shelter"]
    assert api.structure_to_pay(d) is None and api.pay_step(d) is None


def test_the_payer_never_builds_alone_at_a_sync_site():
    at = (2, 1)
    inv = {"wood": 10, "stone": 5, "pickaxe": 1, "sword": 0}
    d = _field(at, window=2, facing="east", facing_xy=SITE, inventory=inv)
    d.teammates.append(_mate(1, "forager", at, (6, 3)))
    assert api.pay_step(d) is None  # handover sites only, by default
    assert api.pay_step(d, kinds=("sync",)) == NOOP  # waits for its second agent
    d.teammates[0] = _mate(1, "forager", at, (3, 2))
    assert api.pay_step(d, kinds=("sync",)) == api.build("shelter")
    # A soft sync site in view would build for the payer alone and pay nothing: never chosen.
    d.coord_sites.append(CoordSite("construction_site", *SITE, 1, 0, 1, "sync", 2, True, 0, True))
    assert api.pay_step(d, kinds=("sync",)) is None


def test_a_teammate_joins_the_payer_and_completes_the_handover():
    me = (5, 3)
    d = _field(me, role="forager", agent_id=1)
    assert api.help_build_step(d) is None  # nobody at the site
    d.teammates.append(_mate(0, "miner", me, (2, 1)))  # the payer, west of the site
    assert api.help_build_step(d) in (UP, LEFT)  # toward the free tiles east and south of it
    at = (4, 1)
    d = _field(at, role="forager", agent_id=1, facing="north", facing_xy=(4, 0))
    d.teammates.append(_mate(0, "miner", at, (2, 1)))
    assert api.help_build_step(d) is None  # next to it, but Build is not legal: nobody can pay
    d.legal_indices.append(BUILD_ACTIONS["shelter"])
    assert api.help_build_step(d) == LEFT  # turn to face the site
    d = _field(at, role="forager", agent_id=1, facing="west", facing_xy=SITE)
    d.teammates.append(_mate(0, "miner", at, (2, 1)))
    d.legal_indices.append(BUILD_ACTIONS["shelter"])
    assert api.help_build_step(d) == NOOP  # facing it: wait for the payer's Build
    # The payer built: the started handover is completed with the same structure.
    d.handovers.append(Handover(*SITE, -1, 0, 4, initiator=0, building="shelter"))
    assert api.help_build_step(d) == api.build("shelter")
    # Its own handover is not its to complete.
    d.handovers[0] = Handover(*SITE, -1, 0, 4, initiator=1, building="shelter")
    assert api.help_build_step(d) == NOOP
    # Too far for the steps left: nothing to complete, nobody waiting.
    d = _field((0, 3), role="forager", agent_id=1)
    d.handovers.append(Handover(*SITE, 3, -2, 2, initiator=0, building="shelter"))
    assert api.help_build_step(d) is None


@needs_alem
@pytest.mark.slow
def test_a_shelter_is_built_by_payer_and_completer_in_the_real_env():
    """Hard: a handover construction site between agents 0 (10 wood, 5 stone) and 1; agent 0
    follows pay_step, agent 1 help_build_step. The site becomes a shelter, agent 0 pays, and the
    completer (agent 1) unlocks COORD_BUILD_SHELTER."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from alem.alem_coop.constants import BlockType

    from compass.games.alem.env import make_alem
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = make_alem("hard", max_steps=100, text=False)
    env.reset(0)
    cp = env.checkpoint()
    st = cp["state"]
    row, col = (int(v) for v in st.player_position[0])
    grid = st.map
    for c in range(col, col + 5):  # plain grass: agent 0, a tile, the site, a tile, agent 1
        grid = grid.at[0, row, c].set(BlockType.GRASS.value)
    site = (row, col + 2)
    grid = grid.at[0, site[0], site[1]].set(BlockType.CONSTRUCTION_SITE.value)
    coord = st.coordination_map.at[0, site[0], site[1]].set(-4)  # a handover, 4-step window
    st = st.replace(
        map=grid,
        coordination_map=coord,
        player_level=jnp.asarray(0, dtype=st.player_level.dtype),
        player_position=st.player_position.at[1].set(jnp.array([row, col + 4], jnp.int32)),
        inventory=st.inventory.replace(
            wood=st.inventory.wood.at[0].set(10), stone=st.inventory.stone.at[0].set(5)
        ),
    )
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    views = env.step([NOOP, NOOP, NOOP]).views  # the restored views predate the edit
    wood, stone = int(env.state.inventory.wood[0]), int(env.state.inventory.stone[0])
    for _ in range(12):
        d0, d1 = (obs_data_from_view(v) for v in views[:2])
        res = env.step([api.pay_step(d0) or NOOP, api.help_build_step(d1) or NOOP, NOOP])
        views = res.views
        if "COORD_BUILD_SHELTER" in views[1].obs.achievements:
            break
    assert "COORD_BUILD_SHELTER" in views[1].obs.achievements
    assert "HANDOVER_COMPLETE" in views[0].obs.achievements
    assert int(env.state.map[0, site[0], site[1]]) == BlockType.EPIC_SHELTER.value
    assert (int(env.state.inventory.wood[0]), int(env.state.inventory.stone[0])) == (wood - 10, stone - 5)


def test_the_payer_asks_the_team_for_what_the_shelter_still_needs():
    me = (1, 1)
    d = _field(me)
    assert api.material_request(d) is None  # no teammate to give anything
    d.teammates.append(_mate(1, "forager", me, (6, 3)))
    assert api.material_request(d) == api.request("wood")
    d.inventory.update(wood=10)
    assert api.material_request(d) == api.request("stone")
    d.my_request = "stone"  # one request at a time: it lasts 10 steps
    assert api.material_request(d) is None
    d.my_request = None
    d.inventory.update(stone=5)
    assert api.material_request(d) is None  # all in hand: pay_step takes it from here
    assert api.material_request(d, "beacon") == api.request("iron")
    d.memory.blocks[0, 0, 0] = BLOCK_ID["epic_beacon"]  # a beacon stands: nothing to ask for it
    assert api.material_request(d, "beacon") is None


def test_at_a_sync_site_the_helper_builds_on_the_step_enough_agents_stand_there():
    at = (4, 1)
    d = _field(at, role="forager", agent_id=1, window=3, facing="west", facing_xy=SITE)
    d.legal_indices.append(BUILD_ACTIONS["shelter"])
    d.teammates.append(_mate(0, "miner", at, (2, 1)))  # the payer, west of the site
    assert api.help_build_step(d, kinds=("sync",)) == NOOP  # two of the three it needs
    d.teammates.append(_mate(2, "warrior", at, (3, 2)))
    assert api.help_build_step(d, kinds=("sync",)) == api.build("shelter")


def test_a_giver_keeps_the_wood_its_own_tools_still_need():
    d = _field((1, 1), role="forager", inventory={"wood": 6, "stone": 0, "pickaxe": 0, "sword": 0})
    assert api.wood_reserve(d) == 6 and api.spare_wood(d) == 0  # six tools to make, 1 wood each
    d.inventory.update(wood=4, pickaxe=2, sword=1)  # stone pickaxe and wood sword made
    assert api.wood_reserve(d) == 3 and api.spare_wood(d) == 1
    assert api.wood_reserve(d, tiers=2) == 1 and api.spare_wood(d, tiers=2) == 3  # iron tools not counted
    d.inventory.update(pickaxe=3, sword=3)
    assert api.wood_reserve(d) == 0 and api.spare_wood(d) == 4
    d.inventory.update(pickaxe=1, sword=0, wood=2)
    assert api.spare_wood(d) == 0  # never negative


def test_pooling_waits_for_tools_food_and_daylight():
    tools = {"wood": 3, "stone": 5, "pickaxe": 2, "sword": 1}
    d = _field((1, 1), inventory=tools, step=30)
    d.teammates.append(_mate(1, "forager", (1, 1), (6, 3)))
    assert api.pool_ready(d)
    assert not api.pool_ready(_field((1, 1), inventory=tools | {"pickaxe": 1}, step=30))  # no stone pickaxe
    assert not api.pool_ready(_field((1, 1), inventory=tools | {"sword": 0}, step=30))
    hungry = {"health": 9, "food": 5, "drink": 9, "energy": 9}
    assert not api.pool_ready(_field((1, 1), inventory=tools, step=30, status=hungry))
    assert api.pool_ready(_field((1, 1), inventory=tools, step=30, status=hungry), fed=4)
    # The 40 steps before dusk (120 of the 300-step day), on any day, are for going to shelter.
    assert not api.pool_ready(_field((1, 1), inventory=tools, step=300 + 85))
    assert api.pool_ready(_field((1, 1), inventory=tools, step=300 + 85), margin=30)
    assert api.pool_ready(_field((1, 1), inventory=tools, step=300 + 79))
    # A teammate asking for food or drink comes first.
    d.teammates[0] = Teammate(1, "forager", 6, 3, 5, 2, 7, 9.0, request="drink")
    assert not api.pool_ready(d)
    assert api.pool_ready(d, team=False)
    d.teammates[0] = Teammate(1, "forager", 6, 3, 5, 2, 7, 9.0, request="wood")
    assert api.pool_ready(d)
