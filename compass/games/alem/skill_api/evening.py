"""Into the night fed and sealed: the evening before the shelter (docs/alem.md "Nights, eighth pass:
into the night fed and sealed").

What the library's night needs (``bunker_step``): food and drink above its ``fed_level`` and either a
stone in hand to close a known dead-end corridor or a pickaxe to dig a tunnel. On Hard tuning seeds
most agents out at night were fed but had neither (the forager above all: it hunts all day and
rarely crafts a pickaxe), and stone is one of alem's requestable materials: a teammate's Give moves
it at any distance. Food and drink are topped up before dusk, not after: an agent that is awake and
out at night loses drink twice as fast as a sleeper.
"""

from __future__ import annotations

from dataclasses import replace

from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.actions import request
from compass.games.alem.skill_api.knowledge import Point, team_alive
from compass.games.alem.skill_api.survival import base_anchor, refuel_step, shelter_plan, time_of_day


def stone_for_shelter(d: ObsData, anchor: Point | None = None, radius: int = 25) -> bool:
    """Whether one stone is all that keeps this agent from a shelter: it is on the overworld, holds
    no stone, :func:`shelter_plan` around ``anchor`` (default the base) finds nothing for it, and with
    one stone in hand it would seal a known dead-end corridor within ``radius``."""
    if d.level != 0 or d.inventory.get("stone", 0) >= 1:
        return False
    here = anchor if anchor is not None else base_anchor(d)
    if shelter_plan(d, here, radius) is not None:
        return False
    plan = shelter_plan(replace(d, inventory={**d.inventory, "stone": 1}), here, radius)
    return plan is not None and plan[0] == "seal"


def shelter_stone_step(d: ObsData, anchor: Point | None = None, radius: int = 25) -> int | None:
    """Ask the team for one stone (``request("stone")``) when :func:`stone_for_shelter` holds, a
    teammate lives to give it and no request of this agent's is open; ``None`` otherwise.

    Why: a teammate holding two or more stone gives a requested material at once (the library's
    sharing rule), and Give reaches any distance, so the stone comes while the agent walks; without
    it an agent with no pickaxe (most often the forager) spends the night awake in the open.
    """
    if d.my_request is not None or not team_alive(d):
        return None
    return request("stone") if stone_for_shelter(d, anchor, radius) else None


def evening_topup_step(d: ObsData, dusk: int = 120, ahead: int = 30, level: int = 5, reach: int = 8) -> int | None:
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
