"""The skill API of the ALEM family, injected into every ALEM skill.

A skill is ``def name(obs: str) -> int``. It calls ``parse_obs(obs)`` for an :class:`ObsData`
(status, inventory, role, level, what it sees with coordinates, coordination sites, teammates,
legal actions, its own map memory) and returns an action index (0..55) built with the helpers
below. Coordinates follow the harness text: ``x`` = column (east +), ``y`` = row (south +).

Every helper is plain Python and cheap (path finding is a BFS over at most the 48x48 level).
Helpers that choose a move return ``None`` when they have nothing to do, so skills chain them::

    act = path_to(d, target) or do()
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import replace

from compass.core.types import AgentView
from compass.games.alem.names import (
    ACTION_LABELS,
    BLOCK_NAMES,
    BUILD_ACTIONS,
    BUILD_COSTS,
    CRAFT_ACTIONS,
    DESCEND,
    DIRECTION_ACTIONS,
    DO,
    GIVE,
    MAP_SIZE,
    MOVES,
    N_AGENTS,
    NOOP,
    PLACE_ACTIONS,
    REQUEST_FOOD,
    REQUESTABLE,
    REST,
    SLEEP,
    SOLID_BLOCKS,
    WALKABLE_BLOCKS,
    WALKABLE_IDS,
    action_index,
    action_name,
    give_action,
)
from compass.games.alem.obs import CoordSite, Mob, ObsData, Seen, parse_alem_text

FAMILY = "alem"
ASCEND = 19
Point = tuple[int, int]
STEP_DIRS = (("north", 0, -1), ("south", 0, 1), ("west", -1, 0), ("east", 1, 0))
RESOURCE_TOOL = {"tree": 0, "stone": 1, "coal": 1, "iron": 2, "diamond": 3, "sapphire": 4, "ruby": 4}
RESOURCE_BLOCK = {
    "wood": "tree",
    "stone": "stone",
    "coal": "coal",
    "iron": "iron",
    "diamond": "diamond",
    "sapphire": "sapphire",
    "ruby": "ruby",
    "water": "water",
    "drink": "water",
}
# Resource blocks skills gather from (the block a skill faces and hits with Do).
RESOURCE_BLOCKS = ("tree", "stone", "coal", "iron", "diamond", "sapphire", "ruby")
_WALKABLE_IDS = WALKABLE_IDS
_STONE_ID = 4  # BlockType.STONE


# --------------------------------------------------------------------------- observation
def obs_data_from_view(view: AgentView) -> ObsData:
    """The adapter's structured observation for ``view`` (no parsing), plus relayed creatures."""
    obs = view.obs
    if not isinstance(obs, ObsData):
        return parse_alem_text(view.text, view.agent_id)
    relayed = [e for e in view.entities if e.team == "enemy" and not e.visible]
    if not relayed:
        return obs
    mobs = []
    for e in relayed:
        dx, dy = int(e.x) - obs.x, int(e.y) - obs.y
        kind = "passive" if 100 <= e.id < 200 else "ranged" if e.id >= 300 else "melee"
        mobs.append(Mob(e.id, e.unit_type, kind, int(e.x), int(e.y), dx, dy, abs(dx) + abs(dy), e.health))
    return replace(obs, relayed=mobs)


# --------------------------------------------------------------------------- atomic actions
def noop() -> int:
    """Do nothing."""
    return NOOP


def do() -> int:
    """Interact with the faced tile: chop/mine, attack, drink, eat, revive, hit a coordination target."""
    return DO


def sleep() -> int:
    """Sleep (restores energy; the agent cannot act until energy is full; 2.5x damage taken)."""
    return SLEEP


def rest() -> int:
    """Rest to recover health (needs food, drink and energy above 0)."""
    return REST


def descend() -> int:
    """Go down a level (stand on a ``ladder down`` of a cleared level); all teammates come along."""
    return DESCEND


def ascend() -> int:
    """Go up a level (stand on a ``ladder up``)."""
    return ASCEND


