"""Daytime scoring: which unlocked-once achievements a team member can still add, and the cheapest
steps that add them.

The leaderboard scores the team: an achievement counts once if any agent unlocked it, weighted
(basic 1, intermediate 3, advanced 5, very advanced 8). Measured on Hard tuning seeds
(docs/alem.md "Daytime scoring"), the library's team missed, while its agents were alive and
holding the materials: the first torch and arrow (specialist crafts, 1 point each, plus 1 for
placing a torch), and entering level 1 (3 points, which the overworld grants as soon as
its ladder down is known: the overworld counts as cleared; alem names it ENTER_DUNGEON). Every step helper returns an action
index, or ``None`` when it has nothing to do, so skills chain them with ``or``.
"""

from __future__ import annotations

import random

from compass.games.alem.names import ACHIEVEMENT_WEIGHTS, ACHIEVEMENTS, ASCEND, DESCEND
from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.knowledge import (
    Point,
    _occupied,
    distance,
    hostile_mobs,
    nearest,
    team_alive,
)
from compass.games.alem.skill_api.paths import act_on, explore, tunnel_step
from compass.games.alem.skill_api.survival import descend_step, ladder_step, standing_on, time_of_day

_WEIGHT = dict(zip(ACHIEVEMENTS, ACHIEVEMENT_WEIGHTS, strict=True))

#: First crafts that unlock an achievement: item -> (role that crafts it reliably, materials, stations).
#: Non-specialists succeed 1 time in 10 on Hard (``non_specialist_efficiency``), so a trip to the
#: table for them is rarely worth it; iron armour is not gated to a role.
FIRST_CRAFTS: dict[str, tuple[str | None, dict[str, int], tuple[str, ...]]] = {
    "torch": ("miner", {"wood": 1, "coal": 1}, ("crafting_table",)),
    "arrow": ("warrior", {"wood": 1, "stone": 1}, ("crafting_table",)),
    "iron_armour": (None, {"iron": 3, "coal": 3}, ("crafting_table", "furnace")),
}


#: The achievement for entering each level, as alem's ``LEVEL_ACHIEVEMENT_MAP`` gives it (level 1, which
#: the harness text calls the Gnomish Mines, unlocks ENTER_DUNGEON; level 2 ENTER_GNOMISH_MINES).
LEVEL_ENTRY_ACHIEVEMENTS: tuple[str, ...] = (
    "",
    "ENTER_DUNGEON",
    "ENTER_GNOMISH_MINES",
    "ENTER_SEWERS",
    "ENTER_VAULT",
    "ENTER_TROLL_MINES",
    "ENTER_FIRE_REALM",
    "ENTER_ICE_REALM",
    "ENTER_GRAVEYARD",
)


def achievement_weight(name: str) -> int:
    """The leaderboard weight of an achievement (``"MAKE_TORCH"`` -> 1, ``"COORD_BUILD_FORGE"`` -> 8)."""
    try:
        return _WEIGHT[name.upper()]
    except KeyError:
        raise ValueError(f"unknown achievement {name!r}") from None


def missing_weight(d: ObsData, names: list[str] | tuple[str, ...]) -> int:
    """Summed weight of the achievements in ``names`` this agent has not unlocked yet (its own view:
    teammates' unlocks are not observed)."""
    return sum(achievement_weight(n) for n in names if n.upper() not in d.achievements)


def craft_trip(d: ObsData) -> str | None:
    """The first craft worth a walk to the stations now: an item of :data:`FIRST_CRAFTS` whose
    achievement (``MAKE_<ITEM>``) this agent lacks, that its role crafts reliably, and whose
    materials it holds. ``None`` when there is none; the caller walks to the table (and the
    furnace, for iron armour) and crafts it there."""
    inv = d.inventory
    for item, (role, cost, _stations) in FIRST_CRAFTS.items():
        if f"MAKE_{item.upper()}" in d.achievements:
            continue
        if role is not None and d.role != role:
            continue
        if all(inv.get(k, 0) >= n for k, n in cost.items()):
            return item
    return None


