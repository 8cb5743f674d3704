"""Below the overworld: chests, potions, the bow, the next ladder down, and the way back up; on
level 1, out of orc mages' lines of fire, fountains, and the team regrouped on the warrior.

The 3-point achievements the team can add on level 1 (alem 0.2.1, ``alem_coop/game_logic.py``):

* **OPEN_CHEST**: Do on a ``chest`` (``do_action``: any role; the chest becomes path). Dungeon
  levels (1, 3, 4) put three chests in every room (``world_gen.generate_dungeon``), lit by the
  room's corner torches.
* **FIND_BOW**: ``add_items_from_chest`` gives a bow to a warrior opening its first chest on level 1
  (``chests_opened`` is per level *and per player*, so teammates' chests never use it up; other
  roles pass the warrior gate only ``non_specialist_efficiency`` of the time: 1 in 10 on Hard).
* **DRINK_POTION**: every chest holds a potion half the time (any role, one of six colours); the
  ``Drink Potion <Colour>`` action of a held colour is legal. What a colour does is drawn per
  episode (``potion_mapping``): +8 or -3 health, mana or energy, one sixth each.
* **FIRE_BOW**: ``Shoot Arrow`` with a bow and an arrow (``shoot_projectile``): the arrow flies
  where the agent faces until a solid block or a creature (5 damage; orc soldiers have 9 health,
  mages and snails 6) and hits teammates too (``friendly_fire`` is on). Arrows: the warrior crafts
  two from a wood and a stone at a table, or finds 4-8 in a chest half the time.
* **EAT_SNAIL** (level 1) and **EAT_BAT** (level 2): killing a passive creature feeds, and
  unlocks, only a forager (``attack_mob``'s ``can_eat`` is the forager gate).
* **ENTER_GNOMISH_MINES** (level 2): Descend on a ``ladder down`` once eight monsters have died on
  the level (``change_floor``: ``MONSTERS_KILLED_TO_CLEAR_LEVEL``); everyone moves and arrives on
  the new level's ladder up, from which Ascend brings the whole team back.

Every step helper returns an action index, or ``None`` when it has nothing to do (test against
``None``: an index may be Noop, 0).
"""

from __future__ import annotations

from compass.games.alem.names import (
    ACTION_LABELS,
    ASCEND,
    DESCEND,
    DIRECTION_ACTIONS,
    MOVES,
    PLACE_TABLE,
    SOLID_BLOCKS,
)
from compass.games.alem.obs import Mob, ObsData
from compass.games.alem.skill_api.actions import craft, move, place
from compass.games.alem.skill_api.knowledge import (
    STEP_DIRS,
    Point,
    block_at,
    distance,
    facing_free_ground,
    hostile_mobs,
    near,
    nearest,
    passive_mobs,
    team_alive,
    team_center,
    walkable,
)
from compass.games.alem.skill_api.paths import _bfs, act_on, explore, path_to
from compass.games.alem.skill_api.progress import LEVEL_ENTRY_ACHIEVEMENTS
from compass.games.alem.skill_api.survival import (
    descend_step,
    ladder_step,
    revive_step,
    standing_on,
)

#: The potion colours, in alem's inventory order; ``Drink Potion <Colour>`` is legal while held.
POTION_COLOURS = ("red", "green", "blue", "pink", "cyan", "yellow")
DRINK_POTION_ACTIONS = {c: ACTION_LABELS.index(f"Drink Potion {c.capitalize()}") for c in POTION_COLOURS}
SHOOT_ARROW = ACTION_LABELS.index("Shoot Arrow")
#: Passive creatures whose kill unlocks an EAT_ achievement (for a forager), by name.
EDIBLE_CREATURES = {"snail": "EAT_SNAIL", "bat": "EAT_BAT", "cow": "EAT_COW"}


def drink_potion(colour: str) -> int:
    """Drink a potion of ``colour`` (red, green, blue, pink, cyan, yellow; legal while held)."""
    try:
        return DRINK_POTION_ACTIONS[colour.lower()]
    except KeyError:
        raise ValueError(f"unknown potion {colour!r}; one of {', '.join(POTION_COLOURS)}") from None


def shoot_arrow() -> int:
    """Shoot an arrow where the agent faces (legal with a bow and an arrow; it hits teammates too)."""
    return SHOOT_ARROW


def held_potions(d: ObsData) -> list[str]:
    """The colours of potion this agent holds (read from its legal actions: the inventory view only
    counts potions)."""
    return [c for c, a in DRINK_POTION_ACTIONS.items() if a in d.legal_indices]


