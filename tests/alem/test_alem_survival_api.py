"""The team's survival helpers (compass.games.alem.skill_api.survival) on tiny hand-drawn maps."""

from __future__ import annotations

from alem_testlib import LADDER_DOWN
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import (
    BLOCK_ID,
    DESCEND,
    DO,
    DOWN,
    LEFT,
    NOOP,
    PLACE_ACTIONS,
    RIGHT,
    SLEEP,
    UP,
)
from compass.games.alem.obs import Mob, Teammate

STONE = PLACE_ACTIONS["stone"]
PLANT = PLACE_ACTIONS["plant"]


def _inv(**kw) -> dict:
    return {"wood": 0, "stone": 0, "pickaxe": 0, "sword": 0, "sapling": 0} | kw


def test_shelter_time_follows_the_day():
    assert not api.shelter_time(_obs(["@"], step=100))
    assert api.shelter_time(_obs(["@"], step=300 + 150))
    assert not api.shelter_time(_obs(["@"], step=600 + 290))
    # A window that wraps past midnight.
    assert api.shelter_time(_obs(["@"], step=10), dusk=250, dawn=20)
    assert api.time_of_day(_obs(["@"], step=905)) == 5


def test_bunker_seals_a_known_corridor_step_by_step():
    grid = ["#####", "#...#", "###.#", "###.#", "##.@.", "....."]  # dead end (1,1)-(2,1), entrance (3,1)
    inv = _inv(stone=2)
    far = _obs(grid, inventory=inv)
    assert api.shelter_plan(far) == ("seal", ((1, 1), (2, 1), (3, 1)))
    assert api.bunker_step(far) == UP  # toward the corridor
    inner = _obs(["#####", "#@..#", "###.#", "###.#", "##...", "....."], inventory=inv)
    assert api.bunker_step(inner) == RIGHT  # step back out: now facing the entrance
    outer = _obs(
        ["#####", "#.@.#", "###.#", "###.#", "##...", "....."], inventory=inv, facing="east", facing_xy=(3, 1)
    )
    assert api.bunker_step(outer) == STONE
    # Without stone there is nothing to seal with, and no pickaxe to dig: no plan.
    assert api.bunker_step(_obs(grid, inventory=_inv())) is None


def test_bunker_sleeps_when_sealed_and_waits_when_rested():
    sealed = _obs(["####", "#@.#", "####"], status={"health": 9, "food": 9, "drink": 9, "energy": 3})
    assert api.bunker_step(sealed) == SLEEP
    rested = _obs(["####", "#@.#", "####"])
    assert api.bunker_step(rested) == NOOP


def test_bunker_digs_into_stone_with_a_pickaxe():
    # Open ground row 3; a stone mass above it: dig north from (2, 3) into (2, 2) then (2, 1).
    grid = ["#####", "#####", "#####", "..@..", "....."]
    d = _obs(grid, inventory=_inv(pickaxe=1, stone=1), facing="north", facing_xy=(2, 2), facing_block="stone")
    kind, (stand, first, second) = api.shelter_plan(d)
    assert kind == "dig" and stand == (2, 3) and first == (2, 2) and second == (2, 1)
    assert api.bunker_step(d) == DO  # facing the first stone: mine it


def test_shelter_plan_is_stable_around_a_fixed_anchor():
    # Two corridors; the agent stands nearer the east one, the anchor sits by the west one.
    grid = ["#########", "#.#####.#", "#.#####.#", "#...@...#", "#########"]
    d = _obs(grid, inventory=_inv(stone=1))
    assert api.shelter_plan(d)[1][0] in ((1, 1), (7, 1))
    assert api.shelter_plan(d, anchor=(1, 3))[1][0] == (1, 1)
    assert api.shelter_plan(d, anchor=(7, 3))[1][0] == (7, 1)


def test_a_corridor_a_teammate_stands_in_is_taken():
    # Both agents rank corridors around the same base: the second must not wait at the first's door.
    grid = ["#########", "#.#####.#", "#.#####.#", "#...@...#", "#########"]
    mate = Teammate(1, "miner", 1, 2, -3, -1, 4, 9.0)  # in the west corridor's outer tile
    d = _obs(grid, inventory=_inv(stone=1), teammates=[mate])
    assert api.shelter_plan(d, anchor=(1, 3), skip_taken=True)[1][0] == (7, 1)
    assert api.bunker_step(d, (1, 3), skip_taken=True) == RIGHT
    assert api.rest_step(d, (1, 3)) == RIGHT  # rest_step skips taken corridors by default
    assert api.rest_step(d, (1, 3), skip_taken=False) == LEFT
    # The default (what alem_role_policy plays) still ranks the taken corridor first.
    assert api.shelter_plan(d, anchor=(1, 3))[1][0] == (1, 1)


