"""Surviving the night: recognising an enclosure, digging out, finding or digging a 2-tile tunnel
and sealing it with stone before sleeping (uses the agent's memory of the map)."""

from __future__ import annotations

from compass.games.alem.names import DO, MAP_SIZE, NOOP, PLACE_ACTIONS, SLEEP
from compass.games.alem.obs import ObsData
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
    team_alive,
    walkable,
)
from compass.games.alem.skill_api.paths import path_to
from compass.util.grids import pad2d

_STONE_ID = 4  # BlockType.STONE


def enclosed(d: ObsData, max_tiles: int = 3, walls_only: bool = False) -> bool:
    """Whether the agent is walled in: it can reach at most ``max_tiles`` open tiles (teammates block).

    A sealed 2-tile tunnel counts, so creatures cannot reach the agent (unseen tiles count as open).
    ``walls_only``: teammates do not count as walls (one standing in a corridor's mouth walks away
    later, and an agent that fell asleep behind it then sleeps in the open).
    """
    mates = set() if walls_only else {(t.x, t.y) for t in team_alive(d)}
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


def dig_out(d: ObsData, away_from: Point | None = None) -> int | None:
    """When walled in, face a mineable neighbour (stone, tree...) and dig through it; else None.

    ``away_from`` (e.g. the nearest creature waiting outside): dig through the wall farthest from it,
    so the agent does not open its shelter into the creature's reach.
    """
    if not enclosed(d):
        return None
    walls = []
    for _, dx, dy in STEP_DIRS:
        p = (d.x + dx, d.y + dy)
        name = block_at(d, p)
        if name in RESOURCE_TOOL and can_mine(d, name) and not _coordination_tile(d, p):
            walls.append(p)
    if not walls:
        return None
    if away_from is not None:
        # The wall farthest from it in a straight line (ties keep STEP_DIRS order).
        walls.sort(key=lambda p: -((p[0] - away_from[0]) ** 2 + (p[1] - away_from[1]) ** 2))
    p = walls[0]
    return DO if facing(d, p) else move(direction_to(d.position, p))


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
    stone = pad2d(blocks == _STONE_ID, 3)
    free = mem.walkable_mask(unknown=False)
    solid = pad2d((blocks >= 0) & ~free, 3, True)
    ground = pad2d(free, 3)
    # A coordination tile cannot be mined alone (a hard sync needs 2-3 agents at once): not a tunnel.
    solo = pad2d(mem.coord[mem.level] == 0, 3, True)
    dig = (stone | ground) & solo

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


def sleep_spot(d: ObsData, radius: int = 12, skip_taken: bool = False) -> tuple[Point, Point, Point] | None:
    """A dead-end corridor to sleep in: ``(inner, outer, entrance)`` tiles, nearest first.

    Walk to ``inner``, step back onto ``outer`` (now facing ``entrance``), place stone on the
    entrance: the two corridor tiles are sealed. Uses the agent's memory of the map. A corridor
    whose entrance holds a teammate or creature is skipped; with ``skip_taken`` also one with
    anybody inside (teammates ranking shelters around one base otherwise pick the same corridor,
    and the second waits at the first's door: docs/alem.md "Nights, fifth pass").
    """
    mem = d.memory
    if mem is None:
        return None
    import numpy as np

    blocks = mem.blocks[mem.level]
    known = mem.walkable_mask(unknown=False)
    walk = known | (blocks < 0)  # unseen tiles may be open
    pad = pad2d(walk, 1)
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
                or ({inner, outer, entrance} if skip_taken else {entrance}) & occupied
            ):
                break
            dist = distance(d.position, inner)
            if best is None or dist < best[0]:
                best = (dist, (inner, outer, entrance))
            break
    return best[1] if best else None


def _seal_step(d: ObsData, inner: Point, outer: Point, entrance: Point) -> int | None:
    """Sealing a corridor: on ``outer`` facing ``entrance``, place stone; on either tile, step to
    the other (walking back onto ``outer`` leaves the agent facing the entrance). ``None`` when the
    agent is on neither tile (the caller walks it to ``inner``)."""
    me = d.position
    if me == outer and facing(d, entrance):
        return PLACE_ACTIONS["stone"]
    if me == inner:
        return move(direction_to(inner, outer))
    if me == outer:
        return move(direction_to(outer, inner))
    return None


def _dig_step(d: ObsData, stand: Point, first: Point, second: Point) -> int | None:
    """Digging a 2-tile tunnel: from ``stand`` mine ``first`` and step in, then mine ``second`` and
    step in. ``None`` when the agent is on neither ``stand`` nor ``first``."""
    me = d.position
    for here, ahead in ((stand, first), (first, second)):
        if me == here:
            if walkable(d, ahead, unknown=False):
                return move(direction_to(here, ahead))
            return DO if facing(d, ahead) else move(direction_to(here, ahead))
    return None


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
            step = _seal_step(d, inner, outer, entrance)
            if step is None:
                step = path_to(d, inner, adjacent=False)
            if step is not None:
                return step
    if d.inventory.get("pickaxe", 0) >= 1:
        dig = dig_spot(d, radius)
        if dig is not None:
            stand, first, second = dig
            step = _dig_step(d, stand, first, second)
            if step is not None:
                return step
            if me == second:
                return move(direction_to(second, first))
            step = path_to(d, stand, adjacent=False)
            if step is not None:
                return step
    return None
