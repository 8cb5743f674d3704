"""The skill API of the combat family (SMAX and SMACv2), injected into every combat skill.

Names follow the paper's skills: ``parse_obs``, ``attack``, ``heal``, ``move``, ``find_path``,
``default_action``. Actions are SMACv2 indices (0 no-op, 1 stop, 2-5 move N/S/E/W, 6+j attack j).
"""

from __future__ import annotations

import heapq
import math
import random

from compass.core.types import CURRENT_OBS, AgentView
from compass.games.combat.text import (
    ATTACK_OFFSET,
    DIRECTION_VECTORS,
    DIRECTIONS,
    NOOP,
    STOP,
    AllyUnit,
    EnemyUnit,
    ObsData,
    obs_data_from_view,
    parse_combat_text,
)

FAMILY = "combat"
#: What ``parse_obs`` returns, then the records it holds (the prompts list their fields).
OBSERVATION_TYPES = (ObsData, EnemyUnit, AllyUnit)
#: Every name a combat skill sees; :func:`make_api` builds exactly these, the prompts list them.
EXPORTS: tuple[str, ...] = (
    "parse_obs",
    "attack",
    "heal",
    "move",
    "find_path",
    "default_action",
    "NOOP",
    "STOP",
)
UNIT_CLEARANCE = 0.7  # world units around another unit that a path avoids


def attack(target_id: int) -> int:
    """Action that attacks enemy ``target_id``."""
    return ATTACK_OFFSET + int(target_id)


def heal(target_id: int) -> int:
    """Action that heals ally ``target_id`` (medivacs on SMACv2; same index layout as attack)."""
    return ATTACK_OFFSET + int(target_id)


def move(direction: str) -> int:
    """Action that moves one step ``north|south|east|west``."""
    try:
        return DIRECTIONS[direction.lower()]
    except KeyError:
        raise ValueError(f"unknown direction {direction!r}; use north, south, east or west") from None


def find_path(
    obs_data: ObsData, dx: float, dy: float, target_type: str | None = None, avoid_enemies: bool = False
) -> int | None:
    """First move of an A* path from the unit to a point ``(dx, dy)`` relative to it.

    ``dx``/``dy`` are in the observation's units (fractions of the sight range, like
    ``unit.position``). The local grid has one cell per world unit and spans the sight range;
    cells outside the map and cells occupied by other units are blocked (the target unit's own
    cell stays free when ``target_type`` is given, so a path can end next to it). Points beyond
    the grid are approached through its border. Returns a move action, or ``None`` when the unit
    is already there or no available move makes progress.
    """
    sight = obs_data.own_sight_range or 1.0
    radius = int(math.ceil(sight))
    gx, gy = _clamp_to_grid(dx * sight, dy * sight, radius)
    goal = (int(round(gx)), int(round(gy)))
    if goal == (0, 0):
        return None
    blocked = _blocked_cells(obs_data, sight, radius, goal if target_type else None, avoid_enemies)
    if goal in blocked:
        goal = _nearest_free(goal, blocked, radius)
        if goal is None or goal == (0, 0):
            return None
    first = _astar_first_step(goal, blocked, radius)
    avail = set(obs_data.available_actions)
    if first is not None and first in avail:
        return first
    # The path's first step is unavailable (map edge): take the available move that gets closest.
    best, best_d = None, math.hypot(gx, gy)
    for action, (ux, uy) in DIRECTION_VECTORS.items():
        if action in avail:
            d = math.hypot(gx - ux, gy - uy)
            if d < best_d - 1e-9:
                best, best_d = action, d
    return best


def _clamp_to_grid(x: float, y: float, radius: int) -> tuple[float, float]:
    m = max(abs(x), abs(y))
    if m <= radius:
        return x, y
    return x * radius / m, y * radius / m


def _blocked_cells(
    d: ObsData, sight: float, radius: int, target: tuple[int, int] | None, avoid_enemies: bool
) -> set[tuple[int, int]]:
    blocked: set[tuple[int, int]] = set()
    w, h = d.map_size
    ox, oy = d.own_position[0] * w, d.own_position[1] * h
    for cx in range(-radius, radius + 1):
        for cy in range(-radius, radius + 1):
            if not (0.5 <= ox + cx <= w - 0.5 and 0.5 <= oy + cy <= h - 0.5):
                blocked.add((cx, cy))
    for u in list(d.allies) + list(d.enemies):
        if not u.visible:
            continue
        ux, uy = u.position[0] * sight, u.position[1] * sight
        reach = UNIT_CLEARANCE + (2.0 if avoid_enemies and hasattr(u, "can_attack") else 0.0)
        for cx in range(math.floor(ux - reach), math.ceil(ux + reach) + 1):
            for cy in range(math.floor(uy - reach), math.ceil(uy + reach) + 1):
                if math.hypot(cx - ux, cy - uy) <= reach:
                    blocked.add((cx, cy))
    blocked.discard((0, 0))
    if target is not None:
        blocked.discard(target)
    return blocked