def test_a_teammate_in_the_corridor_mouth_is_no_wall_with_walls_only():
    # The agent in a corridor's inner tile, a teammate on the outer tile: the teammate will walk away,
    # so only ``walls_only`` says the agent is not yet sealed in (and must not sleep there).
    mate = Teammate(1, "miner", 2, 1, 1, 0, 1, 9.0)
    tired = {"health": 9, "food": 9, "drink": 9, "energy": 3}
    d = _obs(
        ["#####", "#@..#", "###.#", "###.#", "#####"], teammates=[mate], status=tired, inventory=_inv(stone=1)
    )
    assert api.enclosed(d) and not api.enclosed(d, walls_only=True)
    assert api.bunker_step(d) == SLEEP  # the default (what main plays) sleeps behind the teammate
    assert api.bunker_step(d, walls_only=True) == RIGHT  # steps back toward the entrance to seal it
    assert api.rest_step(d, walls_only=True) is None  # taken corridor, none other in reach: caller decides
    # Stone walls alone still count.
    sealed = _obs(["####", "#@.#", "####"], status=tired)
    assert api.enclosed(sealed, walls_only=True) and api.bunker_step(sealed, walls_only=True) == SLEEP


def test_rest_step_seals_in_nearby_not_at_the_far_base():
    # Two dead-end corridors: the west one by the base (anchor), the east one by the exhausted agent.
    grid = [
        "#####################",
        "#.#################.#",
        "#.#################.#",
        "#.................@.#",
    ]
    tired = {"health": 9, "food": 9, "drink": 9, "energy": 0}
    d = _obs(grid + ["#" * 21], inventory=_inv(stone=1), status=tired)
    assert api.bunker_step(d, (1, 3)) == LEFT  # the base's corridor, 19 tiles away
    assert api.rest_step(d, (1, 3)) == RIGHT  # the corridor 3 tiles away
    # The base's corridor when it is within reach.
    near_base = _obs(["#####", "#.###", "#.###", "#..@.", "#####"], inventory=_inv(stone=1), status=tired)
    assert api.rest_step(near_base, (1, 3)) == LEFT
    # Only the far corridor: nothing within reach, so the caller decides (sleep or stay awake).
    west_only = [row[:19] + "#" + row[20:] for row in grid[:3]] + [grid[3]]
    far = _obs(west_only + ["." * 21], inventory=_inv(stone=1), status=tired)
    assert api.bunker_step(far, (1, 3)) == LEFT
    assert api.rest_step(far, (1, 3)) is None
    # Walled in: sleep until rested.
    assert api.rest_step(_obs(["####", "#@.#", "####"], status=tired)) == SLEEP


def test_base_anchor_is_the_table_nearest_the_centre():
    d = _obs(["@..", "..."])
    assert api.base_anchor(d) == d.position
    d.memory.blocks[0, 1, 2] = BLOCK_ID["crafting_table"]
    assert api.base_anchor(d) == (2, 1)


def test_stone_needed():
    assert api.stone_needed(_obs(["@"], inventory=_inv(pickaxe=1, stone=1)), reserve=3)
    assert not api.stone_needed(_obs(["@"], inventory=_inv(pickaxe=1, stone=3)), reserve=3)
    assert not api.stone_needed(_obs(["@"], inventory=_inv(stone=0)), reserve=3)  # cannot mine


def test_escort_hits_what_threatens_the_ward_and_follows_it():
    ward = Teammate(1, "forager", 4, 2, 4, 0, 4, 9.0)
    zombie = Mob(200, "zombie", "melee", 1, 2, 1, 0, 1, 5.0)
    d = _obs(["......", "@.....", "......"], teammates=[ward], mobs=[zombie])
    # The ward is 4 away: a zombie near the agent but 3 from the ward is not the escort's business.
    assert api.escort_step(d, 1) in (RIGHT, DOWN)
    near_ward = Mob(201, "zombie", "melee", 4, 1, 4, 0, 4, 5.0)
    d2 = _obs(["......", "@.....", "......"], teammates=[ward], mobs=[near_ward])
    assert api.escort_step(d2, 1) == RIGHT  # toward the zombie next to the ward
    close = _obs(["......", "...@..", "......"], teammates=[ward])
    assert api.escort_step(close, 1) is None  # within reach, nothing to hit
    assert api.escort_step(close, 2) is None  # no such teammate


