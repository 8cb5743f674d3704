"""The mining handover on purpose (docs/alem.md "The mining handover, every episode"; issue 23, item 2)."""

from __future__ import annotations

from alem_testlib import place_pair
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, RIGHT, UP
from compass.games.alem.obs import CoordSite, Handover, Teammate

# A 9x5 field: 'T' trees. Two trees are handover sites (window 4) in the agents' memories.
FIELD = [
    ".........",
    ".T.....T.",
    ".........",
    ".........",
    ".........",
]
LEFT_SITE, RIGHT_SITE = (1, 1), (7, 1)


def _agent(me: int, positions: dict[int, tuple[int, int]], have=frozenset(), sites=(LEFT_SITE, RIGHT_SITE)):
    """Agent ``me``'s observation of the field with the team at ``positions`` (id -> (x, y)); no pickaxe."""
    d = _obs(FIELD, agent_id=me, achievements=frozenset(have))
    d.position = positions[me]
    d.facing, d.facing_xy = "north", (positions[me][0], positions[me][1] - 1)
    d.inventory["pickaxe"] = 0
    for x, y in sites:
        d.memory.coord[0, y, x] = -4
    for i, (x, y) in positions.items():
        if i != me:
            dx, dy = x - d.position[0], y - d.position[1]
            d.teammates.append(Teammate(i, "miner", x, y, dx, dy, abs(dx) + abs(dy), 9.0))
    return d


def test_remembered_and_seen_handover_sites_count_whatever_the_pickaxe():
    d = _agent(0, {0: (4, 3), 1: (5, 3)})
    assert [(s.x, s.y, s.kind, s.window) for s in api.handover_sites(d)] == [
        (1, 1, "handover", 4),
        (7, 1, "handover", 4),
    ]
    # A construction handover and a sync tile are not mining handover sites.
    d.memory.coord[0, 1, 1] = 2
    d.coord_sites.append(
        CoordSite("construction_site", 4, 0, 0, -3, 3, "handover", window=4, construction=True)
    )
    assert [(s.x, s.y) for s in api.handover_sites(d)] == [(7, 1)]


def test_the_completer_picks_the_site_and_the_initiator_follows_its_partner_there():
    team = {0: (6, 3), 1: (5, 3), 2: (0, 4)}
    # Agents 0 and 1 are the closest pair; 1 completes and picks the right tree (summed distance 4+5).
    site, partner, completer = api.handover_plan(_agent(1, team))
    assert ((site.x, site.y), partner, completer) == (RIGHT_SITE, 0, True)
    # The initiator waits for its partner to stand by a site, and agent 2 is not in the pair.
    assert api.handover_plan(_agent(0, team)) is None and api.handover_plan(_agent(2, team)) is None
    there = {0: (6, 3), 1: (7, 2), 2: (0, 4)}
    site, partner, completer = api.handover_plan(_agent(0, there))
    assert ((site.x, site.y), partner, completer) == (RIGHT_SITE, 1, False)


def test_one_shot_a_completer_that_has_the_achievement_stops_and_so_does_its_initiator():
    team = {0: (6, 3), 1: (7, 2)}
    assert api.handover_plan(_agent(1, team, have={"HANDOVER_COMPLETE"})) is None
    # No site known within reach of both, nothing either.
    assert api.handover_plan(_agent(1, team, sites=())) is None
    assert api.handover_plan(_agent(1, team), reach=0) is None
    # A site out of the partner's view (5 columns, 4 rows from it) is not picked: it may not know it.
    far = {0: (0, 4), 1: (1, 3)}
    assert api.handover_plan(_agent(1, far), reach=12)[0].x == 1
    assert api.handover_plan(_agent(1, far, sites=(RIGHT_SITE,)), reach=12) is None


def test_the_step_walks_faces_starts_and_the_partner_completes():
    # The completer walks to its site, turns to face it, and waits there.
    assert api.handover_step(_agent(1, {0: (6, 4), 1: (7, 3)})) == UP
    d = _agent(1, {0: (6, 4), 1: (7, 2)})
    d.facing, d.facing_xy = "north", (7, 1)
    assert api.handover_step(d) == api.noop()
    # The initiator walks over, faces the tree and starts the handover only with its partner there.
    d = _agent(0, {0: (6, 1), 1: (7, 2)})
    assert api.handover_step(d) == RIGHT
    d.facing, d.facing_xy = "east", RIGHT_SITE
    assert api.handover_step(d) == api.do()
    d.handovers.append(Handover(7, 1, 1, 0, 4, initiator=0))
    assert api.handover_step(d) == api.noop()  # its own handover is pending: no second start
    # The completer, facing the pending handover, completes it.
    d = _agent(1, {0: (6, 1), 1: (7, 2)})
    d.facing, d.facing_xy = "north", (7, 1)
    d.handovers.append(Handover(7, 1, 0, -1, 4, initiator=0))
    assert api.handover_step(d) == api.do()


def test_a_real_handover_is_started_and_completed(alem_overworld):
    """The real game (the overworld at Hard): agents 0 and 1 stand two tiles from a mining handover
    site, without pickaxes, agent 2 far off; both follow ``handover_step``: agent 0 starts the
    handover, agent 1 completes it within its window and unlocks HANDOVER_COMPLETE and
    COORD_MINE_HANDOVER, and the tile stops being a coordination site."""
    import numpy as np

    from compass.games.alem.names import NOOP
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = alem_overworld(60, text=False)

    def handover_tiles(st):
        blocks = np.asarray(st.map[0])
        return (np.asarray(st.coordination_map[0]) < 0) & np.isin(
            blocks, [BLOCK_ID["tree"], BLOCK_ID["stone"]]
        )

    site, res = place_pair(env, handover_tiles, pickaxe=0, what="a mining handover tile")
    started = completed = None
    for _ in range(16):
        ds = [obs_data_from_view(v) for v in res.views]
        actions = [api.handover_step(d) if i < 2 else None for i, d in enumerate(ds)]
        res = env.step([NOOP if a is None else a for a in actions])
        if started is None and int(env.state.handover_setups) > 0:
            started = res.views[0].obs.step
        if "HANDOVER_COMPLETE" in res.views[1].obs.achievements:
            completed = res.views[1].obs.step
            break
    assert started is not None and completed is not None, (started, completed)
    assert completed - started <= 2  # the partner stood ready: completed on its next step
    assert {"HANDOVER_COMPLETE", "COORD_MINE_HANDOVER"} <= set(res.views[1].obs.achievements)
    assert (
        "HANDOVER_COMPLETE" not in res.views[0].obs.achievements
    )  # a mining handover pays the completer only
    assert int(env.state.coordination_map[0][site]) == 0
    assert site[::-1] not in [(s.x, s.y) for s in api.handover_sites(obs_data_from_view(res.views[1]))]


def test_walking_next_to_a_teammate_gives_way_every_other_step():
    # The completer (1) at (7, 4) walks north to (7, 3); the initiator (0) stands at (6, 3), next to
    # that tile, and may step onto it on the same step (alem then moves neither): on steps where
    # step + id is odd the completer waits.
    team = {0: (6, 3), 1: (7, 4)}
    d = _agent(1, team)
    d.step = 0
    assert api.handover_step(d) == api.noop()
    d.step = 1
    assert api.handover_step(d) == UP
    # With nobody next to the tile ahead it walks every step.
    d = _agent(1, {0: (3, 3), 1: (7, 4)})
    d.step = 0
    assert api.handover_step(d) == UP
