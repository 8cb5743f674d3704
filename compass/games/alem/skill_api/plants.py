"""Plants on the way (docs/alem.md "Plants on the way"): food that does not depend on the forager's Gives.

alem 0.2.1's rules (``alem_coop/game_logic.py``): a sapling comes from a Do on grass (1 in 5 for the
forager; the others' tries are gated by ``non_specialist_efficiency``, 1 in 10 on Hard), Place Plant
puts it on faced grass with nothing on it; the plant ripens 500 steps later (``growing_plants_age``)
and a Do on the ripe plant feeds any role +4 and starts the 500 steps again. Nothing tramples or
eats a plant, so an uneaten ripe plant is a store of food that waits for whoever needs it; a plant
a teammate eats while it could eat something else is gone for 500 steps.

The helpers here cost no walk: a sapling placed on the grass the agent already faces, a ripe plant
eaten only by whom the team wants to eat it, and the revive that brings the food supply back first.
"""

from __future__ import annotations

from collections.abc import Sequence

from compass.games.alem.names import PLACE_ACTIONS
from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.knowledge import Point, distance, facing_free_ground, nearest
from compass.games.alem.skill_api.paths import act_on
from compass.games.alem.skill_api.survival import base_anchor, downed_teammates, revive_step

#: Place Plant's action index.
PLACE_PLANT = PLACE_ACTIONS["plant"]


def plant_step(d: ObsData, anchor: Point | None = None, radius: int = 12, clear: int = 1) -> int | None:
    """Place a held sapling on the grass this agent faces, where it stands anyway: Place Plant when it
    holds a sapling, faces grass with nothing on it (:func:`facing_free_ground`) within ``radius`` of
    ``anchor`` (default :func:`base_anchor`, the team's table; where the team works and shelters) and
    more than ``clear`` tiles from it (the tiles round the table stay open for crafting). No walk and
    no turn: ``None`` otherwise."""
    if (
        d.level != 0
        or d.inventory.get("sapling", 0) < 1
        or d.facing_block != "grass"
        or not facing_free_ground(d)
    ):
        return None
    base = anchor if anchor is not None else base_anchor(d)
    ahead = (int(d.facing_xy[0]), int(d.facing_xy[1]))
    if not clear < distance(ahead, base) <= radius:
        return None
    return PLACE_PLANT


def ripe_step(d: ObsData, at: int, reach: int = 12) -> int | None:
    """Eat the nearest known ripe plant within ``reach`` tiles when this agent's food is at ``at`` or
    below (walk, face, Do: :func:`act_on`); ``None`` otherwise. The library's rule is
    ``ripe_step(d, d.max_food - 4, 12 if d.food > 4 else 30)``; a forager called with a low ``at``
    leaves the ripe plants to the teammates that cannot eat cows or drink reliably."""
    if d.food > at:
        return None
    ripe = nearest(d, "ripe_plant")
    if ripe is None or distance(d.position, ripe) > reach:
        return None
    return act_on(d, ripe)


def first_body(d: ObsData, roles: Sequence[str] = ("forager",), reach: int = 30) -> Point | None:
    """The tile of the nearest downed teammate of one of ``roles`` within ``reach`` (Manhattan), or
    ``None``: whose revive should go first (the forager's brings back the team's food and drink)."""
    for body in downed_teammates(d, reach):
        if body.role in roles:
            return (body.x, body.y)
    return None


def revive_first_step(d: ObsData, roles: Sequence[str] = ("forager",), reach: int = 30) -> int | None:
    """:func:`revive_step` with the bodies of ``roles`` first: while one lies within ``reach`` and can
    be walked to, the other bodies are passed over; otherwise the nearest body, as ``revive_step``."""
    first = first_body(d, roles, reach)
    if first is not None:
        step = revive_step(d, reach=reach, skip=lambda _d, xy: xy != first)
        if step is not None:
            return step
    return revive_step(d, reach=reach)