def test_farm_plants_by_the_base_and_eats_ripe_plants():
    d = _obs(["...", ".@.", "..."], inventory=_inv(sapling=1))
    assert api.farm_step(d, anchor=(1, 1)) == PLANT  # facing grass with a sapling
    assert api.farm_step(d, anchor=(40, 40)) is None  # too far from the base
    d.memory.blocks[0, 1, 2] = BLOCK_ID["ripe_plant"]
    hungry = _obs(["...", ".@.", "..."], status={"health": 9, "food": 3, "drink": 9, "energy": 9})
    hungry.memory.blocks[0, 1, 2] = BLOCK_ID["ripe_plant"]
    assert api.farm_step(hungry, anchor=(1, 1)) == RIGHT  # turn to the plant, then Do


def test_descend_step_walks_to_the_ladder_on_a_cleared_level():
    d = _obs(["@..", "..."])
    assert api.descend_step(d) is None  # no ladder known
    d.memory.items[0, 0, 2] = LADDER_DOWN
    assert api.descend_step(d) == RIGHT
    on = _obs([".@"])
    on.memory.items[0, 0, 1] = LADDER_DOWN
    assert api.descend_step(on) == DESCEND
    uncleared = _obs([".@"], level_cleared=False)
    uncleared.memory.items[0, 0, 1] = LADDER_DOWN
    assert api.descend_step(uncleared) is None


def test_a_synthesized_skill_shelters_through_the_sandbox():
    """The ALEM skill the scripted VLM synthesizes (tests/planner/scripted.py) calls the survival API;
    run through the real sandbox at night in front of a corridor, it seals itself in."""
    import re

    from compass.core.types import AgentView, OwnUnit
    from compass.sandbox import SkillExecutor, compile_skill
    from tests.planner.scripted import FAULTY_WHOLE, WHOLE_SKILL_NAME

    code = FAULTY_WHOLE.format(fail_at=10**9)
    assert re.search(r"bunker_step\(d, base\)", code) and "shelter_time(d)" in code
    skill = compile_skill(code, WHOLE_SKILL_NAME, "alem")
    grid = ["#####", "#.@.#", "###.#", "###.#", "##...", "....."]
    d = _obs(grid, step=450, inventory=_inv(stone=2), facing="east", facing_xy=(3, 1))
    own = OwnUnit("miner", 2.0, 1.0, 9.0, 5.0, 1.0, 0, 48.0, 48.0)
    view = AgentView(0, "alem", 450, True, own, (), tuple(range(56)), "", obs=d)
    result = SkillExecutor("compass.games.alem.skill_api", seed=0).run(skill, view)
    assert result.error is None and result.action == STONE
    day = AgentView(0, "alem", 60, True, own, (), tuple(range(56)), "", obs=_obs(grid, step=60))
    assert SkillExecutor("compass.games.alem.skill_api", seed=0).run(skill, day).action != STONE


def test_nearest_solo_skips_coordination_tiles():
    d = _obs([".@T..T"])
    d.memory.coord[0, 0, 2] = 3  # the adjacent tree needs 3 agents at once
    assert api.nearest(d, "tree") == (2, 0)
    assert api.nearest(d, "tree", solo=True) == (5, 0)