def chest_step(d: ObsData, reach: int = 20) -> int | None:
    """Walk to the nearest known chest within ``reach`` tiles and open it (Do). ``None`` when none.

    Every chest pays its opener (a potion half the time; on level 1 a warrior's first chest holds
    the bow), so any role may open any chest; on the overworld there are none."""
    chest = nearest(d, "chest")
    if chest is None or distance(d.position, chest) > reach:
        return None
    return act_on(d, chest)


def potion_step(d: ObsData, min_health: float = 6, safe_radius: int = 3, again: bool = False) -> int | None:
    """Drink a held potion for DRINK_POTION: only while this agent lacks it (or ``again``), has at
    least ``min_health`` (a colour may take 3 health: its effect is unknown until drunk) and no
    hostile creature stands within ``safe_radius``. ``None`` otherwise."""
    if not again and "DRINK_POTION" in d.achievements:
        return None
    colours = held_potions(d)
    if not colours or d.health < min_health or hostile_mobs(d, safe_radius):
        return None
    return drink_potion(colours[0])


def _line_clear(d: ObsData, target: Point) -> bool:
    """Whether an arrow from the agent reaches ``target`` (same row or column): no solid block and
    no living teammate on the tiles between."""
    dx, dy = target[0] - d.x, target[1] - d.y
    if dx and dy:
        return False
    n = abs(dx) + abs(dy)
    sx, sy = (dx > 0) - (dx < 0), (dy > 0) - (dy < 0)
    mates = {(t.x, t.y) for t in team_alive(d)}
    for k in range(1, n):
        p = (d.x + k * sx, d.y + k * sy)
        if p in mates or block_at(d, p) in SOLID_BLOCKS:
            return False
    return target not in mates


def bow_target(d: ObsData, reach: int = 6) -> Mob | None:
    """The nearest hostile creature an arrow can reach: in this agent's row or column, within
    ``reach`` tiles, nothing solid and no teammate in between. ``None`` when there is none."""
    for m in hostile_mobs(d, reach):
        if _line_clear(d, (m.x, m.y)):
            return m
    return None


def _free_line_ahead(d: ObsData, reach: int = 8) -> bool:
    """Whether no living teammate stands within ``reach`` tiles where the agent faces, up to the
    first solid block (a shot that way cannot hit one)."""
    vec = MOVES.get(DIRECTION_ACTIONS.get(d.facing))
    if vec is None:
        return False
    mates = {(t.x, t.y) for t in team_alive(d)}
    for k in range(1, reach + 1):
        p = (d.x + k * vec[0], d.y + k * vec[1])
        if p in mates:
            return False
        if block_at(d, p) in SOLID_BLOCKS:
            return True
    return True


def _line_direction(src: Point, dst: Point) -> str | None:
    """``north|south|west|east`` when ``dst`` lies in ``src``'s column or row, else None."""
    dx, dy = dst[0] - src[0], dst[1] - src[1]
    if (dx == 0) == (dy == 0):
        return None
    if dx == 0:
        return "south" if dy > 0 else "north"
    return "east" if dx > 0 else "west"


def bow_step(d: ObsData, reach: int = 6, first_shot: bool = True) -> int | None:
    """Use the bow: with a bow and an arrow, shoot the creature :func:`bow_target` finds, turning
    toward it first (a move: it also steps closer when the tile ahead is free); with
    ``first_shot``, when no creature is in line and this agent lacks FIRE_BOW, one shot the way it
    faces if no teammate stands there. ``None`` when it cannot shoot or has nothing to shoot."""
    if SHOOT_ARROW not in d.legal_indices:
        return None
    m = bow_target(d, reach)
    if m is not None:
        way = _line_direction(d.position, (m.x, m.y))
        return SHOOT_ARROW if way == d.facing else move(way)
    if first_shot and "FIRE_BOW" not in d.achievements and _free_line_ahead(d):
        return SHOOT_ARROW
    return None