def move(direction: str) -> int:
    """Move one tile ``north|south|east|west``; a blocked move only turns the agent to face that way."""
    try:
        return DIRECTION_ACTIONS[direction.lower()]
    except KeyError:
        raise ValueError(f"unknown direction {direction!r}; use north, south, east or west") from None


def face(direction: str) -> int:
    """Turn toward ``direction`` (same action as ``move``: it only turns when the tile is blocked)."""
    return move(direction)


def place(block: str) -> int:
    """Place ``stone``, ``table``, ``furnace``, ``plant`` (sapling) or ``torch`` on the faced tile."""
    try:
        return PLACE_ACTIONS[block.lower()]
    except KeyError:
        raise ValueError(f"cannot place {block!r}; one of {', '.join(PLACE_ACTIONS)}") from None


def craft(item: str) -> int:
    """Craft ``wood_pickaxe``, ``stone_sword``, ``iron_armour``, ``arrow``, ``torch``... (next to a table)."""
    key = item.lower().replace(" ", "_")
    try:
        return CRAFT_ACTIONS[key]
    except KeyError:
        raise ValueError(f"cannot craft {item!r}; one of {', '.join(CRAFT_ACTIONS)}") from None


def build(structure: str) -> int:
    """Build ``shelter``, ``forge`` or ``beacon`` on the faced construction site."""
    try:
        return BUILD_ACTIONS[structure.lower()]
    except KeyError:
        raise ValueError(f"cannot build {structure!r}; one of {', '.join(BUILD_ACTIONS)}") from None


def request(resource: str) -> int:
    """Ask teammates for one of food, drink, wood, stone, iron, coal, diamond, ruby, sapphire (10 steps)."""
    try:
        return REQUEST_FOOD + REQUESTABLE.index(resource.lower())
    except ValueError:
        raise ValueError(f"cannot request {resource!r}; one of {', '.join(REQUESTABLE)}") from None


