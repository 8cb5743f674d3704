"""Getting somewhere on the ALEM map: shortest known paths (BFS over the agent's memory), greedy
steps that dig through what the agent can mine, frontier exploration, fleeing.

Helpers that choose a move return ``None`` when they have nothing to do, so skills chain them::

    act = path_to(d, target) or do()
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque

from compass.games.alem.names import BLOCK_NAMES, DIRECTION_ACTIONS, DO, MAP_SIZE, MOVES, NOOP
from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.actions import move
from compass.games.alem.skill_api.frontier import wide_frontier
from compass.games.alem.skill_api.knowledge import (
    GROUND,
    RESOURCE_TOOL,
    STEP_DIRS,
    Point,
    _coordination_tile,
    _occupied,
    _teammate_tiles,
    block_at,
    can_mine,
    direction_to,
    distance,
    facing,
    facing_free_ground,
    near,
    team_alive,
    teammate_ahead,
    walkable,
)


def _bfs(
    d: ObsData,
    goals: set[Point],
    avoid: set[Point],
    limit: int,
    costly: frozenset[Point] = frozenset(),
    cost: float = 0,
) -> int | None:
    """First move of a shortest 4-connected path to any goal (BFS), within ``limit`` tiles of both ends.

    Tiles in ``costly`` are passable at ``cost`` extra steps each (a Dijkstra search then)."""
    start = d.position
    if start in goals:
        return None
    xs = [start[0]] + [g[0] for g in goals]
    ys = [start[1]] + [g[1] for g in goals]
    x0, x1 = max(0, min(xs) - limit), min(MAP_SIZE - 1, max(xs) + limit)
    y0, y1 = max(0, min(ys) - limit), min(MAP_SIZE - 1, max(ys) + limit)
    mem = d.memory
    walk = None
    if mem is not None:
        # mem.walkable(x, y) for every tile at once, read as lists: a BFS asks for hundreds of
        # tiles, each a numpy scalar read through the method.
        mask = mem.walkable_mask()
        h, w = mask.shape
        walk = mask.tolist()

    def ok(p: Point) -> bool:
        nx, ny = p
        if walk is not None:
            return 0 <= nx < w and 0 <= ny < h and walk[ny][nx]
        return walkable(d, p)

    if costly:
        return _cheapest(start, goals, avoid, (x0, x1, y0, y1), ok, costly, cost)
    first: dict[Point, int] = {start: -1}
    frontier = deque([start])
    while frontier:
        cx, cy = frontier.popleft()
        for _, dx, dy in STEP_DIRS:
            nx, ny = cx + dx, cy + dy
            p = (nx, ny)
            if p in first or not (x0 <= nx <= x1 and y0 <= ny <= y1) or p in avoid:
                continue
            # Inline, not ok(p): this loop is the hot path of every walking skill.
            if walk is not None:
                passable = 0 <= nx < w and 0 <= ny < h and walk[ny][nx]
            else:
                passable = walkable(d, p)
            if not passable:
                continue
            first[p] = _move_action(dx, dy) if (cx, cy) == start else first[(cx, cy)]
            if p in goals:
                return first[p]
            frontier.append(p)
    return None


def _cheapest(start, goals, avoid, box, ok, costly, cost) -> int | None:
    """:func:`_bfs` with ``costly`` tiles weighing ``1 + cost``: Dijkstra, ties in BFS order."""
    x0, x1, y0, y1 = box
    best: dict[Point, float] = {start: 0}
    first: dict[Point, int] = {start: -1}
    heap: list = [(0, 0, start)]
    order = 1  # insertion order breaks ties, so equal-cost paths are found as the BFS finds them
    while heap:
        c, _, here = heapq.heappop(heap)
        if c > best[here]:
            continue
        if here in goals:
            return first[here]
        cx, cy = here
        for _, dx, dy in STEP_DIRS:
            p = (cx + dx, cy + dy)
            if not (x0 <= p[0] <= x1 and y0 <= p[1] <= y1) or p in avoid or not ok(p):
                continue
            nc = c + 1 + (cost if p in costly else 0)
            if nc < best.get(p, math.inf):
                best[p] = nc
                first[p] = _move_action(dx, dy) if here == start else first[here]
                heapq.heappush(heap, (nc, order, p))
                order += 1
    return None


def _move_action(dx: int, dy: int) -> int:
    for action, vec in MOVES.items():
        if vec == (dx, dy):
            return action
    raise ValueError((dx, dy))


def path_to(
    d: ObsData,
    target: Point,
    adjacent: bool = True,
    avoid_mobs: bool = True,
    mob_cost: float = math.inf,
    bodies: bool = False,
    greedy: bool = True,
) -> int | None:
    """Next action toward ``target``: a move along a shortest known path.

    With ``adjacent`` (default) the goal is a free tile next to ``target`` and, once there, the
    action turns the agent to face it; returns None when already adjacent and facing (ready for
    Do / Build / Place). Unseen tiles count as walkable. Falls back to a greedy step when no
    path is known. Living teammates are walls, and with ``avoid_mobs`` creatures too.

    ``bodies``: teammates' bodies are walls too (alem refuses a move onto one). A finite
    ``mob_cost`` makes a passive creature's tile passable at that many extra steps (hostile ones
    stay walls): a short way round is taken and a long one is not, so the agent walks up to a
    snail in a one-tile corridor and waits for it to move (a move into it only turns the agent)
    instead of pacing where the snail comes into and out of view (seen on Hard seed 17). Both are
    off by default: the library measured neither to pay (docs/alem.md "Walking that does not get
    stuck").

    ``greedy`` False: no greedy fallback, so ``None`` also when no known path leads there (a
    starving agent should not spend its last steps digging at a wall: ``fed.reach_step``).
    """
    tx, ty = int(target[0]), int(target[1])
    occupied = _occupied(d, bodies)
    mates = _teammate_tiles(d, bodies)
    costly: frozenset[Point] = frozenset()
    if not avoid_mobs:
        avoid = set(mates)
    elif math.isinf(mob_cost):
        avoid = set(occupied)
    else:
        # Only creatures that do not attack: a path is not worth a zombie's reach.
        hostile = {(m.x, m.y) for m in d.mobs if m.hostile}
        avoid = mates | hostile
        costly = frozenset(occupied - avoid)
    if adjacent:
        if distance(d.position, (tx, ty)) == 1:
            if facing(d, (tx, ty)):
                return None
            return move(direction_to(d.position, (tx, ty)))
        goals = {(tx + dx, ty + dy) for _, dx, dy in STEP_DIRS}
        # A creature on a goal tile makes it a costly goal, not no goal: else one standing next to
        # the target would send the agent the long way round to the target's other side.
        blocked = avoid if costly else occupied
        goals = {g for g in goals if g not in blocked and walkable(d, g)}
    else:
        if d.position == (tx, ty):
            return None
        goals = {(tx, ty)}
    avoid -= goals
    if not goals:
        return greedy_step(d, (tx, ty), bodies) if greedy else None
    for limit in (6, MAP_SIZE):
        step = _bfs(d, goals, avoid, limit, costly, mob_cost)
        if step is not None:
            return step
    return greedy_step(d, (tx, ty), bodies) if greedy else None


def greedy_step(d: ObsData, target: Point, bodies: bool = False) -> int | None:
    """A move that reduces the distance to ``target`` onto a walkable free tile, if any.

    When the way is blocked by something the agent can mine (tree, stone...), it digs: turns to
    face it, then Do. ``bodies``: teammates' bodies are not free tiles (as in :func:`path_to`).
    """
    occupied = _occupied(d, bodies)
    best = None
    best_d = distance(d.position, target)
    dig = None
    for name, dx, dy in STEP_DIRS:
        p = (d.x + dx, d.y + dy)
        nd = distance(p, target)
        if nd < best_d and p not in occupied and walkable(d, p):
            best, best_d = DIRECTION_ACTIONS[name], nd
        elif (
            nd < distance(d.position, target)
            and dig is None
            and p not in occupied
            and block_at(d, p) in RESOURCE_TOOL
            and can_mine(d, block_at(d, p))
            and not _coordination_tile(d, p)
        ):
            dig = p
    if best is None and dig is not None:
        return DO if facing(d, dig) else move(direction_to(d.position, dig))
    return best


def tunnel_step(d: ObsData, target: Point, dig_cost: float = 2.0, bodies: bool = False) -> int | None:
    """Next action toward standing on ``target`` by the cheapest known way, digging through blocks
    the agent's pickaxe mines (stone and coal with any pickaxe, iron with stone, diamond with iron:
    a dug tile becomes path) where that is shorter than the way round.

    A Dijkstra search over the agent's memory: walkable and unseen tiles cost 1, a diggable tile
    ``1 + dig_cost`` (turn, Do, step in); trees, water, lava, coordination-site tiles, teammates
    and creatures are walls (with ``bodies``, teammates' bodies too: alem's move check counts
    them). The action is the first move, or, when the next tile must be dug,
    the turn to face it and then Do. ``None`` when standing on ``target``; :func:`path_to`'s step
    when the search finds no way. :func:`path_to` walks only round: the overworld's ladders down lie
    on path tiles inside mountains, and on Hard tuning seeds 0-47 armed agents walking to a ladder
    8-12 tiles away (seeds 34, 39) followed detours of 20 tiles and more through unseen ground and
    never arrived (docs/alem.md "Down armed, third pass").
    """
    start = d.position
    goal = (int(target[0]), int(target[1]))
    if start == goal:
        return None
    mem = d.memory
    if mem is None:
        return path_to(d, goal, adjacent=False, bodies=bodies)
    blocks = mem.blocks[mem.level]
    walk = mem.walkable_mask()
    pick = d.inventory.get("pickaxe", 0)
    dig_ids = {
        BLOCK_NAMES.index(b) for b, tier in RESOURCE_TOOL.items() if 1 <= tier <= pick and b in BLOCK_NAMES
    }
    avoid = _occupied(d, bodies=bodies) - {goal}
    h, w = walk.shape
    best: dict[Point, float] = {start: 0.0}
    first: dict[Point, Point] = {}
    heap: list = [(0.0, 0, start)]
    order = 1
    while heap:
        c, _, here = heapq.heappop(heap)
        if here == goal:
            break
        if c > best[here]:
            continue
        for _, dx, dy in STEP_DIRS:
            p = (here[0] + dx, here[1] + dy)
            if not (0 <= p[0] < w and 0 <= p[1] < h) or p in avoid:
                continue
            if walk[p[1], p[0]]:
                nc = c + 1
            elif int(blocks[p[1], p[0]]) in dig_ids and not _coordination_tile(d, p):
                nc = c + 1 + dig_cost
            else:
                continue
            if nc < best.get(p, math.inf):
                best[p] = nc
                first[p] = p if here == start else first[here]
                heapq.heappush(heap, (nc, order, p))
                order += 1
    if goal not in first:
        return path_to(d, goal, adjacent=False, bodies=bodies)
    nxt = first[goal]
    if walk[nxt[1], nxt[0]]:
        return move(direction_to(start, nxt))
    return DO if facing(d, nxt) else move(direction_to(start, nxt))


def act_on(d: ObsData, target: Point, action: int = DO) -> int:
    """Go next to ``target``, face it, then take ``action`` (Do by default; or a Build/Place/attack).

    Never hits a living teammate: Do on a teammate is friendly fire, so it waits instead.
    """
    step = path_to(d, target, adjacent=True)
    if step is not None:
        return step
    if action == DO and teammate_ahead(d):
        return NOOP
    return action


def explore(d: ObsData, rng: random.Random | None = None, near: str | None = None, wide: float = 0.0) -> int:
    """Head for the nearest unexplored tile (frontier exploration over the agent's memory).

    ``near`` (a block name, e.g. ``"stone"``) favours unexplored tiles next to known tiles of
    that block: ores hide in stone, so ``explore(d, near="stone")`` looks for coal and iron.
    ``wide`` (e.g. 4.0) favours, among frontier tiles at about the same distance, the one inside
    the largest unseen area (:func:`~compass.games.alem.skill_api.frontier.wide_frontier`).
    """
    target = wide_frontier(d, weight=wide, near=near)
    if target is not None:
        step = path_to(d, target, adjacent=False)
        if step is not None:
            return step
    moves = [a for a in (1, 2, 3, 4) if a in d.legal_indices]
    free = [
        a
        for a in moves
        if walkable(d, (d.x + MOVES[a][0], d.y + MOVES[a][1]), unknown=True)
        and (d.x + MOVES[a][0], d.y + MOVES[a][1]) not in _occupied(d)
    ]
    pool = free or moves or [NOOP]
    return (rng or random).choice(pool)


def flee(d: ObsData, threat: Point) -> int:
    """Step away from ``threat`` onto a free walkable tile.

    Prefers the tile farthest from every visible hostile creature, then one that keeps the
    distance; when cornered it hits an adjacent attacker (Do) rather than standing still.
    """
    occupied = _occupied(d)
    hostiles = [(m.x, m.y) for m in d.mobs if m.hostile] or [threat]
    here = min(distance(d.position, h) for h in hostiles)
    best, best_score = None, None
    for name, dx, dy in STEP_DIRS:
        p = (d.x + dx, d.y + dy)
        if p in occupied or not walkable(d, p, unknown=False):
            continue
        score = min(distance(p, h) for h in hostiles)
        if score >= here and (best_score is None or score > best_score):
            best, best_score = DIRECTION_ACTIONS[name], score
    if best is not None:
        return best
    for m in d.mobs:
        if m.hostile and m.dist == 1:
            return DO if facing(d, (m.x, m.y)) else move(direction_to(d.position, (m.x, m.y)))
    return NOOP


def face_free_tile(d: ObsData, anchor: Point | None = None) -> int | None:
    """Get to face an empty ground tile while staying next to ``anchor`` (e.g. a table); None if already.

    Placing puts the block on the faced tile, but turning toward walkable ground moves the agent
    onto it; so this steps to a neighbouring tile from which the tile ahead is free ground.
    """
    if facing_free_ground(d) and (anchor is None or near(d, anchor) or distance(d.position, anchor) <= 1):
        return None
    occupied = _occupied(d)
    for name, dx, dy in STEP_DIRS:
        p = (d.x + dx, d.y + dy)
        ahead = (d.x + 2 * dx, d.y + 2 * dy)
        if p in occupied or not walkable(d, p, unknown=False):
            continue
        if anchor is not None and max(abs(p[0] - anchor[0]), abs(p[1] - anchor[1])) > 1:
            continue
        if ahead not in occupied and block_at(d, ahead) in GROUND:
            return DIRECTION_ACTIONS[name]
    for name, dx, dy in STEP_DIRS:  # no good tile next to the anchor: just move somewhere free
        p = (d.x + dx, d.y + dy)
        if p not in occupied and walkable(d, p, unknown=False):
            return DIRECTION_ACTIONS[name]
    return None


def give_way(d: ObsData, step: int) -> int:
    """``step``, or a noop on every other step when it moves onto a tile next to a teammate.

    alem moves neither of two agents that step onto one tile on the same step
    (``is_position_not_colliding_other_player``); two agents walking into each other's way that
    way stood still for 37 steps on Hard seed 13. Waiting every other step
    (by step and id parity) lets the other one through."""
    vec = MOVES.get(step)
    if vec is None:
        return step
    dest = (d.position[0] + vec[0], d.position[1] + vec[1])
    if not walkable(d, dest, unknown=False):
        return step  # a turn to face the site, not a move
    if any(distance((t.x, t.y), dest) == 1 for t in team_alive(d)) and (d.step + d.agent_id) % 2:
        return NOOP
    return step