def arrow_step(d: ObsData, table_reach: int = 8) -> int | None:
    """Arrows for the warrior's bow: holding a bow and no arrow, craft two (Make Arrow: a wood and a
    stone, next to a table; alem's action mask lists it for the warrior only) at a table within
    ``table_reach``, or place a table (2 wood) on free ground ahead when none is known and 3 wood and
    a stone are held. ``None`` for other roles, or with arrows, no bow or not the materials."""
    inv = d.inventory
    if (
        d.role != "warrior"
        or inv.get("bow", 0) < 1
        or inv.get("arrows", 0) > 0
        or inv.get("wood", 0) < 1
        or inv.get("stone", 0) < 1
    ):
        return None
    arrow = craft("arrow")
    if arrow in d.legal_indices:
        return arrow
    table = nearest(d, "crafting_table")
    if table is not None and distance(d.position, table) <= table_reach:
        return path_to(d, table) if not near(d, table) else None
    if inv["wood"] >= 3 and PLACE_TABLE in d.legal_indices and facing_free_ground(d):
        return place("table")
    return None


def eat_new_creature_step(d: ObsData, reach: int = 8) -> int | None:
    """A forager hunts the nearest visible passive creature whose EAT_ achievement it lacks (a
    snail on level 1, a bat on level 2: only a forager's kill feeds and unlocks it). ``None`` for
    other roles or when none is in reach."""
    if d.role != "forager":
        return None
    for m in passive_mobs(d, reach):
        ach = EDIBLE_CREATURES.get(m.name)
        if ach is not None and ach not in d.achievements and m.coord != 2:
            return act_on(d, (m.x, m.y))
    return None


def next_entry_step(d: ObsData) -> int | None:
    """On a cleared level below the overworld, take the team down to a level none of it has entered
    (this agent's view: ENTER_GNOMISH_MINES from level 1) through :func:`descend_step`. ``None`` when
    the level is not cleared (eight monsters killed on it), no ladder down is known, or this agent
    has entered the next level already."""
    nxt = d.level + 1
    if d.level < 1 or nxt >= len(LEVEL_ENTRY_ACHIEVEMENTS) or LEVEL_ENTRY_ACHIEVEMENTS[nxt] in d.achievements:
        return None
    return descend_step(d)


def climb_back_step(d: ObsData, health: float = 3, alone: bool = True, reach: int = 30) -> int | None:
    """Take the team back up when it is losing below the overworld: at or below ``health``, or (with
    ``alone``) when no teammate is left alive, walk to the known ``ladder up`` within ``reach`` and
    Ascend (the whole team moves up with it, to the overworld's water, food and shelters).
    ``None`` on the overworld, when not losing, or when no ladder up is known."""
    if d.level < 1:
        return None
    losing = d.health <= health or (alone and not team_alive(d))
    if not losing:
        return None
    ladder = nearest(d, "ladder up")
    if standing_on(d, "ladder up") or (ladder is not None and distance(d.position, ladder) <= reach):
        return ladder_step(d, "ladder up", ASCEND)
    return None


def below_step(
    d: ObsData,
    chest_reach: int = 20,
    potion_health: float = 6,
    bow_reach: int = 6,
    enter_next: bool = True,
) -> int | None:
    """The level-below routine, cheapest points first: shoot a creature in line with the bow (or
    the first shot), drink a first potion when safe, arrows for a bow without any, a forager eats
    a creature new to it, open the nearest chest, then (with ``enter_next``) take the team down to
    a level none of it has entered. ``None`` on the overworld or when there is nothing to do."""
    if d.level < 1:
        return None
    steps = (
        lambda: bow_step(d, bow_reach),
        lambda: potion_step(d, potion_health),
        lambda: arrow_step(d),
        lambda: eat_new_creature_step(d),
        lambda: chest_step(d, chest_reach),
        lambda: next_entry_step(d) if enter_next else None,
    )
    # Checked against None, not chained with ``or``: a step may be Noop (0), e.g. waiting for a
    # teammate that stands in the way; and each is computed only when the ones before had nothing.
    for step in steps:
        action = step()
        if action is not None:
            return action
    return None


# --------------------------------------------------------------------------- level 1 as a team
# alem 0.2.1 (``game_logic.update_mobs``, ``constants.py``): an orc mage standing fewer than 6 tiles
# from the nearest agent along its main axis shoots a fireball (3 fire damage, which iron armour
# does not reduce; cooldown 4) along that axis; the fireball flies straight until a solid block or
# an agent. An agent off every mage's row and column is never hit. On Hard tuning seeds fireballs
# took more health below than orc soldiers' blows (docs/alem.md "Level 1 as a team").
FIRE_REACH = 6


def in_fire_line(d: ObsData, xy: Point, reach: int = FIRE_REACH) -> bool:
    """Whether ``xy`` lies in the row or column of a visible ranged hostile creature (an orc mage,
    a skeleton) within ``reach`` tiles along it, with no solid block up to it: where its next shot
    flies (one of :func:`fire_lines`)."""
    return xy in fire_lines(d, reach)