def distance(a: Point, b: Point) -> int:
    """Manhattan distance between two ``(x, y)`` tiles."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def direction_to(src: Point, dst: Point) -> str | None:
    """Cardinal direction of ``dst`` from ``src`` when they are 4-adjacent, else None."""
    for name, dx, dy in STEP_DIRS:
        if (src[0] + dx, src[1] + dy) == (dst[0], dst[1]):
            return name
    return None


# --------------------------------------------------------------------------- map knowledge
def _occupied(d: ObsData) -> set[Point]:
    occ = {(m.x, m.y) for m in d.mobs}
    occ |= {(t.x, t.y) for t in d.teammates if t.alive}
    return occ


def block_at(d: ObsData, xy: Point) -> str | None:
    """Block at ``xy`` as this agent knows it (its view, then its memory); None if never seen."""
    for b in d.blocks:
        if (b.x, b.y) == (xy[0], xy[1]) and b.name in _BLOCK_NAMES:
            return b.name
    if d.memory is not None:
        return d.memory.block_at(xy[0], xy[1])
    if abs(xy[0] - d.x) <= 5 and abs(xy[1] - d.y) <= 4:
        return "grass"  # text only lists non-ground blocks: an unlisted tile in view is walkable ground
    return None


_BLOCK_NAMES = frozenset(WALKABLE_BLOCKS | SOLID_BLOCKS | {"water", "lava", "out_of_bounds", "darkness"})


def walkable(d: ObsData, xy: Point, unknown: bool = True) -> bool:
    """Whether the agent could step onto ``xy`` (ignoring creatures); ``unknown`` for unseen tiles."""
    x, y = xy
    if not (0 <= x < MAP_SIZE and 0 <= y < MAP_SIZE):
        return False
    if d.memory is not None:
        return d.memory.walkable(x, y, unknown)
    name = block_at(d, xy)
    return unknown if name is None else name in WALKABLE_BLOCKS


def nearest(d: ObsData, names: str | list[str] | tuple[str, ...], remembered: bool = True) -> Point | None:
    """Closest reachable tile of the given block name(s): visible first, else from memory (``remembered``).

    A solid target (tree, water, table...) counts only when one of its neighbours is open ground
    (or unseen), so the agent can stand next to it; walkable targets (ladders, ground) always count.
    """
    wanted = {names} if isinstance(names, str) else set(names)
    seen = sorted((b for b in d.blocks if b.name in wanted), key=lambda b: (b.dist, b.y, b.x))
    for b in seen:
        if _approachable(d, (b.x, b.y)):
            return (b.x, b.y)
    if remembered and d.memory is not None:
        for p in d.memory.nearest_k(tuple(wanted), d.x, d.y, 12):
            if _approachable(d, p):
                return p
    return None


def _approachable(d: ObsData, xy: Point) -> bool:
    if walkable(d, xy, unknown=False) or distance(d.position, xy) <= 1:
        return True
    return any(walkable(d, (xy[0] + dx, xy[1] + dy), unknown=True) for _, dx, dy in STEP_DIRS)


def nearest_seen(d: ObsData, names: str | list[str] | tuple[str, ...]) -> Seen | None:
    """Closest visible block of the given name(s), with its offsets."""
    wanted = {names} if isinstance(names, str) else set(names)
    seen = [b for b in d.blocks if b.name in wanted]
    return min(seen, key=lambda b: (b.dist, b.y, b.x)) if seen else None


def adjacent(d: ObsData, xy: Point) -> bool:
    """Whether ``xy`` is 4-adjacent to the agent."""
    return distance(d.position, xy) == 1


def facing(d: ObsData, xy: Point) -> bool:
    """Whether the agent faces tile ``xy`` (so Do acts on it)."""
    return (d.facing_xy[0], d.facing_xy[1]) == (xy[0], xy[1])


def hostile_mobs(d: ObsData, within: int = 99) -> list:
    """Visible zombies, skeletons and other attackers within Manhattan ``within``, nearest first."""
    return sorted((m for m in d.mobs if m.hostile and m.dist <= within), key=lambda m: (m.dist, m.id))


def passive_mobs(d: ObsData, within: int = 99) -> list:
    """Visible cows (and other passive creatures), nearest first."""
    return sorted((m for m in d.mobs if not m.hostile and m.dist <= within), key=lambda m: (m.dist, m.id))


def team_alive(d: ObsData) -> list:
    """Living teammates."""
    return [t for t in d.teammates if t.alive]


def team_center(d: ObsData) -> Point:
    """Mean position of the living team, this agent included."""
    pts = [d.position] + [(t.x, t.y) for t in team_alive(d)]
    return (round(sum(p[0] for p in pts) / len(pts)), round(sum(p[1] for p in pts) / len(pts)))


def leader_id(d: ObsData) -> int:
    """The lowest-id living agent (the team's convention for who picks shared targets)."""
    ids = [t.id for t in team_alive(d)] + ([d.agent_id] if d.alive else [])
    return min(ids) if ids else d.agent_id


def has_materials(d: ObsData, structure: str) -> bool:
    """Whether this agent's inventory pays for ``structure`` (shelter, forge, beacon)."""
    return all(d.inventory.get(k, 0) >= v for k, v in BUILD_COSTS[structure].items())


def can_mine(d: ObsData, block: str) -> bool:
    """Whether the agent's pickaxe tier is enough for ``block`` (trees need none)."""
    need = RESOURCE_TOOL.get(block)
    return need is not None and d.inventory.get("pickaxe", 0) >= need


# --------------------------------------------------------------------------- path finding
def _bfs(d: ObsData, goals: set[Point], avoid: set[Point], limit: int) -> int | None:
    """First move of a shortest 4-connected path to any goal (BFS), within ``limit`` tiles of both ends."""
    start = d.position
    if start in goals:
        return None
    xs = [start[0]] + [g[0] for g in goals]
    ys = [start[1]] + [g[1] for g in goals]
    x0, x1 = max(0, min(xs) - limit), min(MAP_SIZE - 1, max(xs) + limit)
    y0, y1 = max(0, min(ys) - limit), min(MAP_SIZE - 1, max(ys) + limit)
    mem = d.memory
    first: dict[Point, int] = {start: -1}
    frontier = deque([start])
    while frontier:
        cx, cy = frontier.popleft()
        for _, dx, dy in STEP_DIRS:
            nx, ny = cx + dx, cy + dy
            p = (nx, ny)
            if p in first or not (x0 <= nx <= x1 and y0 <= ny <= y1) or p in avoid:
                continue
            ok = mem.walkable(nx, ny) if mem is not None else walkable(d, p)
            if not ok:
                continue
            first[p] = _move_action(dx, dy) if (cx, cy) == start else first[(cx, cy)]
            if p in goals:
                return first[p]
            frontier.append(p)
    return None


def _move_action(dx: int, dy: int) -> int:
    for action, vec in MOVES.items():
        if vec == (dx, dy):
            return action
    raise ValueError((dx, dy))


def path_to(d: ObsData, target: Point, adjacent: bool = True, avoid_mobs: bool = True) -> int | None:
    """Next action toward ``target``: a move along a shortest known path.

    With ``adjacent`` (default) the goal is a free tile next to ``target`` and, once there, the
    action turns the agent to face it; returns None when already adjacent and facing (ready for
    Do / Build / Place). Unseen tiles count as walkable. Falls back to a greedy step when no
    path is known.
    """
    tx, ty = int(target[0]), int(target[1])
    occupied = _occupied(d)
    avoid = set(occupied) if avoid_mobs else {(t.x, t.y) for t in team_alive(d)}
    if adjacent:
        if distance(d.position, (tx, ty)) == 1:
            if facing(d, (tx, ty)):
                return None
            return move(direction_to(d.position, (tx, ty)))
        goals = {(tx + dx, ty + dy) for _, dx, dy in STEP_DIRS}
        goals = {g for g in goals if g not in occupied and walkable(d, g)}
    else:
        if d.position == (tx, ty):
            return None
        goals = {(tx, ty)}
    avoid -= goals
    if not goals:
        return greedy_step(d, (tx, ty))
    for limit in (6, MAP_SIZE):
        step = _bfs(d, goals, avoid, limit)
        if step is not None:
            return step
    return greedy_step(d, (tx, ty))


def greedy_step(d: ObsData, target: Point) -> int | None:
    """A move that reduces the distance to ``target`` onto a walkable free tile, if any.

    When the way is blocked by something the agent can mine (tree, stone...), it digs: turns to
    face it, then Do.
    """
    occupied = _occupied(d)
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


def _coordination_tile(d: ObsData, xy: Point) -> bool:
    """Whether ``xy`` carries a coordination requirement (digging it alone may fail forever)."""
    if any((c.x, c.y) == (xy[0], xy[1]) for c in d.coord_sites):
        return True
    mem = d.memory
    inside = 0 <= xy[0] < MAP_SIZE and 0 <= xy[1] < MAP_SIZE
    return mem is not None and inside and bool(mem.coord[mem.level, xy[1], xy[0]])


def enclosed(d: ObsData, max_tiles: int = 3) -> bool:
    """Whether the agent is walled in: it can reach at most ``max_tiles`` open tiles (teammates block).

    A sealed 2-tile tunnel counts, so creatures cannot reach the agent (unseen tiles count as open).
    """
    mates = {(t.x, t.y) for t in team_alive(d)}
    region = {d.position}
    frontier = [d.position]
    while frontier:
        cx, cy = frontier.pop()
        for _, dx, dy in STEP_DIRS:
            p = (cx + dx, cy + dy)
            if p in region or p in mates or not walkable(d, p, unknown=True):
                continue
            region.add(p)
            if len(region) > max_tiles:
                return False
            frontier.append(p)
    return True


def dig_out(d: ObsData) -> int | None:
    """When walled in, face a mineable neighbour (stone, tree...) and dig through it; else None."""
    if not enclosed(d):
        return None
    for _, dx, dy in STEP_DIRS:
        p = (d.x + dx, d.y + dy)
        name = block_at(d, p)
        if name in RESOURCE_TOOL and can_mine(d, name) and not _coordination_tile(d, p):
            return DO if facing(d, p) else move(direction_to(d.position, p))
    return None


def is_dusk_or_night(d: ObsData) -> bool:
    """Darkness is coming or here (ALEM's day is 300 steps; darkest around step 210 of each day)."""
    return 140 <= d.step % 300 < 265 or d.light < 0.35


def dig_spot(d: ObsData, radius: int = 25) -> tuple[Point, Point, Point] | None:
    """Where to dig a 2-tile tunnel into stone to sleep in: ``(stand, first, second)``, nearest first.

    From ``stand`` (free ground) mine ``first`` then ``second`` (both stone, with solid tiles on
    their sides and beyond), walk in; :func:`sleep_spot` then finds the corridor to seal. Searches
    the agent's memory of the map (only tiles it has seen count as solid).
    """
    mem = d.memory
    if mem is None:
        return None
    import numpy as np

    blocks = mem.blocks[mem.level]
    h, w = blocks.shape
    stone = np.pad(blocks == _STONE_ID, 3)
    solid = np.pad((blocks >= 0) & ~np.isin(blocks, list(_WALKABLE_IDS)), 3, constant_values=True)
    ground = np.pad(np.isin(blocks, list(_WALKABLE_IDS)), 3)
    dig = stone | ground

    def at(mask, dx, dy):  # mask shifted so that [y, x] reads the tile at (x + dx, y + dy)
        return mask[3 + dy : 3 + dy + h, 3 + dx : 3 + dx + w]

    best = None
    for _, vx, vy in STEP_DIRS:
        px, py = vy, vx  # perpendicular
        # first/second may already be dug out (path), so a half-dug tunnel is still found.
        ok = (
            at(dig, 0, 0)
            & at(dig, vx, vy)
            & at(solid, 2 * vx, 2 * vy)
            & at(ground, -vx, -vy)
            & at(solid, px, py)
            & at(solid, -px, -py)
            & at(solid, vx + px, vy + py)
            & at(solid, vx - px, vy - py)
        )
        for t in team_alive(d):  # a teammate is digging there already
            for k in (-1, 0, 1):
                if 0 <= t.y - k * vy < h and 0 <= t.x - k * vx < w:
                    ok[t.y - k * vy, t.x - k * vx] = False
        rows, cols = np.nonzero(ok)
        if len(rows) == 0:
            continue
        dist = np.abs(cols - vx - d.x) + np.abs(rows - vy - d.y)
        k = int(np.argmin(dist))
        if dist[k] <= radius and (best is None or dist[k] < best[0]):
            c, r = int(cols[k]), int(rows[k])
            best = (int(dist[k]), ((c - vx, r - vy), (c, r), (c + vx, r + vy)))
    return best[1] if best else None


def shelter_step(d: ObsData, radius: int = 25) -> int | None:
    """Next action toward sleeping sealed in a 2-tile tunnel; None when no way is known.

    Enclosed: sleep (Noop once rested). Else, with stone: walk into a known dead-end corridor
    (:func:`sleep_spot`), step back to face its entrance and place stone on it. Else, with a
    pickaxe: dig the tunnel found by :func:`dig_spot` (mine, step in, mine, step in).
    """
    if enclosed(d):
        return SLEEP if d.energy < d.max_energy else NOOP
    me = d.position
    if d.inventory.get("stone", 0) >= 1:
        spot = sleep_spot(d, radius)
        if spot is not None:
            inner, outer, entrance = spot
            if me == outer and facing(d, entrance):
                return PLACE_ACTIONS["stone"]
            if me == inner:
                return move(direction_to(inner, outer))
            if me == outer:
                return move(direction_to(outer, inner))
            step = path_to(d, inner, adjacent=False)
            if step is not None:
                return step
    if d.inventory.get("pickaxe", 0) >= 1:
        dig = dig_spot(d, radius)
        if dig is not None:
            stand, first, second = dig
            for here, ahead in ((stand, first), (first, second)):
                if me == here:
                    if walkable(d, ahead, unknown=False):
                        return move(direction_to(here, ahead))
                    return DO if facing(d, ahead) else move(direction_to(here, ahead))
            if me == second:
                return move(direction_to(second, first))
            step = path_to(d, stand, adjacent=False)
            if step is not None:
                return step
    return None


def sleep_spot(d: ObsData, radius: int = 12) -> tuple[Point, Point, Point] | None:
    """A dead-end corridor to sleep in: ``(inner, outer, entrance)`` tiles, nearest first.

    Walk to ``inner``, step back onto ``outer`` (now facing ``entrance``), place stone on the
    entrance: the two corridor tiles are sealed. Uses the agent's memory of the map.
    """
    mem = d.memory
    if mem is None:
        return None
    import numpy as np

    blocks = mem.blocks[mem.level]
    known = np.isin(blocks, list(_WALKABLE_IDS))
    walk = known | (blocks < 0)  # unseen tiles may be open
    pad = np.pad(walk, 1)
    nbrs = pad[:-2, 1:-1].astype(int) + pad[2:, 1:-1] + pad[1:-1, :-2] + pad[1:-1, 2:]
    occupied = _occupied(d)
    best = None
    y0, y1 = max(0, d.y - radius), min(MAP_SIZE, d.y + radius + 1)
    x0, x1 = max(0, d.x - radius), min(MAP_SIZE, d.x + radius + 1)
    rows, cols = np.nonzero(known[y0:y1, x0:x1] & (nbrs[y0:y1, x0:x1] == 1))
    for r, c in zip((rows + y0).tolist(), (cols + x0).tolist(), strict=True):
        inner = (c, r)
        for _, dx, dy in STEP_DIRS:
            outer = (c + dx, r + dy)
            if not (0 <= outer[0] < MAP_SIZE and 0 <= outer[1] < MAP_SIZE) or not known[outer[1], outer[0]]:
                continue
            if nbrs[outer[1], outer[0]] != 2:
                break
            entrance = (outer[0] + dx, outer[1] + dy)
            if (
                not (0 <= entrance[0] < MAP_SIZE and 0 <= entrance[1] < MAP_SIZE)
                or not walk[entrance[1], entrance[0]]
                or entrance in occupied
            ):
                break
            dist = distance(d.position, inner)
            if best is None or dist < best[0]:
                best = (dist, (inner, outer, entrance))
            break
    return best[1] if best else None


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


def teammate_ahead(d: ObsData) -> bool:
    """Whether a living teammate stands on the faced tile (Do would hurt it)."""
    return any(t.alive and (t.x, t.y) == (d.facing_xy[0], d.facing_xy[1]) for t in d.teammates)


def explore(d: ObsData, rng: random.Random | None = None, near: str | None = None) -> int:
    """Head for the nearest unexplored tile (frontier exploration over the agent's memory).

    ``near`` (a block name, e.g. ``"stone"``) favours unexplored tiles next to known tiles of
    that block: ores hide in stone, so ``explore(d, near="stone")`` looks for coal and iron.
    """
    mem = d.memory
    if mem is not None:
        import numpy as np

        blocks = mem.blocks[mem.level]
        unknown = blocks < 0
        if unknown.any():
            rows, cols = np.nonzero(unknown)
            dist = np.abs(rows - d.y) + np.abs(cols - d.x)
            # Prefer frontier tiles ahead of the agent, so it keeps a heading instead of dithering.
            fx, fy = d.facing_xy[0] - d.x, d.facing_xy[1] - d.y
            score = dist - 2 * ((cols - d.x) * fx + (rows - d.y) * fy > 0)
            if near in BLOCK_NAMES:
                pad = np.pad(blocks == BLOCK_NAMES.index(near), 1)
                touch = pad[:-2, 1:-1] | pad[2:, 1:-1] | pad[1:-1, :-2] | pad[1:-1, 2:]
                score = score - 12 * touch[rows, cols]
            k = int(np.argmin(score))
            step = path_to(d, (int(cols[k]), int(rows[k])), adjacent=False)
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


def free_adjacent_tiles(d: ObsData, target: Point) -> list[Point]:
    """Walkable tiles next to ``target`` that no teammate or creature stands on."""
    occupied = _occupied(d)
    out = []
    for _, dx, dy in STEP_DIRS:
        p = (target[0] + dx, target[1] + dy)
        if p not in occupied and walkable(d, p, unknown=False):
            out.append(p)
    return out


def agents_adjacent(d: ObsData, target: Point, include_self: bool = True) -> int:
    """How many living agents (this one included by default) stand next to ``target``."""
    n = sum(1 for t in team_alive(d) if distance((t.x, t.y), target) == 1)
    return n + (1 if include_self and distance(d.position, target) == 1 else 0)


def coordination_target(
    d: ObsData,
    kinds: tuple[str, ...] = ("sync", "handover"),
    max_required: int = N_AGENTS,
    new_only: bool = True,
) -> CoordSite | None:
    """The coordination site the team should converge on, by a convention every agent can apply.

    Sites next to the team leader (lowest living id) come first, then the one closest to the
    team's centre; construction sites only when someone can pay; with ``new_only``, only sites
    that can still unlock an achievement for this agent. Deterministic tie-breaks, so agents
    seeing the same tiles pick the same one.
    """
    lead = leader_id(d)
    lead_pos = (
        d.position
        if lead == d.agent_id
        else next(((t.x, t.y) for t in d.teammates if t.id == lead), d.position)
    )
    center = team_center(d)
    alive = len(team_alive(d)) + 1
    cands = []
    for s in d.coord_sites:
        if s.kind not in kinds:
            continue
        if s.kind == "sync" and s.required > min(alive, max_required):
            continue
        if s.kind == "handover" and alive < 2:
            continue
        if s.name in WALKABLE_BLOCKS:  # a flag left on open ground: nothing to act on
            continue
        if s.construction and s.name != "construction_in_progress":
            # Someone must pay: this agent, or a teammate already standing there (the payer goes first).
            payer_there = any(distance((t.x, t.y), (s.x, s.y)) == 1 for t in team_alive(d))
            if not any(can_build_here(d, k) or has_materials(d, k) for k in BUILD_COSTS) and not payer_there:
                continue
        elif not s.construction and not can_mine(d, s.name):
            continue
        if new_only and d.achievements and all(a in d.achievements for a in coordination_rewards(s)):
            continue
        cands.append(s)
    if not cands:
        return None
    return min(
        cands, key=lambda s: (distance(lead_pos, (s.x, s.y)) > 1, distance(center, (s.x, s.y)), s.y, s.x)
    )


def near(d: ObsData, xy: Point | None) -> bool:
    """Whether ``xy`` is one of the 8 tiles around the agent (crafting needs the table this close)."""
    return xy is not None and max(abs(xy[0] - d.x), abs(xy[1] - d.y)) == 1


GROUND = frozenset({"grass", "sand", "path", "fire_grass", "ice_grass"})


def facing_free_ground(d: ObsData) -> bool:
    """Whether the faced tile is empty ground (where Place Table/Furnace/Torch/Plant put things)."""
    fx, fy = d.facing_xy
    return d.facing_block in GROUND and (fx, fy) not in _occupied(d)


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


_COORD_MINE = {
    "stone": "STONE",
    "coal": "COAL",
    "iron": "IRON",
    "diamond": "DIAMOND",
    "sapphire": "SAPPHIRE",
    "ruby": "RUBY",
}


def coordination_rewards(site: CoordSite, structure: str = "shelter") -> list[str]:
    """Achievements a participant can unlock at ``site`` (so skills skip sites that pay nothing new)."""
    if site.kind == "handover":
        return ["HANDOVER_COMPLETE"] + ([] if site.construction else ["COORD_MINE_HANDOVER"])
    if site.construction:
        return [f"COORD_BUILD_{structure.upper()}"]
    tier = "SOFT" if site.soft else "HARD"
    out = [f"COORD_{'2' if site.required == 2 else '3'}_AGENTS_{tier}"]
    if site.name in _COORD_MINE:
        out.append(f"COORD_MINE_{_COORD_MINE[site.name]}_{tier}")
    return out


def can_build_here(d: ObsData, structure: str) -> bool:
    """Whether Build ``structure`` is legal now (someone on the team pays; this agent is next to a site)."""
    return BUILD_ACTIONS[structure] in d.legal_indices


# --------------------------------------------------------------------------- actions by name
def action(name: str, agent_id: int) -> int:
    """Index of a harness label (``"Make Wood Pickaxe"``, ``"Give to Agent 2"``) for ``agent_id``."""
    return action_index(name, agent_id)


def default_action(view: AgentView) -> int:
    """A safe legal action: hit an adjacent hostile creature we face, else Noop."""
    if not view.alive or NOOP not in view.avail_actions:
        return NOOP if NOOP in view.avail_actions or not view.avail_actions else view.avail_actions[0]
    d = obs_data_from_view(view)
    for m in d.mobs:
        if m.hostile and facing(d, (m.x, m.y)) and DO in d.legal_indices:
            return DO
    return NOOP


def make_api(view: AgentView, rng: random.Random) -> dict[str, object]:
    """Names injected into an ALEM skill's globals for one call on ``view``."""
    cached: list[ObsData] = []
    agent_id = view.agent_id

    def parse_obs(obs: str) -> ObsData:
        """Structured observation; the agent's own text is served from its view without re-parsing."""
        if obs is view.text or obs == view.text or obs == "current":
            if not cached:
                cached.append(obs_data_from_view(view))
            return cached[0]
        return parse_alem_text(obs)

    def safe_do() -> int:
        """Do on the faced tile, or Noop when a living teammate stands there (Do would hurt it)."""
        return NOOP if teammate_ahead(obs_data_from_view(view)) else DO

    def give(target: int) -> int:
        """Give one unit of what teammate ``target`` requests (legal only while it has a request)."""
        return give_action(agent_id, int(target))

    def action_of(name: str) -> int:
        """Index of a harness action label for this agent."""
        return action_index(name, agent_id)

    def name_of(index: int) -> str:
        """Harness label of an action index for this agent."""
        return action_name(int(index), agent_id)

    def legal(index: int) -> bool:
        """Whether an action index is legal now."""
        return int(index) in view.avail_actions

    return {
        "parse_obs": parse_obs,
        # atomic actions
        "noop": noop,
        "do": safe_do,
        "sleep": sleep,
        "rest": rest,
        "descend": descend,
        "ascend": ascend,
        "move": move,
        "face": face,
        "place": place,
        "craft": craft,
        "build": build,
        "request": request,
        "give": give,
        "action": action_of,
        "action_name": name_of,
        "legal": legal,
        # geometry and knowledge
        "distance": distance,
        "direction_to": direction_to,
        "block_at": block_at,
        "walkable": walkable,
        "nearest": nearest,
        "nearest_seen": nearest_seen,
        "adjacent": adjacent,
        "facing": facing,
        "hostile_mobs": hostile_mobs,
        "passive_mobs": passive_mobs,
        "team_alive": team_alive,
        "team_center": team_center,
        "leader_id": leader_id,
        "has_materials": has_materials,
        "can_mine": can_mine,
        "can_build_here": can_build_here,
        "free_adjacent_tiles": free_adjacent_tiles,
        "agents_adjacent": agents_adjacent,
        "coordination_target": coordination_target,
        "coordination_rewards": coordination_rewards,
        "near": near,
        "facing_free_ground": facing_free_ground,
        "face_free_tile": face_free_tile,
        "teammate_ahead": teammate_ahead,
        "enclosed": enclosed,
        "sleep_spot": sleep_spot,
        "dig_spot": dig_spot,
        "dig_out": dig_out,
        "shelter_step": shelter_step,
        "is_dusk_or_night": is_dusk_or_night,
        # movement
        "path_to": path_to,
        "greedy_step": greedy_step,
        "act_on": act_on,
        "explore": lambda d, near=None: explore(d, rng, near),
        "flee": flee,
        "default_action": lambda obs=None: default_action(view),
        # constants
        "NOOP": NOOP,
        "DO": DO,
        "SLEEP": SLEEP,
        "REST": REST,
        "DESCEND": DESCEND,
        "GIVE": GIVE,
        "ACTION_LABELS": ACTION_LABELS,
        "RESOURCE_BLOCKS": RESOURCE_BLOCKS,
        "BUILD_COSTS": BUILD_COSTS,
    }
