"""Chores that find the map as they go: among near-equal choices, the one toward unseen ground
(issue 23, item 2; docs/alem.md "Chores toward unseen ground").

main's teams find the ladder down, ores and water mostly by coming upon them while gathering (see
"Down armed, fifth pass"). These helpers change only *which* of the near-equal options an agent
takes: the resource tile whose surroundings it has not seen (:func:`nearest_frontier`), the
frontier tile inside the largest unseen area (:func:`wide_frontier`, the target of
``explore(d, wide=...)``). They read only the agent's own memory.
"""

from __future__ import annotations

import numpy as np

from compass.games.alem.names import BLOCK_NAMES, MAP_SIZE, VIEW_COLS, VIEW_ROWS
from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.knowledge import (
    Point,
    _approachable,
    _coordination_tile,
    distance,
    nearest,
)
from compass.util.grids import pad2d

#: Half the view's width and height: a tile's "surroundings" are what standing on it would show.
VIEW_RX, VIEW_RY = VIEW_COLS // 2, VIEW_ROWS // 2


def unseen_grid(d: ObsData, rx: int = VIEW_RX, ry: int = VIEW_RY) -> np.ndarray | None:
    """For every tile of the current level (``[y, x]``), how many never-seen tiles lie in the
    ``(2 rx + 1) x (2 ry + 1)`` window centred on it (the view from there; off-map counts as seen).
    ``None`` without a memory (parsed text)."""
    mem = d.memory
    if mem is None:
        return None
    unknown = (mem.blocks[mem.level] < 0).astype(np.int32)
    h, w = unknown.shape
    # A summed-area table: each window's sum in four reads.
    sat = np.zeros((h + 1, w + 1), dtype=np.int32)
    sat[1:, 1:] = unknown.cumsum(0).cumsum(1)
    y0 = np.clip(np.arange(h) - ry, 0, h)
    y1 = np.clip(np.arange(h) + ry + 1, 0, h)
    x0 = np.clip(np.arange(w) - rx, 0, w)
    x1 = np.clip(np.arange(w) + rx + 1, 0, w)
    return sat[y1][:, x1] - sat[y0][:, x1] - sat[y1][:, x0] + sat[y0][:, x0]


def unseen_around(d: ObsData, xy: Point, rx: int = VIEW_RX, ry: int = VIEW_RY) -> int:
    """Never-seen tiles of the current level in the view-sized window centred on ``xy`` (what standing
    there would show); 0 off the map or without a memory."""
    x, y = xy
    mem = d.memory
    if mem is None or not (0 <= x < MAP_SIZE and 0 <= y < MAP_SIZE):
        return 0
    # One window: the whole map's summed-area table (unseen_grid) is for many tiles at once.
    return int((mem.blocks[mem.level][max(0, y - ry) : y + ry + 1, max(0, x - rx) : x + rx + 1] < 0).sum())


def nearest_frontier(
    d: ObsData,
    names: str | list[str] | tuple[str, ...],
    slack: int = 0,
    solo: bool = False,
    avoid: set[Point] | frozenset[Point] = frozenset(),
    min_gain: int = 1,
) -> Point | None:
    """:func:`nearest`'s tile, or among the tiles of ``names`` at most ``slack`` steps (Manhattan)
    farther, the one with the most never-seen tiles around it (:func:`unseen_around`), when that is
    at least ``min_gain`` more than around :func:`nearest`'s; ties go to the nearer, then by row and
    column. ``slack=0`` only breaks :func:`nearest`'s ties of distance (it costs no step); ``solo``
    and ``avoid`` as for :func:`nearest`."""
    base = nearest(d, names, solo=solo, avoid=avoid)
    if base is None or d.memory is None:
        return base
    grid = unseen_grid(d)
    reach = distance(d.position, base) + slack
    wanted = (names,) if isinstance(names, str) else tuple(names)
    rows, cols = d.memory._found(wanted)
    close = np.abs(rows - d.y) + np.abs(cols - d.x) <= reach
    best, best_key = base, (-int(grid[base[1], base[0]]) - min_gain + 1, distance(d.position, base), 0, 0)
    for r, c in zip(rows[close].tolist(), cols[close].tolist(), strict=True):
        p = (c, r)
        if p == base or p in avoid:
            continue
        key = (-int(grid[r, c]), distance(d.position, p), r, c)
        if key < best_key and _approachable(d, p) and not (solo and _coordination_tile(d, p)):
            best, best_key = p, key
    return best


def wide_frontier(d: ObsData, weight: float = 4.0, near: str | None = None) -> Point | None:
    """The unseen tile :func:`~compass.games.alem.skill_api.paths.explore` heads for, with each
    tile's score lowered by ``weight`` times the unseen share of the view-sized window around it:
    among frontier tiles at about the same distance, the one inside the largest unseen area rather
    than a small hole in what the agent has seen. ``weight=0`` is plain ``explore``'s choice.
    ``None`` when the agent has seen everything or has no memory."""
    mem = d.memory
    if mem is None:
        return None
    blocks = mem.blocks[mem.level]
    unknown = blocks < 0
    if not unknown.any():
        return None
    rows, cols = np.nonzero(unknown)
    dist = np.abs(rows - d.y) + np.abs(cols - d.x)
    fx, fy = d.facing_xy[0] - d.x, d.facing_xy[1] - d.y
    score = dist - 2 * ((cols - d.x) * fx + (rows - d.y) * fy > 0)
    if near in BLOCK_NAMES:
        pad = pad2d(blocks == BLOCK_NAMES.index(near), 1)
        touch = pad[:-2, 1:-1] | pad[2:, 1:-1] | pad[1:-1, :-2] | pad[1:-1, 2:]
        score = score - 12 * touch[rows, cols]
    if weight:
        grid = unseen_grid(d)
        share = grid[rows, cols] / float((2 * VIEW_RX + 1) * (2 * VIEW_RY + 1))
        score = score - weight * share
    k = int(np.argmin(score))
    return int(cols[k]), int(rows[k])
