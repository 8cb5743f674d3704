"""Below the overworld (compass.games.alem.skill_api.below): chests, potions, the bow, the next
level and the way back up, on tiny hand-drawn level-1 maps; and, with the real game, a warrior on
level 1 that opens a chest, finds the bow and fires it."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from alem_testlib import LADDER_DOWN, LADDER_UP, load_skill, needs_alem
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import (
    ACTION_LABELS,
    ASCEND,
    BLOCK_ID,
    DESCEND,
    DO,
    DOWN,
    LEFT,
    MOVES,
    NOOP,
    RIGHT,
    UP,
)
from compass.games.alem.obs import AlemMemory, Mob, Seen, Teammate

SHOOT = ACTION_LABELS.index("Shoot Arrow")
DRINK_RED = ACTION_LABELS.index("Drink Potion Red")
DRINK_CYAN = ACTION_LABELS.index("Drink Potion Cyan")


_LEVEL1_TILES = {".": "path", "#": "wall", "C": "chest", "F": "fountain", "@": "path"}


def _level1(grid: list[str], **kw):
    """ObsData on level 1: '.' path, '#' wall, 'C' chest, 'F' fountain, '@' the agent (on path).
    Visible walls, chests and fountains are listed in ``blocks`` (as the adapter does), all tiles are
    remembered."""
    mem = AlemMemory(3)
    mem.level = 1
    pos, blocks = (0, 0), []
    for y, row in enumerate(grid):
        for x, ch in enumerate(row):
            mem.blocks[1, y, x] = BLOCK_ID[_LEVEL1_TILES[ch]]
            if ch == "@":
                pos = (x, y)
    for y, row in enumerate(grid):
        for x, ch in enumerate(row):
            if ch in "#CF":
                dx, dy = x - pos[0], y - pos[1]
                blocks.append(Seen(_LEVEL1_TILES[ch], x, y, dx, dy, abs(dx) + abs(dy)))
    base = _obs(["@"])
    kw = {"level": 1, "level_name": "Dungeon", "level_cleared": False, "memory": mem, "blocks": blocks} | kw
    kw.setdefault("position", pos)
    kw.setdefault("facing_xy", (pos[0], pos[1] - 1))
    return replace(base, **kw)


def _orc(x: int, y: int, me: tuple[int, int], kind: str = "melee") -> Mob:
    dx, dy = x - me[0], y - me[1]
    return Mob(
        200, "orc_soldier" if kind == "melee" else "orc_mage", kind, x, y, dx, dy, abs(dx) + abs(dy), 9.0
    )


def test_atomic_actions_are_the_harness_labels():
    assert ACTION_LABELS[api.shoot_arrow()] == "Shoot Arrow"
    assert [ACTION_LABELS[api.drink_potion(c)] for c in api.POTION_COLOURS] == [
        f"Drink Potion {c.title()}" for c in api.POTION_COLOURS
    ]
    with pytest.raises(ValueError, match="unknown potion 'purple'"):
        api.drink_potion("purple")


def test_chest_step_walks_to_the_nearest_chest_and_opens_it():
    d = _level1(["#####", "#@.C#", "#...#", "#####"])
    assert api.chest_step(d) == RIGHT
    facing = _level1(["#####", "#.@C#", "#####"], facing="east", facing_xy=(3, 1))
    assert api.chest_step(facing) == DO
    assert api.chest_step(d, reach=1) is None  # too far
    assert api.chest_step(_level1(["#####", "#@..#", "#####"])) is None  # none known


def test_potion_step_drinks_a_held_colour_once_and_only_when_safe():
    held = [NOOP, DRINK_CYAN]
    d = _level1(["@"], legal_indices=held)
    assert api.held_potions(d) == ["cyan"]
    assert api.potion_step(d) == DRINK_CYAN
    assert api.potion_step(_level1(["@"], legal_indices=[NOOP])) is None  # nothing held
    hurt = _level1(["@"], legal_indices=held, status={"health": 4, "food": 9, "drink": 9, "energy": 9})
    assert api.potion_step(hurt) is None  # a colour may take 3 health
    orc = _level1(["@.."], legal_indices=held, mobs=[_orc(2, 0, (0, 0))])
    assert api.potion_step(orc) is None  # a creature within 3 tiles
    done = _level1(["@"], legal_indices=held, achievements=frozenset({"DRINK_POTION"}))
    assert api.potion_step(done) is None and api.potion_step(done, again=True) == DRINK_CYAN
    both = _level1(["@"], legal_indices=[DRINK_RED, DRINK_CYAN])
    assert api.held_potions(both) == ["red", "cyan"]


def test_bow_aims_along_rows_and_columns_and_never_through_walls_or_teammates():
    me = (1, 2)
    orc = _orc(4, 2, me)
    d = _level1(["......", "......", ".@....", "......"], facing="east", facing_xy=(2, 2), mobs=[orc])
    assert api.bow_target(d) == orc
    assert api.bow_step(d) is None  # no bow: Shoot Arrow is not legal
    armed = replace(d, legal_indices=[NOOP, 1, 2, 3, 4, DO, SHOOT])
    assert api.bow_step(armed) == SHOOT
    turned = replace(armed, facing="north", facing_xy=(1, 1))
    assert api.bow_step(turned) == RIGHT  # turn (and step) toward it first
    walled = _level1(["......", "......", ".@.#..", "......"], mobs=[orc], legal_indices=[SHOOT])
    assert api.bow_target(walled) is None
    mate = Teammate(1, "miner", 3, 2, 2, 0, 2, 9.0)
    assert api.bow_target(replace(armed, teammates=[mate])) is None  # friendly fire is on
    diagonal = replace(armed, mobs=[_orc(3, 3, me)])
    assert api.bow_target(diagonal) is None
    north = replace(armed, mobs=[_orc(1, 0, me)])
    assert api.bow_step(north) == UP


def test_first_shot_only_when_no_teammate_stands_in_the_line():
    d = _level1(["...", ".@.", "..."], facing="south", facing_xy=(1, 2), legal_indices=[NOOP, SHOOT])
    assert api.bow_step(d) == SHOOT  # FIRE_BOW, nothing to aim at
    assert api.bow_step(d, first_shot=False) is None
    mate = Teammate(1, "forager", 1, 2, 0, 1, 1, 9.0)
    assert api.bow_step(replace(d, teammates=[mate])) is None
    assert api.bow_step(replace(d, achievements=frozenset({"FIRE_BOW"}))) is None


def test_arrows_for_a_bow_at_a_table_or_a_new_one():
    inv = {"wood": 3, "stone": 1, "pickaxe": 1, "sword": 1, "bow": 1, "arrows": 0}
    make_arrow = ACTION_LABELS.index("Make Arrow")
    place_table = ACTION_LABELS.index("Place Table")
    d = _level1(["...", ".@.", "..."], inventory=inv, facing_block="path", legal_indices=[NOOP, place_table])
    assert api.arrow_step(d) == place_table  # no table known: place one (2 of the 3 wood)
    assert api.arrow_step(replace(d, legal_indices=[NOOP, make_arrow])) == make_arrow  # next to one
    assert api.arrow_step(replace(d, inventory=inv | {"arrows": 2})) is None
    assert api.arrow_step(replace(d, inventory=inv | {"bow": 0})) is None
    assert api.arrow_step(replace(d, inventory=inv | {"wood": 2})) is None  # a table and an arrow cost 3
    assert api.arrow_step(replace(d, role="miner")) is None  # only the warrior may craft arrows
    far = _level1(["@....", "....."], inventory=inv, blocks=[Seen("crafting_table", 4, 1, 4, 1, 5)])
    far.memory.blocks[1, 1, 4] = BLOCK_ID["crafting_table"]
    assert api.arrow_step(far) in (RIGHT, DOWN)  # walk to the known table (both start a shortest path)


def test_only_a_forager_hunts_a_creature_new_to_it():
    snail = Mob(100, "snail", "passive", 3, 0, 3, 0, 3, 6.0)
    d = _level1(["@...."], role="forager", mobs=[snail])
    assert api.eat_new_creature_step(d) == RIGHT
    assert api.eat_new_creature_step(replace(d, role="warrior")) is None
    assert api.eat_new_creature_step(replace(d, achievements=frozenset({"EAT_SNAIL"}))) is None


def test_next_entry_needs_a_cleared_level_and_a_level_not_entered():
    d = _level1(["@.."])
    d.memory.items[1, 0, 2] = LADDER_DOWN
    assert api.next_entry_step(d) is None  # fewer than eight monsters killed here
    cleared = replace(d, level_cleared=True)
    assert api.next_entry_step(cleared) == RIGHT
    d.memory.items[1, 0, 0] = LADDER_DOWN
    assert api.next_entry_step(cleared) == DESCEND  # standing on one
    assert api.next_entry_step(replace(cleared, achievements=frozenset({"ENTER_GNOMISH_MINES"}))) is None
    assert api.next_entry_step(replace(_obs(["@"]), level_cleared=True)) is None  # overworld: the visit's job


def test_climb_back_when_hurt_or_alone():
    mate = Teammate(1, "miner", 5, 5, 5, 5, 10, 9.0)
    d = _level1(["@..."], teammates=[mate])
    d.memory.items[1, 0, 3] = LADDER_UP
    assert api.climb_back_step(d) is None  # healthy, with a teammate
    hurt = replace(d, status={"health": 3, "food": 9, "drink": 9, "energy": 9})
    assert api.climb_back_step(hurt) == RIGHT
    alone = replace(d, teammates=[replace(mate, alive=False)])
    assert api.climb_back_step(alone) == RIGHT
    assert api.climb_back_step(alone, alone=False) is None
    on = _level1(["@..."], teammates=[])
    on.memory.items[1, 0, 0] = LADDER_UP
    assert api.climb_back_step(on) == ASCEND
    assert api.climb_back_step(replace(_obs(["@"]), teammates=[])) is None  # the overworld


def _hp(d, **status):
    return replace(d, status={"health": 9, "food": 9, "drink": 9, "energy": 9} | status)


def test_in_fire_line_is_a_mages_row_or_column_up_to_a_wall():
    d = _level1(["#######", "#.....#", "#.....#", "#..@..#", "#.....#", "#######"])
    mage = _orc(3, 1, (3, 3), "ranged")
    d = replace(d, mobs=[mage])
    assert api.in_fire_line(d, (3, 3))  # two tiles below it, same column
    assert api.in_fire_line(d, (1, 1))  # same row
    assert not api.in_fire_line(d, (2, 3))  # off both lines
    assert not api.in_fire_line(d, (3, 3), reach=1)  # too far along the line for that reach
    walled = _level1(["#######", "#.....#", "#######", "#..@..#", "#######"])  # a wall between them
    assert not api.in_fire_line(replace(walled, mobs=[_orc(3, 1, (3, 3), "ranged")]), (3, 3))
    soldier = replace(d, mobs=[_orc(3, 1, (3, 3))])
    assert not api.in_fire_line(soldier, (3, 3))  # orc soldiers do not shoot


def test_dodge_fire_step_steps_off_the_line_toward_the_warrior():
    grid = ["#######", "#.....#", "#.....#", "#..@..#", "#.....#", "#######"]
    warrior = Teammate(1, "warrior", 5, 3, 2, 0, 2, 9.0)
    d = replace(_level1(grid), role="miner", teammates=[warrior], mobs=[_orc(3, 1, (3, 3), "ranged")])
    assert api.dodge_fire_step(d) == RIGHT  # east: off the column, next to the warrior's side
    west_mate = replace(warrior, x=1, dx=-2)
    assert api.dodge_fire_step(replace(d, teammates=[west_mate])) == ACTION_LABELS.index("Move West")
    # A soldier standing where the east step leads makes the west tile (not next to it) preferred.
    soldier = _orc(5, 3, (3, 3))
    assert api.dodge_fire_step(replace(d, mobs=[*d.mobs, soldier])) == ACTION_LABELS.index("Move West")
    adjacent = _orc(3, 4, (3, 3))
    assert api.dodge_fire_step(replace(d, mobs=[*d.mobs, adjacent])) is None  # hit it instead
    assert api.dodge_fire_step(replace(d, mobs=[_orc(2, 1, (3, 3), "ranged")])) is None  # out of line
    assert api.dodge_fire_step(replace(d, mobs=[_orc(3, 2, (3, 3), "ranged")])) is None  # hit the mage
    assert api.dodge_fire_step(d, max_health=8) is None  # healthy enough to stand
    assert api.dodge_fire_step(_hp(d, health=5), max_health=5) == RIGHT
    assert api.dodge_fire_step(replace(d, level=0)) is None
    corridor = _level1(["###", "#.#", "#.#", "#@#", "###"])
    corridor = replace(corridor, mobs=[_orc(1, 1, (1, 3), "ranged")])
    assert api.dodge_fire_step(corridor) is None  # no tile off the line


def test_dodge_fire_step_on_the_overworld_only_when_asked():
    # A skeleton shoots along its row or column as an orc mage does (alem's `_move_ranged_mob`).
    d = _obs([".....", ".....", "..@..", ".....", "....."], role="miner")
    skeleton = Mob(300, "skeleton", "ranged", 2, 0, 0, -2, 2, 3.0)
    d = replace(d, mobs=[skeleton])
    assert api.dodge_fire_step(d) is None  # the overworld is left alone by default
    assert api.dodge_fire_step(d, overworld=True) in (RIGHT, ACTION_LABELS.index("Move West"))
    walled = replace(_obs([".....", "#####", "..@..", ".....", "....."]), mobs=[skeleton])
    assert api.dodge_fire_step(walled, overworld=True) is None  # stone between: no line


def test_fountain_step_drinks_below_for_the_forager_or_the_parched():
    grid = ["#####", "#@.F#", "#####"]
    forager = replace(_hp(_level1(grid), drink=4), role="forager")
    assert api.fountain_step(forager) == RIGHT
    assert api.fountain_step(_hp(forager, drink=5)) is None  # not thirsty
    mate = Teammate(1, "forager", 1, 2, 0, 1, 1, 9.0)
    miner = replace(forager, role="miner", teammates=[mate])
    assert api.fountain_step(miner) is None  # the forager drinks (1 in 10 for others) and shares
    assert api.fountain_step(_hp(miner, drink=2)) == RIGHT  # parched: try anyway
    assert api.fountain_step(replace(miner, teammates=[])) == RIGHT  # no forager to ask
    assert api.fountain_step(replace(forager, mobs=[_orc(1, 2, (1, 1))])) is None  # an orc next to it
    assert api.fountain_step(replace(forager, mobs=[_orc(1, 2, (1, 1))]), safe_radius=0) == RIGHT
    assert api.fountain_step(replace(forager, level=0)) is None
    assert api.fountain_step(_hp(_level1(["#####", "#@..#", "#####"]), drink=1)) is None  # none known


def test_resupply_step_climbs_parched_or_starving_and_the_forager_drinks_at_a_fountain():
    grid = ["#######", "#F.@..#", "#######"]  # a fountain two tiles west, the ladder up two east
    warrior = _hp(_level1(grid))
    warrior.memory.items[1, 1, 5] = LADDER_UP
    assert not api.short_of_supplies(warrior)
    assert api.resupply_step(warrior) is None  # supplied: stay below
    assert api.resupply_step(_hp(warrior, drink=2)) is None  # it has asked the forager; not parched yet
    assert api.short_of_supplies(_hp(warrior, drink=1))
    assert api.resupply_step(_hp(warrior, drink=1)) == RIGHT  # up: it drinks at a fountain 1 time in 10
    assert api.resupply_step(_hp(warrior, food=1)) == RIGHT  # no food below for it
    assert api.resupply_step(_hp(warrior, drink=2), drink=2) == RIGHT
    forager = replace(warrior, role="forager")
    assert api.resupply_step(_hp(forager, drink=4)) is None
    assert api.resupply_step(_hp(forager, drink=3)) == LEFT  # the team's water carrier drinks at the fountain
    assert api.resupply_step(_hp(forager, drink=3), fountain_reach=1) == RIGHT  # too far: up
    assert api.resupply_step(_hp(forager, food=2)) == RIGHT  # hungry: up, even with a fountain near
    on = _hp(_level1(["@.."]), drink=0)
    on.memory.items[1, 0, 0] = LADDER_UP
    assert api.resupply_step(on) == ASCEND  # standing on it
    assert api.resupply_step(_hp(_level1(["@.."]), drink=0)) is None  # no ladder up known
    assert api.resupply_step(replace(_hp(warrior, drink=0), level=0)) is None  # the overworld


def test_regroup_step_brings_non_warriors_back_to_the_warrior():
    grid = ["#########", "#@......#", "#########"]
    warrior = Teammate(1, "warrior", 7, 1, 6, 0, 6, 9.0)
    d = replace(_level1(grid), role="forager", teammates=[warrior])
    assert api.regroup_step(d) == RIGHT
    assert api.regroup_step(d, radius=6) is None  # close enough
    assert api.regroup_step(replace(d, role="warrior", teammates=[replace(warrior, role="miner")])) is None
    assert api.regroup_step(replace(d, teammates=[replace(warrior, alive=False)])) is None
    assert api.regroup_step(replace(d, mobs=[_orc(2, 1, (1, 1))])) is None  # fight first
    assert api.regroup_step(replace(d, level=0)) is None


def test_mage_approach_keeps_off_the_lines_of_fire_until_next_to_the_mage():
    grid = [
        "#########",
        "#.......#",
        "#.......#",
        "#.......#",
        "#.......#",
        "#.......#",
        "#...@...#",
        "#########",
    ]
    mage_xy = (4, 1)

    def at(pos, **status):
        d = replace(_level1(grid), role="warrior", position=pos, mobs=[_orc(*mage_xy, pos, "ranged")])
        return _hp(d, **status)

    pos, walked = (4, 6), []
    for _ in range(12):  # walk the path the function gives, step by step
        d = at(pos)
        step = api.mage_approach_step(d)
        if step is None:
            break
        dx, dy = MOVES[step]
        pos = (pos[0] + dx, pos[1] + dy)
        walked.append(pos)
    assert abs(pos[0] - mage_xy[0]) + abs(pos[1] - mage_xy[1]) == 1  # arrived next to it ...
    lines = api.fire_lines(at((4, 6)))
    assert (4, 5) in lines and (2, 1) in lines and (3, 2) not in lines
    assert all(p not in lines for p in walked[:-1])  # ... and stood in no line of fire before that
    assert len(walked) <= 7  # a shortest such path (Manhattan distance 5, plus the sidestep)
    assert api.mage_approach_step(at((4, 6), health=5)) is None  # too hurt to close in
    assert api.mage_approach_step(at((4, 6)), reach=4) is None  # out of reach
    assert api.mage_approach_step(replace(at((4, 6)), level=0)) is None
    soldier_only = replace(at((4, 6)), mobs=[_orc(*mage_xy, (4, 6))])
    assert api.mage_approach_step(soldier_only) is None  # soldiers do not shoot: the usual fight
    beside = replace(at((4, 6)), mobs=[*at((4, 6)).mobs, _orc(4, 5, (4, 6))])
    assert api.mage_approach_step(beside) is None  # a creature adjacent: hit it first
    corridor = _hp(_level1(["###", "#.#", "#.#", "#.#", "#@#", "###"]))
    corridor = replace(corridor, mobs=[_orc(1, 1, (1, 4), "ranged")])
    assert api.mage_approach_step(corridor) is None  # the only way in is along its column


def test_cleared_level_step_goes_down_or_climbs_for_food():
    d = _hp(_level1(["@...."]))
    d.memory.items[1, 0, 4] = LADDER_DOWN
    assert api.cleared_level_step(d) is None  # not cleared: the ladders down stay shut
    cleared = replace(d, level_cleared=True)
    assert api.cleared_level_step(cleared) == RIGHT  # to the ladder down, at once
    up = _hp(replace(_level1(["@...."]), level_cleared=True))
    up.memory.items[1, 0, 4] = LADDER_UP
    assert api.cleared_level_step(up) is None  # no ladder down known, fed: stay (explore, fight)
    assert api.cleared_level_step(_hp(up, food=3)) == RIGHT  # hungry: to the ladder up
    assert api.cleared_level_step(_hp(up, drink=2)) == RIGHT
    up.memory.items[1, 0, 0] = LADDER_UP
    assert api.cleared_level_step(_hp(up, food=1)) == ASCEND  # standing on it
    entered = replace(cleared, achievements=frozenset({"ENTER_GNOMISH_MINES"}), status=_hp(up, food=1).status)
    entered.memory.items[1, 0, 0] = LADDER_UP
    assert api.cleared_level_step(entered) == ASCEND  # level 2 seen already: food comes first
    assert api.cleared_level_step(replace(_obs(["@"]), level_cleared=True)) is None  # the overworld


def test_leave_cleared_step_walks_round_bodies_and_snails_and_seeks_the_ladder():
    room = ["######", "#@...#", "#....#", "######"]
    body = Teammate(1, "miner", 2, 1, 1, 0, 1, 0.0, alive=False)
    d = replace(_hp(_level1(room)), level_cleared=True, teammates=[body])
    d.memory.items[1, 1, 4] = LADDER_DOWN
    assert api.cleared_level_step(d) == RIGHT  # into the body: alem refuses the move, every step
    assert api.leave_cleared_step(d) == DOWN  # round it
    assert api.leave_cleared_step(replace(d, level_cleared=False)) is None  # the ladders stay shut
    assert api.leave_cleared_step(replace(d, level=0)) is None
    # A snail in a one-tile corridor: with creatures as walls the walk turns back for the 15-step way
    # round (and, once the snail is out of view, forward again: seed 17's pacing); at 8 extra steps
    # for the snail the 5-tile corridor (13) wins, and the walk goes on toward it.
    loop = ["#########", "#.@.....#", "#.#####.#", "#.#####.#", "#.#####.#", "#.......#", "#########"]
    snail = Mob(300, "snail", "passive", 4, 1, 2, 0, 2, 6.0)
    c = replace(_hp(_level1(loop)), level_cleared=True, mobs=[snail])
    c.memory.items[1, 1, 7] = LADDER_DOWN
    assert api.cleared_level_step(c) == LEFT
    assert api.leave_cleared_step(c) == RIGHT
    assert api.leave_cleared_step(c, mob_cost=math.inf) == LEFT
    # No ladder down known: explore for it (cleared_level_step stays); short, up by the known ladder up.
    seek = replace(_hp(_level1(["#####", "#@..#", "#####"])), level_cleared=True)
    seek.memory.blocks[1, 1, 4] = -1  # an unexplored tile east
    assert api.cleared_level_step(seek) is None
    assert api.leave_cleared_step(seek) == RIGHT
    assert api.leave_cleared_step(seek, seek=False) is None
    seek.memory.items[1, 1, 1] = LADDER_UP
    assert api.leave_cleared_step(_hp(seek, drink=2)) == ASCEND  # standing on it
    # Level 2 entered already: nothing to seek; up only when short.
    entered = replace(seek, achievements=frozenset({"ENTER_GNOMISH_MINES"}))
    assert api.leave_cleared_step(entered) is None
    assert api.leave_cleared_step(_hp(entered, food=3)) == ASCEND


def test_safe_revive_leaves_a_body_beside_a_creature_or_in_a_line_of_fire():
    # Seed 43's corridor: the warrior's body at (1, 3), an orc mage beside it at (1, 4), the miner north.
    corridor = ["###", "#.#", "#@#", "#.#", "#.#", "###"]
    body = Teammate(0, "warrior", 1, 3, 0, 1, 1, 0.0, alive=False)
    d = replace(_hp(_level1(corridor)), teammates=[body], facing="south", facing_xy=(1, 3))
    assert api.revive_step(d) == DO  # main's revival: back at 1 health beside the mage
    mage = _orc(1, 4, (1, 2), "ranged")
    beside = replace(d, mobs=[mage])
    assert api.body_in_danger(beside, (1, 3))
    assert api.revive_step(beside) == DO
    assert api.safe_revive_step(beside) is None  # leave it until the mage is gone
    assert api.safe_revive_step(d) == DO  # nothing near the body: revive
    # A body in a mage's row, four tiles off, with nothing adjacent: still in danger (its next fireball).
    room = ["#########", "#.......#", "#@......#", "#########"]
    far_body = Teammate(0, "warrior", 2, 1, 1, -1, 2, 0.0, alive=False)
    r = replace(_hp(_level1(room)), teammates=[far_body], mobs=[_orc(6, 1, (1, 2), "ranged")])
    assert api.body_in_danger(r, (2, 1))
    assert api.safe_revive_step(r) is None
    assert (
        api.safe_revive_step(replace(r, mobs=[_orc(6, 2, (1, 2), "ranged")])) is not None
    )  # out of its line
    # A farther body out of danger is revived instead of the nearer one in the line.
    other = Teammate(2, "forager", 4, 2, 3, 0, 3, 0.0, alive=False)
    assert api.safe_revive_step(replace(r, teammates=[far_body, other])) == RIGHT
    # The overworld: exactly revive_step.
    assert api.safe_revive_step(replace(beside, level=0)) == api.revive_step(replace(beside, level=0))


def test_below_step_order_and_the_overworld():
    chest_and_potion = _level1(["#####", "#@.C#", "#####"], legal_indices=[NOOP, 1, 2, 3, 4, DO, DRINK_RED])
    assert api.below_step(chest_and_potion) == DRINK_RED  # a safe first potion before the walk
    assert api.below_step(replace(chest_and_potion, achievements=frozenset({"DRINK_POTION"}))) == RIGHT
    assert api.below_step(replace(chest_and_potion, level=0)) is None
    walled = _level1(["###", "#@#", "###"])
    assert api.below_step(walled) is None  # nothing to do here


@needs_alem
@pytest.mark.slow
def test_warrior_on_level_one_opens_a_chest_finds_the_bow_and_fires_it():
    """The real game (Hard): the team is moved to level 1 with the warrior beside a chest; the
    library's policy opens it (OPEN_CHEST, FIND_BOW: a warrior's first chest on level 1) and, with
    the arrows it holds, fires the bow (FIRE_BOW)."""
    import jax.numpy as jnp
    import numpy as np

    from compass.games.alem.env import make_alem
    from compass.sandbox import SkillExecutor

    env = make_alem("hard", max_steps=200, text=False)
    env.reset(0)
    s = env.state
    level_map = np.asarray(s.map[1])
    chests = np.argwhere(level_map == BLOCK_ID["chest"])
    assert len(chests), "level 1 of seed 0 has chests (three per dungeon room)"
    r, c = (int(v) for v in chests[0])
    stand = next(
        (r + dr, c + dc)
        for dr, dc in ((0, -1), (0, 1), (-1, 0), (1, 0))
        if level_map[r + dr, c + dc] == BLOCK_ID["path"]
    )
    # The warrior (agent 0) beside the chest, the others on path tiles away from it.
    free = [p for p in np.argwhere(level_map == BLOCK_ID["path"]) if abs(p[0] - r) + abs(p[1] - c) > 6]
    pos = np.asarray([stand, free[0], free[1]])
    state = s.replace(
        player_level=jnp.asarray(1, dtype=s.player_level.dtype),
        player_position=jnp.asarray(pos, dtype=s.player_position.dtype),
        inventory=s.inventory.replace(arrows=s.inventory.arrows.at[0].set(3)),
    )
    cp = env.checkpoint()
    cp["state"] = state
    env.restore(cp)
    res = env.step([NOOP, NOOP, NOOP])
    policy = load_skill("alem_role_policy")
    executor = SkillExecutor("compass.games.alem.skill_api", seed=0)
    got: set[str] = set()
    for _ in range(40):
        actions = [executor.run(policy, v).action for v in res.views]
        res = env.step(actions)
        got |= set(res.views[0].obs.achievements)
        if {"OPEN_CHEST", "FIND_BOW", "FIRE_BOW"} <= got or res.done:
            break
    assert {"OPEN_CHEST", "FIND_BOW", "FIRE_BOW"} <= got, got


@needs_alem
@pytest.mark.slow
def test_leave_cleared_step_takes_the_team_to_level_two_in_the_real_game():
    """The real game (Hard): the team on level 1 with eight kills (cleared), the miner a few path
    tiles from a ladder down; :func:`leave_cleared_step` walks it there and Descends, and the whole
    team arrives on level 2 (ENTER_GNOMISH_MINES)."""
    import jax.numpy as jnp
    import numpy as np

    from compass.games.alem.env import make_alem
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    env = make_alem("hard", max_steps=200, text=False)
    env.reset(0)
    s = env.state
    level_map = np.asarray(s.map[1])
    ladder = tuple(int(v) for v in np.asarray(s.down_ladders[1])[0])  # (row, col)
    path = np.argwhere(level_map == BLOCK_ID["path"])
    near = [p for p in path if 2 <= abs(p[0] - ladder[0]) + abs(p[1] - ladder[1]) <= 3]
    far = [p for p in path if abs(p[0] - ladder[0]) + abs(p[1] - ladder[1]) > 12]
    assert near and len(far) >= 2
    pos = np.asarray([far[0], far[-1], near[0]])
    state = s.replace(
        player_level=jnp.asarray(1, dtype=s.player_level.dtype),
        player_position=jnp.asarray(pos, dtype=s.player_position.dtype),
        monsters_killed=s.monsters_killed.at[1].set(8),
    )
    cp = env.checkpoint()
    cp["state"] = state
    env.restore(cp)
    res = env.step([NOOP, NOOP, NOOP])
    miner = obs_data_from_view(res.views[2])
    assert miner.level == 1 and miner.level_cleared
    assert api.leave_cleared_step(replace(miner, level_cleared=False)) is None
    for _ in range(20):
        d = obs_data_from_view(res.views[2])
        if d.level != 1:
            break
        step = api.leave_cleared_step(d)
        assert step is not None
        res = env.step([NOOP, NOOP, step])
    assert res.info["level"] == 2
    assert all("ENTER_GNOMISH_MINES" in v.obs.achievements for v in res.views)