def dodge_fire_step(
    d: ObsData, reach: int = FIRE_REACH, max_health: float = 9, overworld: bool = False
) -> int | None:
    """Below the overworld, at ``max_health`` or below, step out of a ranged creature's line of fire
    (:func:`in_fire_line`) onto a free adjacent tile that is in none, preferring one no melee creature
    stands next to, then the one nearest the warrior (or the team). ``None`` on the overworld (unless
    ``overworld``: a skeleton shoots as an orc mage does), above ``max_health``, when out of every
    line, when a hostile creature is adjacent (hit it instead: a mage one tile away dies to two of the
    warrior's blows), or when no free tile is out of the lines.

    Why a health bar: dodging every line also keeps healthy agents from ever reaching a mage (on Hard
    tuning seeds 0-23 always dodging cost six of eight DEFEAT_ORC_MAGE unlocks; docs/alem.md)."""
    if (d.level < 1 and not overworld) or d.health > max_health:
        return None
    lines = fire_lines(d, reach)
    if d.position not in lines or hostile_mobs(d, 1):
        return None
    melee = [(m.x, m.y) for m in d.mobs if m.kind == "melee"]
    mates = team_alive(d)
    occupied = {(m.x, m.y) for m in d.mobs} | {(t.x, t.y) for t in mates}
    warrior = next(((t.x, t.y) for t in mates if t.role == "warrior"), None)
    goal = warrior if warrior is not None and d.role != "warrior" else team_center(d)
    best, best_key = None, None
    for name, dx, dy in STEP_DIRS:
        p = (d.x + dx, d.y + dy)
        if p in occupied or not walkable(d, p, unknown=False) or p in lines:
            continue
        key = (any(distance(p, q) <= 1 for q in melee), distance(p, goal), name)
        if best_key is None or key < best_key:
            best, best_key = move(name), key
    return best


def fountain_step(
    d: ObsData, thirst: float = 4, urgent: float = 2, reach: int = 20, safe_radius: int = 1
) -> int | None:
    """Below the overworld, drink at the nearest known fountain or water within ``reach`` tiles
    (dungeon rooms hold fountains; Do on one gives 4 drink as on water): a forager (or an agent with no
    forager alive) at ``thirst`` or below, any agent at ``urgent`` or below (alem's soft gate lets a
    non-forager drink only ``non_specialist_efficiency`` of the time: 1 in 10 on Hard). ``None``
    otherwise, or with a hostile creature within ``safe_radius`` (hit it first: walking off cost
    orc-mage kills on Hard tuning seeds)."""
    if d.level < 1 or d.drink > thirst or hostile_mobs(d, safe_radius):
        return None
    forager_alive = any(t.role == "forager" for t in team_alive(d))
    if d.role != "forager" and forager_alive and d.drink > urgent:
        return None
    spot = nearest(d, ("fountain", "water"))
    if spot is None or distance(d.position, spot) > reach:
        return None
    return act_on(d, spot)


def regroup_step(d: ObsData, radius: int = 3, safe_radius: int = 1) -> int | None:
    """Below the overworld, a non-warrior farther than ``radius`` tiles from the living warrior walks
    back to it (orcs come at the nearest agent, so a team together meets them together and kills them
    faster). ``None`` for the warrior, with no warrior alive, within ``radius``, or with a hostile
    creature within ``safe_radius``."""
    if d.level < 1 or d.role == "warrior" or hostile_mobs(d, safe_radius):
        return None
    warrior = next((t for t in team_alive(d) if t.role == "warrior"), None)
    if warrior is None or distance(d.position, (warrior.x, warrior.y)) <= radius:
        return None
    return path_to(d, (warrior.x, warrior.y))


def fire_lines(d: ObsData, reach: int = FIRE_REACH) -> set[Point]:
    """Every tile in a visible ranged hostile creature's row or column within ``reach`` tiles of it,
    up to the first solid block: the tiles :func:`in_fire_line` is true on, as one set."""
    tiles: set[Point] = set()
    for m in d.mobs:
        if m.kind != "ranged":
            continue
        for _, sx, sy in STEP_DIRS:
            for k in range(1, reach + 1):
                p = (m.x + k * sx, m.y + k * sy)
                if block_at(d, p) in SOLID_BLOCKS:
                    break
                tiles.add(p)
    return tiles


