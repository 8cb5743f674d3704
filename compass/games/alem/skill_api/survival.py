"""Living through ALEM's nights as a team: when to shelter, a stable shelter to dig or seal, the
stone it takes, a warrior escort, a plant farm by the base, and descending once a level is done.

Why these exist (measured on tuning seeds, see docs/alem.md "How the team plays"): agents died at
dusk and dawn with a pickaxe and stone in hand because the nearest tunnel changed as they moved,
so they chased a new one every few steps with a zombie at their heels; and sleeping in the open
(2.5x damage) ended the rest. Every helper returns an action index, or ``None`` when it has
nothing to do, so skills chain them with ``or``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from compass.games.alem.names import (
    DESCEND,
    DO,
    ITEM_NAMES,
    MAP_SIZE,
    NOOP,
    PLACE_ACTIONS,
    SLEEP,
    give_action,
)
from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.actions import move, request
from compass.games.alem.skill_api.knowledge import (
    STEP_DIRS,
    Point,
    _occupied,
    block_at,
    direction_to,
    distance,
    facing,
    hostile_mobs,
    nearest,
    passive_mobs,
    team_alive,
    walkable,
)
from compass.games.alem.skill_api.paths import act_on, path_to
from compass.games.alem.skill_api.tactics import (
    _STONE_ID,
    _dig_step,
    _seal_step,
    dig_spot,
    enclosed,
    sleep_spot,
)
from compass.util.grids import pad2d

DAY_LENGTH = 300  # ALEM's day: light 0.8 at step 0 of a day, darkest at 210, bright again by ~290


def time_of_day(d: ObsData) -> int:
    """Step within the current day (0..299); nights are dark from about 150 to 270."""
    return d.step % DAY_LENGTH


def shelter_time(d: ObsData, dusk: int = 120, dawn: int = 285) -> bool:
    """Whether the agent should be in (or heading to) its shelter: from ``dusk`` to ``dawn`` in the day.

    Zombies spawn far more in the dark and stay after dawn; going early leaves time to dig in.
    """
    t = time_of_day(d)
    return dusk <= t < dawn if dusk < dawn else (t >= dusk or t < dawn)


def base_anchor(d: ObsData) -> Point:
    """The team's base: the remembered crafting table nearest the map centre (where the team
    spawns), else the agent's own tile. A fixed point, so shelters and farms chosen around it do
    not change while the agent walks."""
    centre = (MAP_SIZE // 2, MAP_SIZE // 2)
    if d.memory is not None:
        tables = d.memory.known("crafting_table")
        if tables:
            return min(tables, key=lambda p: (distance(p, centre), p[1], p[0]))
    return d.position


def shelter_plan(
    d: ObsData, anchor: Point | None = None, radius: int = 25, skip_taken: bool = False
) -> tuple[str, tuple[Point, Point, Point]] | None:
    """The shelter this agent should use: ``("seal", (inner, outer, entrance))`` for a known dead-end
    corridor it can close with one stone, or ``("dig", (stand, first, second))`` for a tunnel to dig
    into stone. Chosen nearest ``anchor`` (default: the agent), so a fixed anchor gives a stable choice;
    ``None`` when the agent lacks the stone or pickaxe that the known spots need. ``skip_taken``:
    pass over corridors a teammate already stands in (:func:`sleep_spot`).
    """
    here = anchor if anchor is not None else d.position
    options: list[tuple[int, str, tuple[Point, Point, Point]]] = []
    if d.inventory.get("stone", 0) >= 1:
        spot = sleep_spot(_at(d, here), radius, skip_taken)
        if spot is not None and distance(d.position, spot[0]) <= radius:
            options.append((distance(here, spot[0]), "seal", spot))
    if d.inventory.get("pickaxe", 0) >= 1:
        spot = dig_spot(_at(d, here), radius)
        if spot is not None and distance(d.position, spot[0]) <= radius:
            # Digging costs two mining steps: prefer a corridor that already exists at equal distance.
            options.append((distance(here, spot[0]) + 2, "dig", spot))
    if not options:
        return None
    # Ties go to sealing: a freshly dug tunnel is then closed instead of dug again.
    _, kind, spot = min(options, key=lambda o: (o[0], o[1] != "seal"))
    return kind, spot


def _at(d: ObsData, xy: Point) -> ObsData:
    """``d`` seen from ``xy`` (only the position changes): spot searches rank by distance to it."""
    if xy == d.position:
        return d
    from dataclasses import replace

    return replace(d, position=(int(xy[0]), int(xy[1])))


def bunker_step(
    d: ObsData,
    anchor: Point | None = None,
    radius: int = 25,
    skip_taken: bool = False,
    walls_only: bool = False,
) -> int | None:
    """Next action toward sleeping sealed in stone, using :func:`shelter_plan` around ``anchor``.

    Enclosed: sleep until energy is full, then wait (Noop) inside. Seal: walk to the corridor's inner
    tile, step back (now facing the entrance) and place stone; a non-miner's failed placement costs
    nothing, so it simply retries. Dig: stand, mine ``first``, step in, mine ``second``, step in, step
    back to face out and seal. ``None`` when no plan is possible (no stone, no pickaxe, no spot).
    ``skip_taken``: pass over corridors a teammate already stands in. ``walls_only``: a teammate in the
    corridor's mouth is no wall (:func:`enclosed`), so the agent seals itself in before sleeping.
    """
    return _shelter_step(d, anchor, radius, skip_taken, walls_only=walls_only)


def rest_step(
    d: ObsData, anchor: Point | None = None, reach: int = 8, skip_taken: bool = True, walls_only: bool = False
) -> int | None:
    """Next action toward sleeping sealed in, for an exhausted agent: the shelter around ``anchor``
    (default the base) when its first tile is within ``reach`` tiles, else the one nearest the agent
    within ``reach``. Enclosed: sleep (Noop once rested). ``None`` when no shelter is that close.

    Why: an agent at energy 0 that sleeps where it stands sleeps until its energy is full (about
    90 steps) and takes 3.5x damage; on Hard tuning seeds every agent that died asleep had slept
    unsealed, most with a pickaxe in hand (docs/alem.md "Nights, fifth pass"). A tunnel a few tiles
    away costs a handful of steps; walking 25 tiles to the base's does not suit an agent at energy 0.
    Corridors a teammate stands in are passed over unless ``skip_taken`` is False; ``walls_only`` as
    in :func:`bunker_step`.
    """
    return _shelter_step(d, anchor, reach, skip_taken, within=reach, walls_only=walls_only)


def _shelter_step(
    d: ObsData,
    anchor: Point | None,
    radius: int,
    skip_taken: bool,
    within: int | None = None,
    walls_only: bool = False,
) -> int | None:
    """:func:`bunker_step` and :func:`rest_step`: sleep when enclosed, else follow the shelter plan
    around ``anchor`` (default the base), or around the agent when that has none or (``within``)
    its first tile lies farther than ``within`` tiles."""
    if enclosed(d, walls_only=walls_only):
        return SLEEP if d.energy < d.max_energy else NOOP
    return _follow_plan(d, bunker_plan(d, anchor, radius, skip_taken, within))


def bunker_plan(
    d: ObsData,
    anchor: Point | None = None,
    radius: int = 25,
    skip_taken: bool = False,
    within: int | None = None,
) -> tuple[str, tuple[Point, Point, Point]] | None:
    """The :func:`shelter_plan` that :func:`bunker_step` and :func:`rest_step` follow: the one around
    ``anchor`` (default the base), else (none there, or with ``within`` its first tile farther than
    ``within`` tiles) the one around the agent; ``None`` when neither exists."""
    plan = shelter_plan(d, anchor if anchor is not None else base_anchor(d), radius, skip_taken)
    if plan is None or (within is not None and distance(d.position, plan[1][0]) > within):
        plan = shelter_plan(d, None, radius, skip_taken)
    return plan


def _follow_plan(d: ObsData, plan: tuple[str, tuple[Point, Point, Point]] | None) -> int | None:
    """The next action of a :func:`shelter_plan` (seal a corridor or dig a tunnel), ``None`` for none."""
    if plan is None:
        return None
    kind, (a, b, c) = plan
    if kind == "seal":
        inner, outer, entrance = a, b, c
        step = _seal_step(d, inner, outer, entrance)
        return step if step is not None else path_to(d, inner, adjacent=False)
    stand, first, second = a, b, c
    step = _dig_step(d, stand, first, second)
    if step is not None:
        return step
    if d.position == second:
        if d.inventory.get("stone", 0) >= 1:
            return move(direction_to(second, first))  # back onto `first`, facing `stand`: seal it next
        return None
    return path_to(d, stand, adjacent=False)


def stone_needed(d: ObsData, reserve: int = 3) -> bool:
    """Whether the agent holds fewer than ``reserve`` stone (each seal costs one) and could mine more."""
    return d.inventory.get("pickaxe", 0) >= 1 and d.inventory.get("stone", 0) < reserve


def escort_step(d: ObsData, ward: int, keep: int = 2) -> int | None:
    """Warrior duty: stay within ``keep`` tiles of teammate ``ward`` and hit creatures that come for it.

    Attacks a hostile creature within 2 tiles of the ward (adjacent to the agent: Do), else walks
    back toward the ward; ``None`` when in place with nothing to hit or the ward is dead/unknown.
    """
    mate = d.teammate(ward)
    if mate is None or not mate.alive:
        return None
    wpos = (mate.x, mate.y)
    threats = [m for m in hostile_mobs(d) if distance((m.x, m.y), wpos) <= 2 and m.coord != 2]
    if threats:
        m = min(threats, key=lambda m: (m.dist, m.id))
        return act_on(d, (m.x, m.y))
    if distance(d.position, wpos) > keep:
        return path_to(d, wpos)
    return None


def farm_step(d: ObsData, anchor: Point | None = None, radius: int = 6, min_food_gap: int = 3) -> int | None:
    """Keep a plant farm by the base: eat a ripe plant near ``anchor`` when short of ``min_food_gap``
    food, else plant a sapling on grass within ``radius`` of it (placing needs a sapling and
    faced grass). ``None`` when there is nothing to do."""
    base = anchor if anchor is not None else base_anchor(d)
    ripe = nearest(d, "ripe_plant")
    if ripe is not None and distance(base, ripe) <= radius + 4 and d.food <= d.max_food - min_food_gap:
        return act_on(d, ripe)
    if d.inventory.get("sapling", 0) >= 1 and distance(d.position, base) <= radius:
        ahead = d.facing_xy
        if d.facing_block == "grass" and not any((m.x, m.y) == tuple(ahead) for m in d.mobs):
            return PLACE_ACTIONS["plant"]
    return None


def sow_step(d: ObsData, anchor: Point | None = None, radius: int = 4, plants: int = 10) -> int | None:
    """Forager's farm work: gather saplings from grass (Do, 1 in 5 for a forager) and plant them
    within ``radius`` of ``anchor`` until ``plants`` grow there (alem keeps at most 10 growing).

    A plant ripens 500 steps after planting and again 500 steps after each meal (+4 food to any role),
    so a farm sown early feeds the team when the forager cannot. Tiles next to ``anchor`` (the
    table) stay free. Walks to the base first; ``None`` when the farm is full or no grass is near.
    """
    base = anchor if anchor is not None else base_anchor(d)
    if d.memory is None:
        return None
    grown = [p for p in d.memory.known(("plant", "ripe_plant")) if distance(p, base) <= radius + 2]
    if len(grown) >= plants:
        return None
    if distance(d.position, base) > radius:
        return path_to(d, base)
    occupied = _occupied(d)

    def plot(xy: Point) -> bool:  # grass by the base where a plant may go
        return block_at(d, xy) == "grass" and xy not in occupied and 1 < distance(xy, base) <= radius

    if plot(tuple(d.facing_xy)):
        return PLACE_ACTIONS["plant"] if d.inventory.get("sapling", 0) >= 1 else DO
    # Moving onto grass faces the tile beyond it: step so that the faced tile is a plot.
    for _, dx, dy in STEP_DIRS:
        step, ahead = (d.x + dx, d.y + dy), (d.x + 2 * dx, d.y + 2 * dy)
        if (
            step not in occupied
            and walkable(d, step, unknown=False)
            and distance(step, base) <= radius
            and plot(ahead)
        ):
            return move(direction_to(d.position, step))
    return None


def descend_step(d: ObsData) -> int | None:
    """Take the team down: on a cleared level, walk to the known ``ladder down`` and Descend (every
    teammate comes along). ``None`` when the level is not cleared, this is the last level, or no
    ladder is known yet (explore to find one)."""
    if not d.level_cleared or d.level + 1 >= d.num_levels:
        return None
    return ladder_step(d, "ladder down", DESCEND)


def ladder_step(
    d: ObsData, ladder: str, action: int, bodies: bool = False, mob_cost: float = math.inf
) -> int | None:
    """Use the nearest known ``ladder`` (``"ladder down"`` / ``"ladder up"``): ``action`` on it (the
    view never lists the agent's own tile, so its memory says when it stands on one), else walk
    there (``bodies`` and ``mob_cost`` as :func:`path_to` takes them). ``None`` when none is known."""
    if standing_on(d, ladder):
        return action
    xy = nearest(d, ladder)
    if xy is None:
        return None
    if d.position == tuple(xy):
        return action
    return path_to(d, xy, adjacent=False, bodies=bodies, mob_cost=mob_cost)


# A team bunker, for three: ``entrance`` (free ground), then ``c1``, ``c2``, ``c3`` dug in a line into
# stone, with two pockets beside ``c2``. Only the miner places stone reliably on Hard (others 1 in
# 10), so it digs the room, waits at the back (``c3``) while the others walk into the pockets, then
# steps back twice (now facing the entrance from ``c1``) and seals it; the forager inside can still
# Give food and drink to the others (Give works at any distance).
TEAM_ROOM_SLOTS = {"forager": 0, "warrior": 1}  # which pocket each role takes (others: the second)


def team_room(
    d: ObsData, anchor: Point | None = None, radius: int = 25
) -> tuple[Point, Point, Point, Point, Point, Point] | None:
    """Where to dig a bunker for the whole team: ``(entrance, c1, c2, c3, pocket_a, pocket_b)``.

    ``entrance`` is known free ground; ``c1``-``c3`` run in a line away from it and the pockets sit
    either side of ``c2``; all five are stone (or already dug) and every tile around them is solid in
    the agent's memory, so once the entrance is sealed the room holds three agents and no creature.
    Nearest ``anchor`` (default: the agent) within ``radius`` of both; ``None`` when none is known.
    """
    mem = d.memory
    if mem is None:
        return None
    import numpy as np

    here = anchor if anchor is not None else d.position
    blocks = mem.blocks[mem.level]
    h, w = blocks.shape
    pad = 4
    stone = pad2d(blocks == _STONE_ID, pad)
    free = mem.walkable_mask(unknown=False)
    solid = pad2d((blocks >= 0) & ~free, pad, True)
    ground = pad2d(free, pad)
    solo = pad2d(mem.coord[mem.level] == 0, pad, True)
    dig = (stone | ground) & solo

    def at(mask, dx, dy):  # [y, x] reads the tile at (x + dx, y + dy); (x, y) is the entrance
        return mask[pad + dy : pad + dy + h, pad + dx : pad + dx + w]

    best = None
    for _, vx, vy in STEP_DIRS:
        px, py = vy, vx  # perpendicular
        ok = at(ground, 0, 0).copy()
        for k in (1, 2, 3):
            ok &= at(dig, k * vx, k * vy)
        for s in (1, -1):
            ok &= at(dig, 2 * vx + s * px, 2 * vy + s * py)  # the pockets
            ok &= at(solid, vx + s * px, vy + s * py)  # beside c1
            ok &= at(solid, 3 * vx + s * px, 3 * vy + s * py)  # beside c3
            ok &= at(solid, 2 * vx + 2 * s * px, 2 * vy + 2 * s * py)  # beyond the pockets
        ok &= at(solid, 4 * vx, 4 * vy)  # beyond c3
        rows, cols = np.nonzero(ok)
        if len(rows) == 0:
            continue
        dist = np.abs(cols - here[0]) + np.abs(rows - here[1])
        reach = np.abs(cols - d.x) + np.abs(rows - d.y)
        dist = np.where((dist <= radius) & (reach <= radius), dist, 10**6)
        k = int(np.argmin(dist))
        if dist[k] < 10**6 and (best is None or dist[k] < best[0]):
            e = (int(cols[k]), int(rows[k]))
            room = tuple((e[0] + i * vx, e[1] + i * vy) for i in (0, 1, 2, 3))
            pockets = ((e[0] + 2 * vx + px, e[1] + 2 * vy + py), (e[0] + 2 * vx - px, e[1] + 2 * vy - py))
            best = (int(dist[k]), room + pockets)
    return best[1] if best else None


def _room_at_miner(d: ObsData, miner: Point) -> tuple[Point, Point, Point, Point, Point, Point] | None:
    """The team room the miner stands in (on ``c1``, ``c2`` or ``c3``), as this agent's memory shows it
    (room tiles may still read as stone here if the agent has not seen them dug)."""
    for _, vx, vy in STEP_DIRS:
        px, py = vy, vx
        for back in (0, 1, 2):  # the miner on c3, c2 or c1
            c3 = (miner[0] + back * vx, miner[1] + back * vy)
            c2 = (c3[0] - vx, c3[1] - vy)
            c1 = (c2[0] - vx, c2[1] - vy)
            e = (c1[0] - vx, c1[1] - vy)
            pa, pb = (c2[0] + px, c2[1] + py), (c2[0] - px, c2[1] - py)
            ring = [(c1[0] + px, c1[1] + py), (c1[0] - px, c1[1] - py), (c3[0] + px, c3[1] + py)]
            ring += [(c3[0] - px, c3[1] - py), (c3[0] + vx, c3[1] + vy)]
            ring += [(pa[0] + px, pa[1] + py), (pb[0] - px, pb[1] - py)]
            if not walkable(d, e, unknown=False) or any(walkable(d, p, unknown=True) for p in ring):
                continue
            if all(walkable(d, p) or block_at(d, p) == "stone" for p in (c1, c2, c3, pa, pb)):
                return e, c1, c2, c3, pa, pb
    return None


def team_bunker_step(
    d: ObsData, anchor: Point | None = None, seal_by: int = 150, radius: int = 25
) -> int | None:
    """Next action toward spending the night sealed in one bunker with the whole team (:func:`team_room`).

    The miner (pickaxe in hand; digging yields the stone) digs the room around ``anchor`` (default
    :func:`base_anchor`), waits at its back until every living teammate stands in a pocket (or the
    day reaches ``seal_by``), then steps back to face the entrance and seals it with stone. The others
    walk to the room once they see the miner in it, wait at its door while it digs, then step into
    their pocket (forager: the first) and wait there. Sealed in: sleep until rested, then wait. ``None`` when there is no team
    bunker for this agent (no living miner, no room known, the miner lacks a pickaxe): fall back
    to :func:`bunker_step`.
    """
    if enclosed(d, 5, walls_only=True):  # a teammate in the doorway of a half-dug room is no wall
        return SLEEP if d.energy < d.max_energy else NOOP
    mates = team_alive(d)
    me = d.position
    if d.role != "miner":
        miner = next((t for t in mates if t.role == "miner"), None)
        if miner is None:
            return None
        room = _room_at_miner(d, (miner.x, miner.y))
        if room is None:
            # Already in a pocket beside the miner (it is stepping back to seal): stay put.
            open_sides = sum(walkable(d, (me[0] + dx, me[1] + dy), unknown=False) for _, dx, dy in STEP_DIRS)
            return NOOP if open_sides == 1 and distance(me, (miner.x, miner.y)) <= 2 else None
        e, c1, c2, _c3, pa, pb = room
        slot = (pa, pb)[TEAM_ROOM_SLOTS.get(d.role, 1)]
        if any(t.role != "miner" and (t.x, t.y) == slot for t in mates):
            slot = pb if slot == pa else pa  # a teammate of the same role took it
        if me == slot:
            return NOOP
        if all(walkable(d, p, unknown=False) for p in (c1, c2, slot)):
            return path_to(d, slot, adjacent=False)
        if me in (e, c1):
            return NOOP  # the miner is still digging ahead: wait at the door
        return path_to(d, e, adjacent=False)  # the room may be out of sight: its dug tiles show from there
    if d.inventory.get("pickaxe", 0) < 1:
        return None  # digging the room yields the stone that seals it
    room = team_room(d, anchor if anchor is not None else base_anchor(d), radius)
    if room is None:
        return None
    e, c1, c2, c3, pa, pb = room
    ready = time_of_day(d) >= seal_by or all((t.x, t.y) in (pa, pb) for t in mates)
    if me == c1 and facing(d, e):
        if d.inventory.get("stone", 0) < 1:
            return None
        return PLACE_ACTIONS["stone"] if ready else NOOP
    if me == c3:
        return move(direction_to(c3, c2)) if ready and not _occupied_by(d, c2) else NOOP
    if me == c2 and facing(d, c1):  # stepping back from c3
        return move(direction_to(c2, c1)) if not _occupied_by(d, c1) else NOOP
    # Dig: each room tile in order from where the miner stands, then wait at the back.
    order = ((e, c1), (c1, c2), (c2, pa), (c2, pb), (c2, c3))
    for here, ahead in order:
        if me == here and not walkable(d, ahead, unknown=False):
            return DO if facing(d, ahead) else move(direction_to(here, ahead))
    for here, ahead in ((e, c1), (c1, c2), (c2, c3)):
        if me == here:
            return move(direction_to(here, ahead))
    if me in (pa, pb):
        return move(direction_to(me, c2))
    return path_to(d, e, adjacent=False)


def _occupied_by(d: ObsData, xy: Point) -> bool:
    return any((t.x, t.y) == (xy[0], xy[1]) for t in team_alive(d)) or any(
        (m.x, m.y) == (xy[0], xy[1]) for m in d.mobs
    )


def standing_on(d: ObsData, item: str) -> bool:
    """Whether the agent's own tile holds ``item`` (``"ladder down"``, ``"ladder up"``, ``"torch"``) as
    its map memory last saw it. The view lists no tile under the agent, so :func:`nearest` never
    returns the agent's own tile: levels have several ladders, and a skill standing on one would
    otherwise walk to the next."""
    if d.memory is None:
        return False
    ids = [k for k, n in ITEM_NAMES.items() if n == item]
    x, y = d.position
    return bool(ids) and int(d.memory.items[d.level, y, x]) in ids


# A room built where the team is, for three: the miner walls in four free tiles by the base with
# stone (only it places stone reliably on Hard), ``door``, ``c1``, ``c2`` in a line and a pocket
# either side of ``c2``. The others wait in the pockets; the miner walks in to ``c2``, steps back
# onto ``c1`` (now facing the door) and seals it. Unlike :func:`team_room` it needs no stone mass:
# any ground by the base will do, the tiles already solid (trees, water, the table, the furnace,
# last night's stones) are walls it does not have to place.
RingRoom = tuple[Point, Point, Point, Point, Point, tuple[Point, ...]]


def ring_room(d: ObsData, anchor: Point | None = None, radius: int = 8) -> RingRoom | None:
    """Where to wall in the team: ``(door, c1, c2, pocket_a, pocket_b, ring)``.

    ``door``, ``c1``, ``c2`` run in a line, the pockets sit either side of ``c2``; all five are known
    free ground (no coordination tile) within ``radius`` of ``anchor`` (default :func:`base_anchor`),
    and ``ring`` is the seven tiles around the four room tiles (the door aside), each either solid or
    free ground to place stone on. The site needing the fewest stones wins (ties: nearest the
    anchor), so a half-built room stays the choice. ``None`` when no site is known.
    """
    mem = d.memory
    if mem is None:
        return None
    import numpy as np

    here = anchor if anchor is not None else base_anchor(d)
    blocks = mem.blocks[mem.level]
    h, w = blocks.shape
    pad = 3
    free = mem.walkable_mask(unknown=False)
    ground = pad2d(free & (mem.coord[mem.level] == 0), pad)
    solid = pad2d((blocks >= 0) & ~free, pad, True)
    wall_ok = ground | solid

    def at(mask, dx, dy):  # [y, x] reads the tile at (x + dx, y + dy); (x, y) is c1
        return mask[pad + dy : pad + dy + h, pad + dx : pad + dx + w]

    ys, xs = np.mgrid[0:h, 0:w]
    near_base = (np.abs(xs - here[0]) + np.abs(ys - here[1])) <= radius
    best = None
    for _, vx, vy in STEP_DIRS:
        px, py = vy, vx  # perpendicular
        room = [(-vx, -vy), (0, 0), (vx, vy), (vx + px, vy + py), (vx - px, vy - py)]
        ring = [
            (px, py),
            (-px, -py),
            (2 * vx, 2 * vy),
            (vx + 2 * px, vy + 2 * py),
            (vx - 2 * px, vy - 2 * py),
        ]
        ring += [(2 * vx + px, 2 * vy + py), (2 * vx - px, 2 * vy - py)]
        ok = near_base.copy()
        for dx, dy in room:
            ok &= at(ground, dx, dy)
        for dx, dy in ring:
            ok &= at(wall_ok, dx, dy)
        rows, cols = np.nonzero(ok)
        if len(rows) == 0:
            continue
        stones = sum(at(ground, dx, dy)[rows, cols].astype(int) for dx, dy in ring)
        cost = 100 * stones + np.abs(cols - here[0]) + np.abs(rows - here[1])
        k = int(np.argmin(cost))
        if best is None or cost[k] < best[0]:
            c1 = (int(cols[k]), int(rows[k]))
            tiles = tuple((c1[0] + dx, c1[1] + dy) for dx, dy in room)
            best = (int(cost[k]), tiles + (tuple((c1[0] + dx, c1[1] + dy) for dx, dy in ring),))
    return best[1] if best else None  # type: ignore[return-value]


def place_at(d: ObsData, target: Point, block: str = "stone") -> int | None:
    """Next action toward placing ``block`` on the free tile ``target``: Place when facing it, else
    walk to a tile two steps from it in a line and step toward it (alem turns an agent only by
    moving, so a free tile is faced by stepping toward it from beyond). ``None`` when no approach
    is known or ``target`` is occupied."""
    occupied = _occupied(d)
    if tuple(target) in occupied or not walkable(d, target, unknown=False):
        return None
    if facing(d, target):
        return PLACE_ACTIONS[block]
    options = []
    for _, dx, dy in STEP_DIRS:
        s, s2 = (target[0] + dx, target[1] + dy), (target[0] + 2 * dx, target[1] + 2 * dy)
        free = [p == d.position or (p not in occupied and walkable(d, p, unknown=False)) for p in (s, s2)]
        if all(free):
            options.append((distance(d.position, s2), s, s2))
    if not options:
        return None
    for _, s, s2 in options:
        if d.position == s2:
            return move(direction_to(s2, s))
        if d.position == s:
            return move(direction_to(s, s2))  # step out, then back in facing the target
    _, s, s2 = min(options)
    return path_to(d, s2, adjacent=False)


def ring_room_step(
    d: ObsData, anchor: Point | None = None, seal_by: int = 170, radius: int = 8, room: RingRoom | None = None
) -> int | None:
    """Next action toward spending the night walled in with the team in :func:`ring_room`.

    The miner places stone on the ring's free tiles, then waits outside the door until every living
    teammate stands in a pocket (or the day reaches ``seal_by``), walks in to ``c2``, steps back onto
    ``c1`` (facing the door) and seals it; short of stone, it mines some near the room first. The
    others walk to their pocket (forager: the first) once the walls are up and the miner is by the
    door, and wait there. Walled in: sleep until rested, then wait. ``None`` when there is no room
    for this agent tonight (no living miner, no site known, the walls not up or the miner away, the
    day past ``seal_by``, or the miner short of stone with none near): fall back to
    :func:`bunker_step`.
    """
    if enclosed(d, 4, walls_only=True):
        return SLEEP if d.energy < d.max_energy else NOOP
    mates = team_alive(d)
    if d.role != "miner" and not any(t.role == "miner" for t in mates):
        return None
    room = room if room is not None else ring_room(d, anchor, radius)
    if room is None:
        return None
    door, c1, c2, pa, pb, ring = room
    me = d.position
    if d.role != "miner":
        slot = (pa, pb)[TEAM_ROOM_SLOTS.get(d.role, 1)]
        if any((t.x, t.y) == slot for t in mates):
            slot = pb if slot == pa else pa
        miner = next(t for t in mates if t.role == "miner")
        walls_up = not any(walkable(d, r, unknown=False) for r in ring)
        if not walls_up or distance((miner.x, miner.y), door) > 3:
            return None  # the room is not ready, or its miner is away: no waiting in the open
        if me in (pa, pb):
            return NOOP
        if time_of_day(d) >= seal_by + 10:
            return None  # sealed without this agent (or never built): its own shelter instead
        return path_to(d, slot, adjacent=False) or NOOP
    todo = [r for r in ring if walkable(d, r, unknown=False)]
    if d.inventory.get("stone", 0) < ring_room_stones(d, room=room):
        # Short of stone: mine some near the room while there is time, else a tunnel of its own.
        walls = set(ring) | {door}
        spot = nearest(d, "stone", solo=True, avoid=walls) if d.inventory.get("pickaxe", 0) >= 1 else None
        if spot is not None and distance(spot, door) <= 12 and time_of_day(d) < seal_by:
            return act_on(d, spot)
        return None
    for r in todo:  # one already faced first: no walking
        if facing(d, r) and r not in _occupied(d):
            return PLACE_ACTIONS["stone"]
    for r in sorted(todo, key=lambda r: distance(me, r)):
        step = place_at(d, r)
        if step is not None:
            return step
    if todo:
        return NOOP  # every approach is blocked for now (a creature, a teammate)
    inside = {(t.x, t.y) for t in mates} <= {pa, pb}
    ready = inside or time_of_day(d) >= seal_by
    if me == c1 and facing(d, door):
        return PLACE_ACTIONS["stone"] if ready and not _occupied_by(d, door) else NOOP
    if me == c2:
        return move(direction_to(c2, c1)) if not _occupied_by(d, c1) else NOOP
    if me == c1:
        return move(direction_to(c1, c2)) if not _occupied_by(d, c2) else NOOP
    if not ready:
        # Wait by the door, off the way in.
        if me == door or distance(me, door) > 2:
            return path_to(d, (2 * door[0] - c1[0], 2 * door[1] - c1[1]), adjacent=False) or NOOP
        return NOOP
    if me == door:
        return move(direction_to(door, c1)) if not _occupied_by(d, c1) else NOOP
    return path_to(d, door, adjacent=False) or NOOP


def ring_room_stones(
    d: ObsData, anchor: Point | None = None, room: RingRoom | None = None, radius: int = 8
) -> int:
    """Stone the miner needs for tonight's :func:`ring_room` (or ``room``): its ring's free tiles
    plus the door (0 when no site is known). A miner holding fewer should mine stone before dusk."""
    room = room if room is not None else ring_room(d, anchor, radius)
    if room is None:
        return 0
    return 1 + sum(walkable(d, r, unknown=False) for r in room[5])


def downed_teammates(d: ObsData, reach: int = 99) -> list:
    """Dead teammates whose body lies within Manhattan ``reach``, nearest first (a teammate can
    revive them: :func:`revive_step`).

    A body stays where the agent fell, and it blocks the tile (alem's move check counts every
    player, dead or alive); Descend and Ascend take the whole team, bodies included, so a body is
    always on the team's level. The text observation does not place a dead teammate ("Agent 2 is
    dead."), so from text this is empty.
    """
    if d.from_text:
        return []
    bodies = [t for t in d.teammates if not t.alive and distance(d.position, (t.x, t.y)) <= reach]
    return sorted(bodies, key=lambda t: (distance(d.position, (t.x, t.y)), t.id))


def revive_step(
    d: ObsData, reach: int = 30, safe_radius: int = 0, skip: Callable[[ObsData, Point], bool] | None = None
) -> int | None:
    """Bring the nearest downed teammate back: walk next to its body, face it, Do.

    alem's rule (``interplayer_interaction`` in ``alem_coop/game_logic.py``): a Do facing the tile
    of a dead player sets its health to 1.0 and counts a revive; it acts again from the next step
    with the food, drink, energy and inventory it died with (so one that starved needs food at
    once: it asks the forager, who gives while it can spare it). ``None`` when no body lies within
    ``reach`` tiles, none can be reached, or (with ``safe_radius`` > 0) a hostile creature is
    within ``safe_radius`` tiles of this agent. ``skip(d, xy)``, when given, passes over the bodies it
    is true for (``below.safe_revive_step`` leaves those a creature would kill again).
    """
    if safe_radius > 0 and hostile_mobs(d, safe_radius):
        return None
    for body in downed_teammates(d, reach):
        xy = (body.x, body.y)
        if skip is not None and skip(d, xy):
            continue
        if distance(d.position, xy) == 1 and facing(d, xy):
            return DO
        step = path_to(d, xy, adjacent=True)
        if step is not None:
            return step
    return None


# Feeding the revived (docs/alem.md "Feeding the revived"): alem revives a body at 1 health with the
# food, drink and energy it died with, and a dead agent cannot request, so one that starved comes
# back at 0 food and dies again within steps unless it asks at once and a teammate gives. Give
# (``trade_materials``) moves one unit per action, at any distance, only to a living teammate whose
# request (10 steps) is open and of that resource.


def refuel_step(d: ObsData, critical: int = 1, reach: int = 8) -> int | None:
    """Food or drink first for an agent at ``critical`` food or drink or below (a revived agent comes
    back as it died): drink at water, or eat a ripe plant (the forager also a cow), within ``reach``
    tiles, else ask the team for it (any living teammate may give, not only the forager) while no
    request of its own is open; the scarcer of the two goes first. ``None`` when neither is that
    low, or nothing is near and no teammate lives to ask (or a request is already open).

    Why: an agent revived at energy 0 slept where it stood with nothing to eat, and starvation took
    its one point of health back.
    """
    needs = [(d.drink, "drink"), (d.food, "food")]
    needs = sorted((n for n in needs if n[0] <= critical), key=lambda n: n[0])
    if not needs:
        return None
    mates = team_alive(d)
    for _, need in needs:
        if need == "drink":
            spot = nearest(d, "water")
        else:
            spot = nearest(d, "ripe_plant")
            cows = [m for m in passive_mobs(d, reach) if m.coord != 2]
            if spot is None and cows and d.role == "forager":  # cows feed only the forager reliably on Hard
                spot = (cows[0].x, cows[0].y)
        if spot is not None and distance(d.position, spot) <= reach:
            step = act_on(d, spot)
            if step is not None:
                return step
        # Nothing near: ask (one action; the request stays open 10 steps), then see to the other need.
        if mates and d.my_request is None:
            return request(need)
    return None


def feed_step(d: ObsData, keep: int = 5, weak: float = 1.0) -> int | None:
    """Give food or drink to a teammate that asks for it while at ``weak`` health or below (a
    revived one comes back at 1), holding more than ``keep`` of it; the weakest first. ``None``
    when no weak teammate asks or this agent cannot spare it.

    Why: the team's usual sharing keeps 7 food and drink, and a teammate just revived at 0 food
    needs a few units at once (one Give moves one unit). Measured on Hard tuning seeds: giving to
    every hurt teammate that asks (``weak=3``, ``keep=3``) drained the givers, who then starved;
    hence the defaults (docs/alem.md "Feeding the revived").
    """
    held = {"food": d.food, "drink": d.drink}
    asking = [t for t in team_alive(d) if t.request in held and t.health <= weak and held[t.request] > keep]
    for t in sorted(asking, key=lambda t: (t.health, t.id)):
        act = give_action(d.agent_id, t.id)
        if act in d.legal_indices:
            return act
    return None