def _nearest_free(
    goal: tuple[int, int], blocked: set[tuple[int, int]], radius: int
) -> tuple[int, int] | None:
    for r in range(1, 2 * radius + 1):
        ring = [
            (goal[0] + i, goal[1] + j)
            for i in range(-r, r + 1)
            for j in range(-r, r + 1)
            if max(abs(i), abs(j)) == r
        ]
        free = [c for c in ring if c not in blocked and max(abs(c[0]), abs(c[1])) <= radius]
        if free:
            return min(free, key=lambda c: (math.hypot(c[0] - goal[0], c[1] - goal[1]), c))
    return None


def _astar_first_step(goal: tuple[int, int], blocked: set[tuple[int, int]], radius: int) -> int | None:
    """4-connected A* from (0, 0); returns the action of the first step, or None if unreachable.

    Among equally short paths the first step goes along the larger remaining offset, so a unit
    that re-plans every step walks a steady line instead of alternating directions.
    """
    start = (0, 0)
    steps = sorted(DIRECTION_VECTORS.items(), key=lambda kv: -(kv[1][0] * goal[0] + kv[1][1] * goal[1]))
    seq = 0  # FIFO among equal (f, g): neighbours pushed first (best-aligned) are expanded first
    frontier = [(abs(goal[0]) + abs(goal[1]), 0, seq, start)]
    first: dict[tuple[int, int], int | None] = {start: None}
    cost = {start: 0}
    while frontier:
        _, g, _, cell = heapq.heappop(frontier)
        if cell == goal:
            return first[cell]
        if g > cost[cell]:
            continue
        for action, (ux, uy) in steps:
            nxt = (cell[0] + ux, cell[1] + uy)
            if nxt in blocked or abs(nxt[0]) > radius or abs(nxt[1]) > radius:
                continue
            ng = g + 1
            if ng < cost.get(nxt, 1 << 30):
                cost[nxt] = ng
                first[nxt] = action if cell == start else first[cell]
                seq += 1
                heapq.heappush(frontier, (ng + abs(goal[0] - nxt[0]) + abs(goal[1] - nxt[1]), ng, seq, nxt))
    return None


def default_action(view: AgentView) -> int:
    """A safe action: attack the nearest enemy in range, else close in on the nearest known one, else stop."""
    if not view.alive:
        return NOOP
    avail = set(view.avail_actions)
    in_range = [e for e in view.enemies if e.can_attack and ATTACK_OFFSET + e.id in avail]
    if in_range:
        return ATTACK_OFFSET + min(in_range, key=lambda e: (e.distance, e.id)).id
    known = sorted(view.enemies, key=lambda e: (e.distance, e.id))
    if known:
        action = find_path(obs_data_from_view(view), known[0].rel_x, known[0].rel_y, known[0].unit_type)
        if action is not None:
            return action
    return STOP if STOP in avail else min(avail)


def make_api(view: AgentView, rng: random.Random) -> dict[str, object]:
    """Exactly the :data:`EXPORTS` names, for one call on ``view``.

    Nothing here reads ``view`` before a helper is called: the prompts' API reference is rendered
    from ``make_api(None, rng)``.
    """
    cached: list[ObsData] = []

    def parse_obs(obs: str) -> ObsData:
        """Structured observation; the agent's own text is served from its view without re-parsing."""
        if obs == CURRENT_OBS or obs is view.text or obs == view.text:  # text read last: it may be lazy
            if not cached:
                cached.append(obs_data_from_view(view))
            return cached[0]
        return parse_combat_text(obs)

    def default(obs: str | None = None) -> int:
        """A safe action: attack the nearest enemy in range, else close in on the nearest known one, else stop."""
        return default_action(view)

    # In EXPORTS order (a test checks the names); one dict display, built per skill call.
    return {
        "parse_obs": parse_obs,
        "attack": attack,
        "heal": heal,
        "move": move,
        "find_path": find_path,
        "default_action": default,
        "NOOP": NOOP,
        "STOP": STOP,
    }