def mage_approach_step(d: ObsData, reach: int = 8, min_health: float = 6) -> int | None:
    """Below the overworld, walk to the nearest visible orc mage within ``reach`` tiles along a path
    that stays off every ranged creature's row and column (:func:`fire_lines`) until the last step,
    onto a tile next to the mage, from where the creature block hits it. ``None`` on the overworld,
    below ``min_health``, with a hostile creature adjacent (hit it), with no mage in reach, or when
    no known path keeps off the lines.

    Why: an orc mage shoots along its row and column only (alem 0.2.1 ``_move_ranged_mob``), so the
    diagonals are safe; walking straight at it took fireballs, and dodging alone gave up the kill
    (docs/alem.md "Level 1 as a team")."""
    if d.level < 1 or d.health < min_health or hostile_mobs(d, 1):
        return None
    mages = [m for m in hostile_mobs(d, reach) if m.kind == "ranged" and m.name == "orc_mage"]
    if not mages:
        return None
    mage = mages[0]
    occupied = {(m.x, m.y) for m in d.mobs} | {(t.x, t.y) for t in team_alive(d)}
    goals = {(mage.x + dx, mage.y + dy) for _, dx, dy in STEP_DIRS}
    goals = {g for g in goals if g not in occupied and walkable(d, g, unknown=False)}
    if not goals:
        return None
    avoid = (fire_lines(d) | occupied) - goals
    return _bfs(d, goals, avoid, reach + 2)


def cleared_level_step(d: ObsData, food: float = 3, drink: float = 3) -> int | None:
    """On a cleared level below the overworld, leave it: down to a level none of the team has
    entered when its ladder is known (:func:`next_entry_step`), else, at ``food`` or ``drink`` or
    below, back up by the known ``ladder up`` (Ascend takes the team to the overworld's food and
    water; level 1 has no food but snails). ``None`` on an uncleared level or the overworld, or with
    nowhere to go.

    Why: on main a team that cleared level 1 went on with its chores there and starved, its ladder down
    known (Hard tuning seed 17); going down at once gave seed 14 the library's first level 2."""
    if d.level < 1 or not d.level_cleared:
        return None
    down = next_entry_step(d)
    if down is not None:
        return down
    if d.food <= food or d.drink <= drink:
        return ladder_step(d, "ladder up", ASCEND)
    return None


# --------------------------------------------------------------------------- level 2
# docs/alem.md "Level 2: ...". alem 0.2.1: Descend works on a ``ladder down`` once eight monsters died
# on the level (``change_floor``); the team arrives on level 2 (the Gnomish Mines, dark but for its
# ladders, lava and torches) for ENTER_GNOMISH_MINES, gnomes and bats. On Hard tuning seeds 0-47 (main
# b099290) 3 of 22 teams on level 1 cleared it and 1 went down: one never walked the 5 tiles to its
# known ladder in 150 agent-steps on the cleared level (creatures as walls, bodies walked into: the
# pacing docs/alem.md "Level 1 as a team, second pass" traced), one cleared it with no ladder known.
LEAVE_MOB_COST = 8.0  # a passive creature in the way costs this many steps: go round only if short


def leave_cleared_step(
    d: ObsData, food: float = 3, drink: float = 3, seek: bool = True, mob_cost: float = LEAVE_MOB_COST
) -> int | None:
    """On a cleared level below the overworld whose next level this agent has not entered (Descend
    moves everyone, so nobody has), take the team down: walk to the known ``ladder down`` round teammates' bodies (alem refuses a move onto
    one) with a passive creature in a corridor costing ``mob_cost`` steps rather than being a wall,
    and Descend; with no ladder down known, and ``seek``, explore for one. At ``food`` or ``drink`` or
    below with no ladder down known, up by the known ``ladder up`` instead (level 1 has no food but
    snails). On a cleared level whose next one was entered: up when short, as
    :func:`cleared_level_step`. ``None`` on an uncleared level or the overworld, or with nowhere to go.

    Why: :func:`cleared_level_step` walks with creatures as walls and never explores; on Hard tuning
    seed 17 its agents paced within 5 tiles of the known ladder for 150 steps and died of thirst."""
    if d.level < 1 or not d.level_cleared:
        return None
    nxt = d.level + 1
    new_level = nxt < len(LEVEL_ENTRY_ACHIEVEMENTS) and LEVEL_ENTRY_ACHIEVEMENTS[nxt] not in d.achievements
    if new_level and nxt < d.num_levels:
        step = ladder_step(d, "ladder down", DESCEND, bodies=True, mob_cost=mob_cost)
        if step is not None:
            return step
    if d.food <= food or d.drink <= drink:
        step = ladder_step(d, "ladder up", ASCEND, bodies=True, mob_cost=mob_cost)
        if step is not None:
            return step
    if new_level and seek and nxt < d.num_levels:
        return explore(d)
    return None