def visit_next_level_step(
    d: ObsData, latest: int = 115, reach: int = 12, stay_from: int = 0, from_step: int = 0
) -> int | None:
    """Unlock entering level 1 (ENTER_DUNGEON, 3 points) by day, and stay there or come back.

    On the overworld, from episode step ``from_step`` and before ``latest`` steps into the day,
    when the ladder down is known within ``reach`` tiles of this agent and of every living
    teammate, this agent has not entered level 1 and no teammate is nearer that ladder (ties:
    lower id): :func:`descend_step` (Descend takes every teammate along, and each unlocks it). On a
    deeper level before step ``stay_from`` (the team arrives on its ladder up): walk back to it and
    Ascend, to the overworld's food, water and shelters. The default 0 stays below: on Hard tuning
    seeds staying scored more (orc and snail achievements) than climbing back (docs/alem.md
    "Daytime scoring"). ``None`` otherwise.

    ``from_step`` keeps an unarmed team up: on Hard tuning seed 6 the team spawned beside the
    ladder, went down at step 10 with no tool and died to orcs by step 158; 300 (not on the first
    day) fixed that seed but did not gain on every tuning set (docs/alem.md "Nights, fourth pass"),
    so the default 0 leaves the visit as it was.
    """
    if d.level == 0:
        if LEVEL_ENTRY_ACHIEVEMENTS[1] in d.achievements or d.step < from_step or time_of_day(d) >= latest:
            return None
        ladder = nearest(d, "ladder down")
        if ladder is None or distance(d.position, ladder) > reach:
            return None
        # Descend moves the whole team to the next level and Ascend back to this ladder: only
        # when every living teammate is already near it, so nobody is pulled away from its base.
        # One agent makes the trip: the one nearest the ladder.
        mine = (distance(d.position, ladder), d.agent_id)
        mates = team_alive(d)
        if any(distance((t.x, t.y), ladder) > reach for t in mates):
            return None
        if any((distance((t.x, t.y), ladder), t.id) < mine for t in mates):
            return None
        return descend_step(d)
    if d.step >= stay_from:
        return None
    return ladder_step(d, "ladder up", ASCEND)


def armed_for_descent(
    d: ObsData,
    from_step: int = 300,
    latest: int = 100,
    pickaxe: int = 1,
    sword: int = 1,
    health: float = 7,
    supplies: float = 5,
    first_only: bool = True,
) -> bool:
    """Whether this agent should take the team down to level 1 now, wherever its teammates are.

    On the overworld, from episode step ``from_step`` and before ``latest`` steps into the day,
    holding at least a ``pickaxe`` and ``sword`` of those tiers (1 wood, 2 stone, 3 iron: on Hard
    tuning seeds 0-23 a wood pickaxe and sword sent more teams down, and scored more, than a stone
    pickaxe), with
    ``health`` and food and drink at ``supplies`` or more, and (with ``first_only``) before the
    agent entered level 1. Descend takes every teammate along, so nobody has to be near the ladder:
    :func:`visit_next_level_step` waits for the whole team by the ladder, and on Hard tuning seeds
    0-23 the library went down in 5 of 24 episodes although an agent knew a ladder down by step 400
    in 10 (docs/alem.md "Down armed"). Pair it with :func:`descend_step` and, when no ladder down is
    known, exploring for one.
    """
    if d.level != 0 or d.step < from_step or time_of_day(d) >= latest:
        return False
    if first_only and LEVEL_ENTRY_ACHIEVEMENTS[1] in d.achievements:
        return False
    inv = d.inventory
    return (
        inv.get("pickaxe", 0) >= pickaxe
        and inv.get("sword", 0) >= sword
        and d.health >= health
        and d.food >= supplies
        and d.drink >= supplies
    )


def descent_step(
    d: ObsData,
    from_step: int = 300,
    seek_from: int = 900,
    min_energy: float = 4,
    threat_radius: int = 6,
    seek_near: str | None = None,
    arrive_by: int | None = None,
    dig: bool = False,
    **armed: float,
) -> int | None:
    """The whole "down armed" move as one step: walk to the known ladder down and Descend, or
    explore for one, once :func:`armed_for_descent` holds (``armed`` passes its other keywords).

    With a ladder down known: :func:`descend_step` (Descend takes every teammate along). With none
    known, from episode step ``seek_from`` and no hostile creature within ``threat_radius``: a step
    of frontier exploration (:func:`explore`, its tie-break drawn from the step and agent id, so a
    trace replays), favouring unknown tiles beside known ``seek_near`` blocks when given
    (``"path"``: the overworld's ladders down are only ever placed on path tiles, the tunnels and
    caves inside mountains). ``arrive_by`` (a step of the day), when given, sets the walk's window
    by the distance left instead of armed's ``latest``: the walk to a known ladder is taken
    whenever the day step plus the Manhattan distance to it is at most ``arrive_by``, so a walk
    begun in the morning is not dropped at ``latest`` a few tiles short, and one that cannot end
    by ``arrive_by`` is not begun (exploring still stops at ``latest``). ``dig``: the walk is
    :func:`tunnel_step`'s, through the stone round a ladder in a mountain where that is shorter
    than the known way round (the armed agent holds a pickaxe). ``None`` when not armed,
    below ``min_energy`` (an agent that arrives tired sleeps among level 1's orcs), or with nothing
    to do. Made to be called early in a policy, ahead of the daytime chores: on Hard tuning seeds
    0-47 the armed agent that knew a ladder took its walk in only about half of its armed steps,
    the rest went to food, water and sharing, and walks of 15-33 tiles ran out of morning
    (docs/alem.md "Down armed, second pass" and "third pass").
    """
    latest = int(armed.pop("latest", 100))
    window = latest if arrive_by is None else max(latest, arrive_by)
    if d.energy < min_energy or not armed_for_descent(d, from_step=from_step, latest=window, **armed):
        return None
    ladder = nearest(d, "ladder down")
    if ladder is not None:
        if arrive_by is not None and time_of_day(d) + distance(d.position, ladder) > arrive_by:
            return None
        if not dig:
            return descend_step(d)
        if standing_on(d, "ladder down") or d.position == tuple(ladder):
            return DESCEND
        return tunnel_step(d, ladder)
    if time_of_day(d) >= latest or d.step < seek_from or hostile_mobs(d, threat_radius):
        return None
    return explore(d, random.Random(d.step * 7919 + d.agent_id), near=seek_near)


