"""Into the night fed and sealed: the evening before the shelter (docs/alem.md "Nights, eighth pass:
into the night fed and sealed").

What the library's night needs (``bunker_step``): food and drink above its ``fed_level`` and either a
stone in hand to close a known dead-end corridor or a pickaxe to dig a tunnel. On Hard tuning seeds
most agents out at night were fed but had neither (the forager above all: it hunts all day and
rarely crafts a pickaxe), and stone is one of alem's requestable materials: a teammate's Give moves
it at any distance (but only an agent with a pickaxe can mine its way out of a stone seal). Food and
drink are topped up before dusk, not after: an agent that is awake and out at night loses drink
twice as fast as a sleeper.

Sealing itself is the miner's: alem places a stone for any other role 1 time in 10 on Hard (the soft
role gate of ``place_block``), so a warrior or forager stands in its corridor's mouth pressing Place
Stone for ten steps on average while whatever followed it walks up. A furnace costs the same one
stone, is placed by any role at once, and is as solid; it cannot be mined, so an agent sealed behind
one leaves through another wall (:func:`furnace_seal`, :func:`furnace_exit_step`).

Measured in the library on Hard tuning block I (48 seeds), none of them paid: the top-up tied
(-0.59 team Total %), the stone request with it and the furnace seal lost (-1.47, -1.51), so
``alem_role_policy`` uses none of them (docs/alem.md, the eighth pass's table). Sealing in short of
food or drink with a forager to give (:func:`fed_by_give`) lost on 240 fresh Hard seeds (-0.64,
docs/alem.md "Judging a variant, twelfth round"): the library does not use it either.
"""

from __future__ import annotations

from dataclasses import replace

from compass.games.alem.names import PLACE_ACTIONS
from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.actions import request
from compass.games.alem.skill_api.knowledge import (
    RESOURCE_TOOL,
    STEP_DIRS,
    Point,
    _coordination_tile,
    block_at,
    can_mine,
    team_alive,
    walkable,
)
from compass.games.alem.skill_api.revive import night_out
from compass.games.alem.skill_api.survival import base_anchor, refuel_step, shelter_plan, time_of_day
from compass.games.alem.skill_api.tactics import dig_out, enclosed


def stone_for_shelter(d: ObsData, anchor: Point | None = None, radius: int = 25) -> bool:
    """Whether one stone is all that keeps this agent from a shelter: it is on the overworld, holds
    a pickaxe but no stone, :func:`shelter_plan` around ``anchor`` (default the base) finds nothing
    for it that yields a stone (no plan, or a "dig" whose tiles are already open), and with one stone
    in hand it would seal a known dead-end corridor within ``radius``.

    The pickaxe is required: an agent without one cannot mine its seal to leave. Giving stone to
    pickaxe-less foragers walled them in until they starved (docs/alem.md "Nights, eighth pass")."""
    if d.level != 0 or d.inventory.get("stone", 0) >= 1 or d.inventory.get("pickaxe", 0) < 1:
        return False
    here = anchor if anchor is not None else base_anchor(d)
    plan = shelter_plan(d, here, radius)
    # A tunnel still to dig yields its own sealing stone; one already open (both tiles free) does not.
    if plan is not None and (
        plan[0] == "seal" or not all(walkable(d, p, unknown=False) for p in plan[1][1:])
    ):
        return False
    plan = shelter_plan(replace(d, inventory={**d.inventory, "stone": 1}), here, radius)
    return plan is not None and plan[0] == "seal"


def shelter_stone_step(d: ObsData, anchor: Point | None = None, radius: int = 25) -> int | None:
    """Ask the team for one stone (``request("stone")``) when :func:`stone_for_shelter` holds, a
    teammate lives to give it and no request of this agent's is open; ``None`` otherwise.

    Why: a teammate holding two or more stone gives a requested material at once (the library's
    sharing rule), and Give reaches any distance, so the stone comes while the agent walks; without
    it the agent spends the night awake in the open.
    """
    if d.my_request is not None or not team_alive(d):
        return None
    return request("stone") if stone_for_shelter(d, anchor, radius) else None