def short_of_supplies(
    d: ObsData, drink: float = 1, food: float = 1, forager_drink: float = 3, forager_food: float = 2
) -> bool:
    """Whether this agent is too parched or hungry to stay below the overworld: drink at ``drink`` or
    food at ``food`` or below; for the forager (which drinks at every Do on water or a fountain and
    eats snails) ``forager_drink`` and ``forager_food``. The same test says when to climb
    (:func:`resupply_step`) and when not to go back down."""
    forager = d.role == "forager"
    return d.drink <= (forager_drink if forager else drink) or d.food <= (forager_food if forager else food)


def resupply_step(
    d: ObsData,
    drink: float = 1,
    food: float = 1,
    forager_drink: float = 3,
    forager_food: float = 2,
    fountain_reach: int = 20,
    mob_cost: float = LEAVE_MOB_COST,
) -> int | None:
    """Below the overworld, when :func:`short_of_supplies` (its four thresholds as given): back up by
    the known ``ladder up`` (Ascend takes the whole team to the overworld's water and food), walking
    round teammates' bodies with a passive creature in the way costing ``mob_cost`` steps; a parched
    forager drinks at a known fountain within ``fountain_reach`` tiles instead. ``None`` on the
    overworld, when supplied, or with no ladder up known or reachable.

    Why: level 1 has no water but fountains (in about half its rooms, and only the forager drinks at
    every Do; others 1 in 10 on Hard) and no food but snails (the forager's); on Hard tuning seeds
    half the level-1 agent-steps were at drink 4 or less, and of the 61 deaths below on seeds 0-23 (main
    13fe644) 23 came at drink 0: 10 to thirst, the rest to orcs while thirst drained health
    (docs/alem.md "Judging a variant, eleventh round")."""
    if d.level < 1 or not short_of_supplies(d, drink, food, forager_drink, forager_food):
        return None
    if d.role == "forager" and d.drink <= forager_drink:
        spring = nearest(d, "fountain")
        if spring is not None and distance(d.position, spring) <= fountain_reach:
            return act_on(d, spring)
    return ladder_step(d, "ladder up", ASCEND, bodies=True, mob_cost=mob_cost)


def body_in_danger(d: ObsData, xy: Point, reach: int = FIRE_REACH) -> bool:
    """Whether a body at ``xy`` would come back into a fight it cannot win: a visible hostile creature
    stands next to it, or it lies in a ranged creature's line of fire (:func:`fire_lines`). A teammate
    revives at 1 health (alem's ``interplayer_interaction``), so either kills it again within steps."""
    return any(m.hostile and distance((m.x, m.y), xy) <= 1 for m in d.mobs) or xy in fire_lines(d, reach)


def safe_revive_step(d: ObsData, reach: int = 30) -> int | None:
    """Below the overworld, revive the nearest downed teammate within ``reach`` whose body is not in
    danger (:func:`body_in_danger`); on the overworld exactly :func:`revive_step`. ``None`` when no
    such body lies in reach or none can be reached.

    Why: on Hard tuning seed 43 (main b099290) the warrior's body lay in a one-tile corridor with an
    orc mage beside it; the miner revived it about 40 times in 200 steps, and each time the mage killed
    it again at 1 health within ~5 steps."""
    return revive_step(d, reach=reach, skip=None if d.level < 1 else body_in_danger)


__all__ = [
    "DRINK_POTION_ACTIONS",
    "EDIBLE_CREATURES",
    "LEAVE_MOB_COST",
    "FIRE_REACH",
    "POTION_COLOURS",
    "SHOOT_ARROW",
    "arrow_step",
    "below_step",
    "body_in_danger",
    "bow_step",
    "bow_target",
    "chest_step",
    "cleared_level_step",
    "climb_back_step",
    "dodge_fire_step",
    "drink_potion",
    "eat_new_creature_step",
    "fire_lines",
    "fountain_step",
    "held_potions",
    "in_fire_line",
    "leave_cleared_step",
    "mage_approach_step",
    "next_entry_step",
    "potion_step",
    "regroup_step",
    "safe_revive_step",
    "shoot_arrow",
]
