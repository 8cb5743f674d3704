"""Fight or keep away: what one agent's blow does to a creature, the creatures it cannot hurt alone,
and keeping out of their reach (docs/alem.md "Nights, seventh pass").

alem's rules (``attack_mob_class_with_elite_coordination``, ``get_player_damage_vector``): a hit
does 1, 2, 3, 5 or 8 physical damage by sword tier (none, wood, stone, iron, diamond), twice that
for the warrior, times ``1 + 0.25 * (strength - 1)``; a soft elite (``coord`` 1) hit alone takes
half; a hard elite (``coord`` 2) takes nothing unless ``max(2, agents_required)`` agents hit it on
the same step. A zombie hits an adjacent agent for 2 every 5 steps and walks toward the nearest
agent within 10 tiles on 3 steps in 4, so an agent that steps away before it is adjacent outruns it.
"""

from __future__ import annotations

import math

from compass.games.alem.names import DIRECTION_ACTIONS, DO
from compass.games.alem.obs import Mob, ObsData
from compass.games.alem.skill_api.actions import move
from compass.games.alem.skill_api.knowledge import (
    RESOURCE_TOOL,
    STEP_DIRS,
    Point,
    _coordination_tile,
    _occupied,
    block_at,
    can_mine,
    direction_to,
    distance,
    facing,
    hostile_mobs,
    team_alive,
    walkable,
)

#: Physical damage of one hit by sword tier (alem's ``get_player_damage_vector``).
SWORD_DAMAGE = (1, 2, 3, 5, 8)


def melee_damage(d: ObsData) -> float:
    """Damage one hit of this agent does to a creature with no defence (overworld, level 1)."""
    tier = max(0, min(int(d.inventory.get("sword", 0)), len(SWORD_DAMAGE) - 1))
    damage = SWORD_DAMAGE[tier] * (2 if d.role == "warrior" else 1)
    return damage * (1 + 0.25 * (d.attributes.get("strength", 1) - 1))


def hitters(d: ObsData, m: Mob, reach: int = 1) -> int:
    """Agents that can hit ``m`` on one step: this one and the living teammates within ``reach`` of it."""
    return 1 + sum(distance((t.x, t.y), (m.x, m.y)) <= reach for t in team_alive(d))


def can_hurt(d: ObsData, m: Mob, reach: int = 1) -> bool:
    """Whether hitting ``m`` does damage: always, except a hard elite (``coord`` 2) without
    ``max(2, agents_required)`` hitters (this agent and teammates within ``reach`` tiles of it)."""
    return m.coord != 2 or hitters(d, m, reach) >= max(2, m.agents_required)


def strikes_to_kill(d: ObsData, m: Mob) -> int | None:
    """Hits this agent alone needs to kill ``m`` (a soft elite takes half); ``None`` for a hard elite."""
    if m.coord == 2:
        return None
    damage = melee_damage(d) * (0.5 if m.coord == 1 else 1.0)
    return max(1, math.ceil(m.health / damage - 1e-9))


def untouchable(d: ObsData, within: int = 6, reach: int = 2) -> list[Mob]:
    """Hostile melee creatures within ``within`` tiles that this agent cannot hurt now (hard elites
    without enough teammates within ``reach`` tiles of them to hit together), nearest first."""
    return [m for m in hostile_mobs(d, within) if m.kind == "melee" and not can_hurt(d, m, reach)]


def keep_away_step(d: ObsData, threat: Point, keep: int = 3) -> int | None:
    """Step away from a creature this agent cannot fight, while it is within ``keep`` tiles.

    Takes the free neighbour that is farthest from ``threat`` (never nearer than now; straight away
    before sideways); among equals, the one nearest a teammate (two agents can hurt a hard elite
    together). Skips tiles next to a teammate when it can: alem moves neither of two agents stepping
    onto one tile, and two agents fleeing one zombie into the same tile stood still until it killed
    both (Hard seed 39). Cornered, with a pickaxe: digs through the neighbouring wall farthest from
    ``threat``. ``None`` when the threat is farther than ``keep`` or there is nowhere to go.
    """
    here = distance(d.position, threat)
    if here > keep:
        return None
    occupied = _occupied(d)
    mates = [(t.x, t.y) for t in team_alive(d)]
    options = []
    for name, dx, dy in STEP_DIRS:
        p = (d.x + dx, d.y + dy)
        if p in occupied or not walkable(d, p, unknown=False):
            continue
        away = distance(p, threat)
        if away < here:
            continue
        crowded = any(distance(p, m) == 1 for m in mates)
        # Straight away beats a sideways step at the same Manhattan distance: the creature closes
        # along its longer axis first.
        to_mate = min((distance(p, m) for m in mates), default=0)
        options.append((crowded, -away, -_squared(p, threat), to_mate, DIRECTION_ACTIONS[name]))
    if options:
        return min(options)[-1]
    walls = []
    for _, dx, dy in STEP_DIRS:
        p = (d.x + dx, d.y + dy)
        name = block_at(d, p)
        if name in RESOURCE_TOOL and can_mine(d, name) and not _coordination_tile(d, p):
            walls.append((-distance(p, threat), -_squared(p, threat), p))
    if not walls:
        return None
    p = min(walls)[-1]
    return DO if facing(d, p) else move(direction_to(d.position, p))


def _squared(a: Point, b: Point) -> int:
    """Squared straight-line distance (the tie-break between tiles at one Manhattan distance)."""
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2
