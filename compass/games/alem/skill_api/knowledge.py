"""What an ALEM agent knows: its observation, geometry, the map as seen and remembered, its team.

Coordinates follow the harness text: ``x`` = column (east +), ``y`` = row (south +).
"""

from __future__ import annotations

from dataclasses import replace

from compass.core.types import AgentView
from compass.games.alem.names import (
    BUILD_ACTIONS,
    BUILD_COSTS,
    MAP_SIZE,
    SOLID_BLOCKS,
    WALKABLE_BLOCKS,
)
from compass.games.alem.obs import Mob, ObsData, Seen, parse_alem_text

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
GROUND = frozenset({"grass", "sand", "path", "fire_grass", "ice_grass"})
_BLOCK_NAMES = frozenset(WALKABLE_BLOCKS | SOLID_BLOCKS | {"water", "lava", "out_of_bounds", "darkness"})


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


# --------------------------------------------------------------------------- geometry
def distance(a: Point, b: Point) -> int:
    """Manhattan distance between two ``(x, y)`` tiles."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def direction_to(src: Point, dst: Point) -> str | None:
    """Cardinal direction of ``dst`` from ``src`` when they are 4-adjacent, else None."""
    for name, dx, dy in STEP_DIRS:
        if (src[0] + dx, src[1] + dy) == (dst[0], dst[1]):
            return name
    return None


def adjacent(d: ObsData, xy: Point) -> bool:
    """Whether ``xy`` is 4-adjacent to the agent."""
    return distance(d.position, xy) == 1


def facing(d: ObsData, xy: Point) -> bool:
    """Whether the agent faces tile ``xy`` (so Do acts on it)."""
    return (d.facing_xy[0], d.facing_xy[1]) == (xy[0], xy[1])


def near(d: ObsData, xy: Point | None) -> bool:
    """Whether ``xy`` is one of the 8 tiles around the agent (crafting needs the table this close)."""
    return xy is not None and max(abs(xy[0] - d.x), abs(xy[1] - d.y)) == 1


# --------------------------------------------------------------------------- the map
def _occupied(d: ObsData, bodies: bool = False) -> set[Point]:
    """Tiles a move cannot enter because something stands there: creatures in view, living
    teammates and, with ``bodies``, teammates' bodies (see :func:`_teammate_tiles`)."""
    occ = {(m.x, m.y) for m in d.mobs}
    occ |= _teammate_tiles(d, bodies)
    return occ


def _teammate_tiles(d: ObsData, bodies: bool = False) -> set[Point]:
    """The tiles of living teammates and, with ``bodies``, of dead ones where the observation
    places them (the state path; parsed text does not). A body blocks its tile: alem's move check
    (``is_in_other_player``) compares against every player's position, alive or dead."""
    bodies = bodies and not d.from_text
    return {(t.x, t.y) for t in d.teammates if t.alive or bodies}


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


def walkable(d: ObsData, xy: Point, unknown: bool = True) -> bool:
    """Whether the agent could step onto ``xy`` (ignoring creatures); ``unknown`` for unseen tiles."""
    x, y = xy
    if not (0 <= x < MAP_SIZE and 0 <= y < MAP_SIZE):
        return False
    if d.memory is not None:
        return d.memory.walkable(x, y, unknown)
    name = block_at(d, xy)
    return unknown if name is None else name in WALKABLE_BLOCKS


def nearest(
    d: ObsData,
    names: str | list[str] | tuple[str, ...],
    remembered: bool = True,
    solo: bool = False,
    avoid: set[Point] | frozenset[Point] = frozenset(),
) -> Point | None:
    """Closest reachable tile of the given block name(s): visible first, else from memory (``remembered``).

    A solid target (tree, water, table...) counts only when one of its neighbours is open ground
    (or unseen), so the agent can stand next to it; walkable targets (ladders, ground) always count.
    With ``solo``, tiles that carry a coordination requirement are skipped: a hard one never yields
    to one agent and a soft one rarely does on Hard, so a lone gatherer would hit it forever.
    Tiles in ``avoid`` are skipped (e.g. the team room's walls, so nobody mines them for stone).
    """
    wanted = {names} if isinstance(names, str) else set(names)
    seen = sorted((b for b in d.blocks if b.name in wanted), key=lambda b: (b.dist, b.y, b.x))
    for b in seen:
        if (b.x, b.y) in avoid:
            continue
        if _approachable(d, (b.x, b.y)) and not (solo and _coordination_tile(d, (b.x, b.y))):
            return (b.x, b.y)
    if remembered and d.memory is not None:
        for p in d.memory.nearest_k(tuple(wanted), d.x, d.y, 12):
            if p not in avoid and _approachable(d, p) and not (solo and _coordination_tile(d, p)):
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


def _coordination_tile(d: ObsData, xy: Point) -> bool:
    """Whether ``xy`` carries a coordination requirement (digging it alone may fail forever)."""
    if any((c.x, c.y) == (xy[0], xy[1]) for c in d.coord_sites):
        return True
    mem = d.memory
    inside = 0 <= xy[0] < MAP_SIZE and 0 <= xy[1] < MAP_SIZE
    return mem is not None and inside and bool(mem.coord[mem.level, xy[1], xy[0]])


def facing_free_ground(d: ObsData) -> bool:
    """Whether the faced tile is empty ground (where Place Table/Furnace/Torch/Plant put things)."""
    fx, fy = d.facing_xy
    return d.facing_block in GROUND and (fx, fy) not in _occupied(d)


def is_dusk_or_night(d: ObsData) -> bool:
    """Darkness is coming or here (ALEM's day is 300 steps; darkest around step 210 of each day)."""
    return 140 <= d.step % 300 < 265 or d.light < 0.35


# --------------------------------------------------------------------------- creatures, team, inventory
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


def teammate_ahead(d: ObsData) -> bool:
    """Whether a living teammate stands on the faced tile (Do would hurt it)."""
    return any(t.alive and (t.x, t.y) == (d.facing_xy[0], d.facing_xy[1]) for t in d.teammates)


def has_materials(d: ObsData, structure: str) -> bool:
    """Whether this agent's inventory pays for ``structure`` (shelter, forge, beacon)."""
    return all(d.inventory.get(k, 0) >= v for k, v in BUILD_COSTS[structure].items())


def can_mine(d: ObsData, block: str) -> bool:
    """Whether the agent's pickaxe tier is enough for ``block`` (trees need none)."""
    need = RESOURCE_TOOL.get(block)
    return need is not None and d.inventory.get("pickaxe", 0) >= need


def can_build_here(d: ObsData, structure: str) -> bool:
    """Whether Build ``structure`` is legal now (someone on the team pays; this agent is next to a site)."""
    return BUILD_ACTIONS[structure] in d.legal_indices