def evening_topup_step(
    d: ObsData, dusk: int = 120, ahead: int = 30, level: int = 5, reach: int = 8
) -> int | None:
    """In the ``ahead`` steps before ``dusk`` (on the overworld), food and drink at ``level`` or below
    are topped up: drink at water or eat a ripe plant (the forager also a cow) within ``reach`` tiles,
    else ask the team (:func:`refuel_step` at ``critical=level``). ``None`` outside that window or
    when both are above ``level``.

    Why: the library seals an agent in for the night only with food and drink above its fed level;
    one that reaches dusk short stays out, awake, all night.
    """
    t = time_of_day(d)
    if d.level != 0 or not (dusk - ahead <= t < dusk):
        return None
    return refuel_step(d, critical=level, reach=reach)


def furnace_seal(d: ObsData, step: int | None) -> int | None:
    """``step`` (an action of :func:`bunker_step` or any shelter routine), except that a non-miner's
    Place Stone becomes Place Furnace when the agent could still dig its way out: it holds a pickaxe
    and a neighbour of its tile other than the one it seals is a block it can mine (a furnace
    cannot be mined), with no tree beside it (:func:`dig_out` could pick the tree, which a Do never
    removes). A miner, or a Place Stone that would leave the agent walled in for good, is returned
    as given.

    Why: alem places a non-miner's stone 1 time in 10 on Hard; a furnace costs the same stone and is
    placed at once by any role, so sealing takes one step instead of about ten.
    """
    if step != PLACE_ACTIONS["stone"] or d.role == "miner" or d.inventory.get("pickaxe", 0) < 1:
        return step
    walls = [(d.x + dx, d.y + dy) for _, dx, dy in STEP_DIRS if (d.x + dx, d.y + dy) != d.facing_xy]
    names = [block_at(d, p) for p in walls]
    # A tree beside it: ``dig_out`` may face the tree first, and a Do on a tree yields wood but never
    # removes it, so the agent would never leave. Keep the stone seal there.
    if "tree" in names:
        return step
    for p, name in zip(walls, names, strict=True):
        if name in RESOURCE_TOOL and can_mine(d, name) and not _coordination_tile(d, p):
            return PLACE_ACTIONS["furnace"]
    return step


def furnace_exit_step(d: ObsData, stay: bool) -> int | None:
    """Leaving a shelter whose door is a furnace (:func:`furnace_seal`): walled in beside a furnace and
    not ``stay`` (the caller's "sleep on" test), dig out through the mineable wall farthest from it
    (:func:`dig_out`). ``None`` when it stays, is not walled in, has no furnace beside it, or no wall
    it can mine.

    Why: a furnace cannot be mined, and a walled-in agent that heads for food or water beyond its
    door (``act_on``) Does on the door forever; a stone door it would have mined open. On Hard seed 2
    a forager sealed behind a furnace starved facing it with a pickaxe in hand.
    """
    if stay or not enclosed(d):
        return None
    doors = [
        (d.x + dx, d.y + dy) for _, dx, dy in STEP_DIRS if block_at(d, (d.x + dx, d.y + dy)) == "furnace"
    ]
    if not doors:
        return None
    return dig_out(d, away_from=doors[0])


def fed_by_give(d: ObsData, food: int = 2, drink: int = 3, dusk: int = 120, dawn: int = 265) -> bool:
    """Whether this agent may seal in for the night on what it holds: in the overworld's night
    (:func:`night_out`: from ``dusk`` to ``dawn``, or light below 0.35), a non-forager with a living
    forager, at ``food`` food and ``drink`` drink or more.

    Why: an agent short of food or drink (3 or less) stays out at night, at water (where a non-forager
    drinks 1 time in 10 on Hard) or walking for it, and dies to zombies 8 times as often per dark step
    as a fed one (docs/alem.md "Hunger behind the zombie deaths"). Sealed in, it loses drink half as
    fast as awake, and its requests are served by Give, which reaches through walls at any distance.
    """
    if d.role == "forager" or d.food < food or d.drink < drink:
        return False
    if not any(t.role == "forager" for t in team_alive(d)):
        return False
    return night_out(d, dusk, dawn)