def test_sow_step_gathers_saplings_and_plants_them_by_the_base():
    grass = ["." * 12 for _ in range(7)]
    base = (1, 1)  # the table: its neighbours stay free
    facing_plot = dict(facing="east", facing_xy=(4, 1))
    # Facing grass 3 tiles from the base: Do to gather a sapling, then plant it there.
    assert api.sow_step(_obs(["..." + "@" + "." * 8] + grass[1:], **facing_plot), base) == DO
    d = _obs(["..." + "@" + "." * 8] + grass[1:], inventory=_inv(sapling=1), **facing_plot)
    assert api.sow_step(d, base) == PLANT
    # Facing a tile next to the table: not a plot; it steps so that it faces one instead.
    by_table = _obs(
        [".@" + "." * 10] + grass[1:], inventory=_inv(sapling=1), facing="south", facing_xy=(1, 1)
    )
    assert api.sow_step(by_table, (1, 2)) not in (PLANT, DO, None)
    # Far from the base it walks back first.
    far = _obs(
        ["." * 10 + "@" + "."] + grass[1:], inventory=_inv(sapling=1), facing="east", facing_xy=(11, 0)
    )
    assert api.sow_step(far, base) in (LEFT, DOWN)  # toward (1, 1)
    # A full farm (10 plants by the base) needs nothing more.
    full = _obs(["..." + "@" + "." * 8] + grass[1:], inventory=_inv(sapling=1), **facing_plot)
    for i in range(10):
        full.memory.blocks[0, 3 + i // 5, i % 5] = BLOCK_ID["plant"]
    assert api.sow_step(full, base) is None
    assert api.sow_step(full, base, plants=11) == PLANT


def test_team_bunker_miner_digs_waits_for_the_team_then_seals():
    # A stone mass above open ground: entrance (3, 4), c1-c3 up column 3, pockets (2, 2) and (4, 2).
    solid = ["#######", "#######", "#######", "#######", "...@...", "......."]
    pickaxe = dict(inventory=_inv(pickaxe=1, stone=2), role="miner")
    d = _obs(solid, facing="north", facing_xy=(3, 3), facing_block="stone", **pickaxe)
    assert api.team_room(d) == ((3, 4), (3, 3), (3, 2), (3, 1), (2, 2), (4, 2))
    assert api.team_bunker_step(d, (3, 4)) == DO  # mine c1
    assert (
        api.team_bunker_step(_obs(solid, inventory=_inv(stone=2), role="miner"), (3, 4)) is None
    )  # no pickaxe
    # Digging yields the stone that seals the room: a miner without stone still digs.
    no_stone = _obs(
        solid, facing="north", facing_xy=(3, 3), facing_block="stone", role="miner", inventory=_inv(pickaxe=1)
    )
    assert api.team_bunker_step(no_stone, (3, 4)) == DO
    # Half dug, a teammate waiting in the doorway: that is no seal, so the miner digs on (a pocket)
    # instead of going to sleep with the room open.
    half = ["#######", "#######", "#######", "###.###", ".......", "......."]
    half = [r if i != 2 else "###@###" for i, r in enumerate(half)]
    door = [Teammate(1, "forager", 3, 4, 0, 2, 2, 9.0)]
    tired = {"health": 9, "food": 9, "drink": 9, "energy": 3}
    dig_on = _obs(half, teammates=door, status=tired, facing="north", facing_xy=(3, 1), **pickaxe)
    assert api.team_bunker_step(dig_on, (3, 4)) not in (SLEEP, NOOP, None)
    dug = ["#######", "###.###", "##...##", "###.###", ".......", "......."]
    out = [Teammate(1, "forager", 3, 5, 0, 4, 4, 9.0), Teammate(2, "warrior", 4, 5, 1, 4, 5, 9.0)]
    inside = [Teammate(1, "forager", 2, 2, -1, 1, 2, 9.0), Teammate(2, "warrior", 4, 2, 1, 1, 2, 9.0)]
    at_back = [row.replace("###.###", "###@###", 1) if i == 1 else row for i, row in enumerate(dug)]
    # At the back of the room it waits while a teammate is still outside, then steps back to seal.
    assert api.team_bunker_step(_obs(at_back, teammates=out, step=100, **pickaxe), (3, 4)) == NOOP
    assert api.team_bunker_step(_obs(at_back, teammates=inside, step=100, **pickaxe), (3, 4)) == DOWN
    # ... and seals anyway once the day reaches seal_by, so laggards do not keep it open all night.
    assert api.team_bunker_step(_obs(at_back, teammates=out, step=150, **pickaxe), (3, 4)) == DOWN
    at_c1 = [r if i != 3 else "###@###" for i, r in enumerate(dug)]
    facing_out = dict(facing="south", facing_xy=(3, 4))
    assert (
        api.team_bunker_step(_obs(at_c1, teammates=inside, step=100, **facing_out, **pickaxe), (3, 4))
        == STONE
    )
    sealed = [r if i != 4 else "...#..." for i, r in enumerate(at_c1)]
    assert api.team_bunker_step(_obs(sealed, teammates=inside, status=tired, **pickaxe), (3, 4)) == SLEEP


def test_team_bunker_others_walk_into_their_pocket_once_the_miner_waits_at_the_back():
    dug = ["#######", "###.###", "##...##", "###.###", "...@...", "......."]
    miner_back = [Teammate(2, "miner", 3, 1, 0, -3, 3, 9.0)]
    forager = _obs(dug, role="forager", teammates=miner_back)
    assert api.team_bunker_step(forager) == UP  # into c1, on the way to the west pocket (2, 2)
    at_c2 = [r if i != 2 else "##.@.##" for i, r in enumerate(dug[:4])] + ["......."] * 2
    assert api.team_bunker_step(_obs(at_c2, role="forager", teammates=miner_back)) == LEFT
    assert api.team_bunker_step(_obs(at_c2, role="warrior", teammates=miner_back)) == RIGHT
    in_pocket = [r if i != 2 else "##@..##" for i, r in enumerate(dug[:4])] + ["......."] * 2
    assert api.team_bunker_step(_obs(in_pocket, role="forager", teammates=miner_back)) == NOOP
    # The miner still digging on c2: wait at the door rather than wander off.
    digging = [Teammate(2, "miner", 3, 2, 0, -1, 1, 9.0)]
    half = ["#######", "#######", "###.###", "###.###", ".......", "......."]
    assert (
        api.team_bunker_step(
            _obs([r if i != 3 else "###@###" for i, r in enumerate(half)], role="forager", teammates=digging)
        )
        == NOOP
    )
    # The miner elsewhere (still digging, or not in a room): no team bunker to walk to yet.
    assert (
        api.team_bunker_step(_obs(dug, role="forager", teammates=[Teammate(2, "miner", 6, 5, 3, 1, 4, 9.0)]))
        is None
    )


# A walled room by the base (ring_room): door (3, 5), c1 (3, 4), c2 (3, 3), pockets (2, 3) and
# (4, 3); its seven ring tiles are stone here, so only the door is left to seal.
_WALLED = [".......", ".......", "..###..", ".#...#.", "..#.#..", ".......", "......."]
_ROOM = ((3, 5), (3, 4), (3, 3), (2, 3), (4, 3))
_RING = {(2, 4), (4, 4), (3, 2), (1, 3), (5, 3), (2, 2), (4, 2)}


def _at(grid: list[str], xy: tuple[int, int]) -> list[str]:
    rows = [list(r) for r in grid]
    rows[xy[1]][xy[0]] = "@"
    return ["".join(r) for r in rows]


def _without(grid: list[str], xy: tuple[int, int]) -> list[str]:
    rows = [list(r) for r in grid]
    rows[xy[1]][xy[0]] = "."
    return ["".join(r) for r in rows]


def test_ring_room_prefers_the_site_needing_fewest_stones():
    d = _obs(_at(_WALLED, (3, 6)), role="miner")
    room = api.ring_room(d, (3, 5))
    assert room[:5] == _ROOM and set(room[5]) == _RING
    assert api.ring_room_stones(d, (3, 5)) == 1  # the door only
    # One wall missing: the same half-built room still wins over open ground, and needs 2 stones.
    half = _without(_WALLED, (4, 4))
    assert api.ring_room(_obs(_at(half, (3, 6))), (3, 5))[:5] == _ROOM
    assert api.ring_room_stones(_obs(_at(half, (3, 6))), (3, 5)) == 2
    # On open ground any site needs its seven walls and the door (the map's edge is a wall too).
    assert api.ring_room_stones(_obs(_at(["." * 20] * 20, (10, 10))), (10, 10)) == 8
    assert api.ring_room(_obs(["~~~", "~@~", "~~~"]), (1, 1)) is None  # no free ground for a room


def test_place_at_faces_a_free_tile_by_stepping_toward_it():
    grass = ["....."] * 5
    target = (2, 0)
    assert api.place_at(_obs(_at(grass, (2, 2))), target) == UP  # from two tiles away: step in
    facing = _obs(_at(grass, (2, 1)), facing="north", facing_xy=(2, 0))
    assert api.place_at(facing, target) == STONE
    # Beside it but facing away: step back out, to come back facing it.
    assert api.place_at(_obs(_at(grass, (2, 1)), facing="south", facing_xy=(2, 2)), target) == DOWN
    assert api.place_at(_obs(_at(grass, (2, 2))), (2, 4)) == DOWN
    assert api.place_at(_obs(_at(["..#..", ".....", "....."], (2, 2))), (2, 0)) is None  # not free


def test_ring_room_miner_walls_in_waits_for_the_team_then_seals():
    miner = dict(role="miner", inventory=_inv(pickaxe=1, stone=3))
    outside = [Teammate(1, "forager", 0, 6, -3, 0, 3, 9.0), Teammate(2, "warrior", 6, 6, 3, 0, 3, 9.0)]
    inside = [Teammate(1, "forager", 2, 3, -1, -3, 4, 9.0), Teammate(2, "warrior", 4, 3, 1, -3, 4, 9.0)]
    # A wall left to place, the miner facing it from the room: place stone.
    half = _without(_WALLED, (4, 4))
    facing_wall = _obs(_at(half, (3, 4)), facing="east", facing_xy=(4, 4), teammates=outside, **miner)
    assert api.ring_room_step(facing_wall, (3, 5)) == STONE
    # Too little stone for the wall and the door, and none known to mine: no room tonight.
    poor = dict(role="miner", inventory=_inv(pickaxe=1, stone=1))
    assert api.ring_room_step(_obs(_at(half, (3, 6)), teammates=outside, **poor), (3, 5)) is None
    # Walls up, the team still outside before seal_by: wait off the doorway.
    assert (
        api.ring_room_step(_obs(_at(_WALLED, (3, 6)), step=100, teammates=outside, **miner), (3, 5)) == NOOP
    )
    # Everyone in a pocket: walk in to c2, step back onto c1 (facing the door), seal it.
    assert api.ring_room_step(_obs(_at(_WALLED, (3, 6)), step=100, teammates=inside, **miner), (3, 5)) == UP
    at_c1 = _obs(_at(_WALLED, (3, 4)), step=100, teammates=inside, facing="north", facing_xy=(3, 3), **miner)
    assert api.ring_room_step(at_c1, (3, 5)) == UP
    assert api.ring_room_step(_obs(_at(_WALLED, (3, 3)), step=100, teammates=inside, **miner), (3, 5)) == DOWN
    back = _obs(_at(_WALLED, (3, 4)), step=100, teammates=inside, facing="south", facing_xy=(3, 5), **miner)
    assert api.ring_room_step(back, (3, 5)) == STONE
    # ... and seals anyway at seal_by, so a laggard does not keep the room open all night.
    late = _obs(_at(_WALLED, (3, 4)), step=170, teammates=outside, facing="south", facing_xy=(3, 5), **miner)
    assert api.ring_room_step(late, (3, 5)) == STONE
    sealed = [r if i != 5 else "...#..." for i, r in enumerate(_at(_WALLED, (3, 4)))]
    tired = {"health": 9, "food": 9, "drink": 9, "energy": 3}
    assert api.ring_room_step(_obs(sealed, teammates=inside, status=tired, **miner), (3, 5)) == SLEEP


def test_ring_room_others_wait_in_their_pocket():
    miner = [Teammate(2, "miner", 3, 6, 0, 3, 3, 9.0)]
    forager = _obs(_at(_WALLED, (3, 5)), role="forager", teammates=miner, step=130)
    assert api.ring_room_step(forager, (3, 5)) == UP  # through the door toward the west pocket
    at_c2 = dict(teammates=miner, step=130)
    assert api.ring_room_step(_obs(_at(_WALLED, (3, 3)), role="forager", **at_c2), (3, 5)) == LEFT
    assert api.ring_room_step(_obs(_at(_WALLED, (3, 3)), role="warrior", **at_c2), (3, 5)) == RIGHT
    assert api.ring_room_step(_obs(_at(_WALLED, (2, 3)), role="forager", **at_c2), (3, 5)) == NOOP
    # A wall still missing, or the miner away from the door: no waiting in an open room.
    half = _without(_WALLED, (4, 4))
    assert (
        api.ring_room_step(_obs(_at(half, (3, 6)), role="forager", teammates=miner, step=130), (3, 5)) is None
    )
    away = [Teammate(2, "miner", 10, 6, 7, 0, 7, 9.0)]
    assert (
        api.ring_room_step(_obs(_at(_WALLED, (3, 6)), role="forager", teammates=away, step=130), (3, 5))
        is None
    )
    # No living miner to seal it, or sealed without this agent: its own shelter instead.
    assert api.ring_room_step(_obs(_at(_WALLED, (3, 6)), role="forager", step=130), (3, 5)) is None
    assert (
        api.ring_room_step(_obs(_at(_WALLED, (3, 6)), role="forager", teammates=miner, step=185), (3, 5))
        is None
    )


def test_nearest_skips_avoided_tiles():
    d = _obs(["..#.#", "@...."])
    assert api.nearest(d, "stone") == (2, 0)
    assert api.nearest(d, "stone", avoid={(2, 0)}) == (4, 0)


def test_revive_step_walks_to_a_downed_teammate_faces_it_and_does():
    body = Teammate(1, "miner", 4, 1, 3, 0, 3, 0.0, alive=False)
    far = _obs(["......", ".@....", "......"], teammates=[body])
    assert api.downed_teammates(far) == [body]
    assert api.revive_step(far) == RIGHT  # toward the tile west of the body
    beside = _obs(["......", "...@..", "......"], teammates=[body])
    assert api.revive_step(beside) == RIGHT  # adjacent: turn to face it
    facing_it = _obs(["......", "...@..", "......"], teammates=[body], facing="east", facing_xy=(4, 1))
    assert api.revive_step(facing_it) == DO


def test_revive_step_leaves_the_living_the_far_and_the_unsafe_alone():
    alive = Teammate(1, "miner", 4, 1, 1, 0, 1, 9.0)
    facing_mate = _obs(["......", "...@..", "......"], teammates=[alive], facing="east", facing_xy=(4, 1))
    assert api.revive_step(facing_mate) is None  # a Do here would be friendly fire
    body = Teammate(2, "forager", 5, 1, 4, 0, 4, 0.0, alive=False)
    d = _obs(["......", ".@....", "......"], teammates=[body])
    assert api.revive_step(d, reach=3) is None
    zombie = Mob(7, "zombie", "melee", 1, 2, 0, 1, 1, 5.0)
    assert (
        api.revive_step(_obs(["......", ".@....", "......"], teammates=[body], mobs=[zombie]), safe_radius=2)
        is None
    )
    assert api.revive_step(_obs(["......", ".@....", "......"], teammates=[body], mobs=[zombie])) == RIGHT
    # Parsed from text, a dead teammate has no position: nothing to walk to.
    assert api.downed_teammates(_obs(["@"], teammates=[body], from_text=True)) == []


def test_revive_step_brings_a_teammate_back_in_the_real_env(downed_teammate):
    """Agent 2 lies dead 3 tiles east of agent 1 on cleared grass; agent 1 follows revive_step."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env, views = downed_teammate(50, east=3)
    for _ in range(8):
        act = api.revive_step(obs_data_from_view(views[1])) or NOOP
        res = env.step([NOOP, act, NOOP])
        views = res.views
        if any(res.info["revived"]):
            break
    assert res.info["revived"] == [False, False, True] and views[2].alive
    assert api.downed_teammates(obs_data_from_view(views[1])) == []


def _vitals(food: int = 9, drink: int = 9, health: int = 9, energy: int = 9) -> dict:
    return {"health": health, "food": food, "drink": drink, "energy": energy}


def test_refuel_step_asks_anyone_for_what_is_scarcest_then_sees_to_the_rest():
    mate = Teammate(1, "warrior", 4, 1, 3, 0, 3, 9.0)
    starved = _obs(
        ["......", ".@....", "......"], teammates=[mate], status=_vitals(food=0, drink=1, energy=0)
    )
    assert api.refuel_step(starved) == api.request("food")  # no forager alive: any teammate may give
    # Asked already: the thirst comes next, at the water three tiles west.
    asked = _obs(
        ["~.....", "~..@..", "~....."], teammates=[mate], status=_vitals(food=0, drink=1), my_request="food"
    )
    assert api.refuel_step(asked) == LEFT
    assert (
        api.refuel_step(
            _obs(["......", ".@....", "......"], teammates=[mate], status=_vitals(food=0), my_request="food")
        )
        is None
    )
    # Nobody left to ask, nothing near; or nothing that low.
    assert api.refuel_step(_obs(["......", ".@....", "......"], status=_vitals(food=0))) is None
    assert (
        api.refuel_step(
            _obs(["......", ".@....", "......"], teammates=[mate], status=_vitals(food=2, drink=2))
        )
        is None
    )
    assert api.refuel_step(
        _obs(["......", ".@....", "......"], teammates=[mate], status=_vitals(food=2)), critical=2
    ) == api.request("food")


def test_refuel_step_eats_and_drinks_what_is_near_first():
    water_far = _obs(["......", ".@...~", "......"], status=_vitals(drink=0))
    assert api.refuel_step(water_far) == RIGHT
    assert api.refuel_step(water_far, reach=3) is None  # too far, and nobody to ask
    cow = Mob(5, "cow", "passive", 3, 1, 2, 0, 2, 3.0)
    forager = _obs(["......", ".@....", "......"], role="forager", mobs=[cow], status=_vitals(food=0))
    assert api.refuel_step(forager) == RIGHT  # the forager hunts the cow
    warrior = _obs(["......", ".@....", "......"], mobs=[cow], status=_vitals(food=0))
    assert api.refuel_step(warrior) is None  # others rarely eat a cow on Hard: they ask instead


def test_feed_step_gives_a_weak_asking_teammate_from_a_small_buffer():
    from compass.games.alem.names import give_action

    legal = list(range(18)) + [give_action(0, 1), give_action(0, 2)]
    revived = Teammate(1, "miner", 4, 1, 3, 0, 3, 1.0, request="food")
    d = _obs(["......", ".@....", "......"], teammates=[revived], status=_vitals(food=4), legal_indices=legal)
    assert api.feed_step(d) is None  # 4 food: cannot spare it by default (keep=5)
    assert api.feed_step(d, keep=3) == give_action(0, 1)
    hurt = Teammate(1, "miner", 4, 1, 3, 0, 3, 3.0, request="food")
    assert api.feed_step(_obs(["@"], teammates=[hurt], status=_vitals(food=9), legal_indices=legal)) is None
    assert api.feed_step(
        _obs(["@"], teammates=[hurt], status=_vitals(food=9), legal_indices=legal), weak=3.0
    ) == give_action(0, 1)
    healthy = Teammate(1, "miner", 4, 1, 3, 0, 3, 9.0, request="food")
    assert (
        api.feed_step(_obs(["@"], teammates=[healthy], status=_vitals(food=9), legal_indices=legal)) is None
    )
    wood = Teammate(1, "miner", 4, 1, 3, 0, 3, 1.0, request="wood")
    assert api.feed_step(_obs(["@"], teammates=[wood], inventory=_inv(wood=9), legal_indices=legal)) is None
    # Two weak teammates: the weaker first; drink asked for is given from drink.
    thirsty = Teammate(2, "forager", 2, 1, 1, 0, 1, 0.5, request="drink")
    both = _obs(["@"], teammates=[revived, thirsty], status=_vitals(food=9, drink=9), legal_indices=legal)
    assert api.feed_step(both) == give_action(0, 2)
    dry = _obs(["@"], teammates=[revived, thirsty], status=_vitals(food=9, drink=2), legal_indices=legal)
    assert api.feed_step(dry) == give_action(0, 1)
    # Give is illegal (the request closed this step): nothing.
    assert api.feed_step(_obs(["@"], teammates=[revived], status=_vitals(food=9))) is None


def test_a_revived_agent_that_starved_is_fed_in_the_real_env(downed_teammate):
    """Agent 2 lies dead at 0 food 2 tiles east of agent 1; agent 1 revives it, agent 2 asks
    (``refuel_step``) and agent 1 gives (``feed_step``): agent 2's food rises within a few steps."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env, views = downed_teammate(60, east=2, player_food=0)
    food = []
    for _ in range(12):
        d1, d2 = obs_data_from_view(views[1]), obs_data_from_view(views[2])
        act1 = api.revive_step(d1) or api.feed_step(d1) or NOOP
        act2 = (api.refuel_step(d2) or NOOP) if views[2].alive else NOOP
        views = env.step([NOOP, act1, act2]).views
        food.append(obs_data_from_view(views[2]).food)
    assert views[2].alive and max(food) >= 2, food