def free_ladder(d: ObsData) -> Point | None:
    """The nearest remembered ladder down on this level that no creature, living teammate or
    teammate's body stands on; the nearest one when every known one is taken; ``None`` when none is
    known. A level's ladders come in a row (the overworld's three on path tiles): a body or a
    creature on the nearest one blocks the step onto it (alem's move check counts every player,
    dead or alive), and an agent walking to it pushed against the tile (docs/alem.md "Down armed,
    fourth pass").
    """
    mem = d.memory
    if mem is None:
        return nearest(d, "ladder down")
    tiles = mem.known("ladder down")
    if not tiles:
        return None
    taken = _occupied(d, bodies=True)
    return min(tiles, key=lambda xy: (xy in taken, distance(d.position, xy), xy))


def finish_descent_step(
    d: ObsData,
    within: int = 6,
    from_step: int = 300,
    latest: int = 115,
    health: float = 5,
    supplies: float = 3,
) -> int | None:
    """Finish a walk to a ladder down a few tiles away and Descend, at looser thresholds than
    :func:`armed_for_descent` starts one with.

    On the overworld, from episode step ``from_step``, before ``latest`` steps into the day (dusk is
    120), before the team entered level 1, holding a pickaxe and a sword, with ``health`` and food
    and drink at ``supplies`` or more, and a ladder down within ``within`` tiles (Manhattan): the
    next step of :func:`tunnel_step` to :func:`free_ladder`'s tile, Descend on it, or, next to a
    ladder whose tile something occupies, Do facing it (a creature is hit, a teammate's body
    revived). On Hard tuning seeds 0-47 armed agents one tile from the ladder gave up their walk
    when drink fell from 5 to 4 or the morning ended, or pushed for 20 steps against a taken
    ladder tile (docs/alem.md "Down armed, fourth pass"). ``None`` otherwise.
    """
    if d.sleeping or d.resting:
        return None
    if not armed_for_descent(d, from_step=from_step, latest=latest, health=health, supplies=supplies):
        return None
    if standing_on(d, "ladder down"):
        return DESCEND
    ladder = free_ladder(d)
    if ladder is None or distance(d.position, ladder) > within:
        return None
    if d.position == ladder:
        return DESCEND
    if distance(d.position, ladder) == 1 and ladder in _occupied(d, bodies=True):
        return act_on(d, ladder)
    return tunnel_step(d, ladder, bodies=True)


def seek_ladder_step(
    d: ObsData,
    from_step: int = 1200,
    latest: int = 100,
    health: float = 5,
    supplies: float = 3,
    threat_radius: int = 6,
    near: str | None = "path",
) -> int | None:
    """A step of exploring for the ladder down by an agent that holds a pickaxe and a sword and
    knows none, at looser thresholds than :func:`armed_for_descent`: on the overworld, from episode
    step ``from_step``, before ``latest`` steps into the day, before the team entered level 1, not
    asleep, with ``health`` and food and drink at ``supplies`` or more and no hostile creature
    within ``threat_radius`` tiles. The exploring favours unknown tiles beside remembered ``near``
    tiles (ladders down lie on path) and draws its tie-break from the step and agent id, so a trace
    replays. On Hard tuning seeds 0-47, 11 of the 21 teams that never went down never saw the
    ladder, although the long-lived ones had an armed agent for 1,000-2,000 steps: in its mornings
    it was asleep, hurt (health below 7) or short of food (below 5) on most steps, so the seek that
    needs :func:`armed_for_descent` seldom ran (docs/alem.md "Down armed, fourth pass").
    ``None`` otherwise, and whenever a ladder down is known.
    """
    if d.sleeping or d.resting or nearest(d, "ladder down") is not None:
        return None
    if not armed_for_descent(d, from_step=from_step, latest=latest, health=health, supplies=supplies):
        return None
    if hostile_mobs(d, threat_radius):
        return None
    return explore(d, random.Random(d.step * 7919 + d.agent_id), near=near)
