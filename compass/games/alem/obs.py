"""What an ALEM agent perceives, as one structured object (``ObsData``), and its own map memory.

The adapter builds ``ObsData`` from the game state every step (``compass.games.alem.extract``);
:func:`parse_alem_text` rebuilds it from the harness text when a skill is handed text that is not
its own view's (e.g. a prompt example). Both agree on every field the text carries; the state
path also fills what the text leaves out (all visible blocks, mob health, the memory).

Coordinates are the harness's: ``x`` = column (east +), ``y`` = row (south +); ``dx``/``dy`` are
offsets from the agent; ``dist`` is the Manhattan distance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from compass.core.types import wire_journaled, wire_plain
from compass.games.alem.names import (
    ACTION_LABELS,
    BLOCK_ID,
    BLOCK_NAMES,
    INVENTORY_KEYS,
    ITEM_NAMES,
    LEVEL_NAMES,
    MAP_SIZE,
    MELEE_MOB_NAMES,
    PASSIVE_MOB_NAMES,
    RANGED_MOB_NAMES,
    WALKABLE_IDS,
    action_index,
)
from compass.util.grids import isin_ids


@dataclass(frozen=True)
class Seen:
    """A block or placed item in view (``name`` as in the text: ``tree``, ``ladder down``...)."""

    name: str
    x: int
    y: int
    dx: int
    dy: int
    dist: int


@dataclass(frozen=True)
class Mob:
    """A creature in view: ``kind`` passive|melee|ranged; ``coord`` 0 normal, 1 soft elite/large, 2 hard."""

    id: int
    name: str
    kind: str
    x: int
    y: int
    dx: int
    dy: int
    dist: int
    health: float = 0.0
    coord: int = 0
    agents_required: int = 0

    @property
    def hostile(self) -> bool:
        return self.kind != "passive"


@dataclass(frozen=True)
class Teammate:
    """Another agent. Positions are always known (the harness gives off-screen teammates' coordinates)."""

    id: int
    role: str
    x: int
    y: int
    dx: int
    dy: int
    dist: int
    health: float
    alive: bool = True
    on_screen: bool = True
    request: str | None = None  # resource the teammate is requesting (food, wood, ...), if any


@dataclass(frozen=True)
class CoordSite:
    """A tile with a coordination requirement.

    ``kind`` is ``sync`` (``required`` agents act on the same step; ``soft`` = solo works but the
    group gets a bonus) or ``handover`` (one agent starts, another finishes within ``window``).
    ``construction`` sites need a Build action instead of Do.
    """

    name: str
    x: int
    y: int
    dx: int
    dy: int
    dist: int
    kind: str
    required: int = 0
    soft: bool = False
    window: int = 0
    construction: bool = False


@dataclass(frozen=True)
class Handover:
    """A handover a teammate started: finish it (Do, or the same Build) within ``remaining`` steps."""

    x: int
    y: int
    dx: int
    dy: int
    remaining: int
    initiator: int = -1
    building: str = "mining"


_WIRE_LOG = 8  # updates an AlemMemory keeps for the wire: a sender further behind sends it whole


class AlemMemory:
    """One agent's memory of the map: the last block and coordination value seen on every tile.

    Updated by the adapter from the agent's own lit view each step; unknown tiles are -1.
    """

    def __init__(self, num_levels: int, size: int = MAP_SIZE) -> None:
        self.blocks = np.full((num_levels, size, size), -1, dtype=np.int16)
        self.items = np.zeros((num_levels, size, size), dtype=np.int8)  # ladders, torches (ItemType ids)
        self.coord = np.zeros((num_levels, size, size), dtype=np.int16)
        self.seen_step = np.full((num_levels, size, size), -1, dtype=np.int32)
        self.level = 0
        self.step = 0
        # The last updates as the isolated sandbox's wire sends them (wire_since): a step's ~100
        # tiles, where comparing the four arrays with those last sent read ~190 KB every step.
        self._wire_log: list[tuple] = []
        self._wire_start = 0  # how many updates were dropped from the front of the log

    def update(
        self,
        level: int,
        rows: np.ndarray,
        cols: np.ndarray,
        blocks: np.ndarray,
        coord: np.ndarray,
        step: int,
        items: np.ndarray | None = None,
    ) -> None:
        """Record the blocks (ids), items and coordination values seen at map cells ``(rows, cols)``."""
        self.level, self.step = level, step
        self.blocks[level, rows, cols] = blocks
        if items is not None:
            self.items[level, rows, cols] = items
        self.coord[level, rows, cols] = coord
        self.seen_step[level, rows, cols] = step
        _, height, width = self.blocks.shape
        flat = ((level * height + np.asarray(rows)) * width + np.asarray(cols)).astype(np.int32)
        self._wire_log.append(
            (
                level,
                step,
                flat.tobytes(),
                np.asarray(blocks).astype(self.blocks.dtype).tobytes(),
                np.asarray(coord).astype(self.coord.dtype).tobytes(),
                None if items is None else np.asarray(items).astype(self.items.dtype).tobytes(),
            )
        )
        if len(self._wire_log) > _WIRE_LOG:
            del self._wire_log[0]
            self._wire_start += 1

    def wire_version(self) -> int:
        """How many updates this memory has had (:func:`compass.core.types.wire_journaled`)."""
        return self._wire_start + len(self._wire_log)

    def wire_since(self, version: int) -> tuple | None:
        """The updates after ``version`` as the wire sends them; None when no longer kept."""
        if version < self._wire_start:
            return None
        return tuple(self._wire_log[version - self._wire_start :])

    def wire_apply(self, changes: tuple) -> None:
        """Make ``changes`` (:meth:`wire_since`) on this copy (the worker's, read-only arrays)."""
        arrays = (self.blocks, self.items, self.coord, self.seen_step)
        for a in arrays:
            a.flags.writeable = True
        try:
            for level, step, flat, blocks, coord, items in changes:
                idx = np.frombuffer(flat, dtype=np.int32)
                self.blocks.reshape(-1)[idx] = np.frombuffer(blocks, dtype=self.blocks.dtype)
                if items is not None:
                    self.items.reshape(-1)[idx] = np.frombuffer(items, dtype=self.items.dtype)
                self.coord.reshape(-1)[idx] = np.frombuffer(coord, dtype=self.coord.dtype)
                self.seen_step.reshape(-1)[idx] = step
                self.level, self.step = level, step
        finally:
            for a in arrays:
                a.flags.writeable = False

    def block_at(self, x: int, y: int) -> str | None:
        """Name of the block last seen at ``(x, y)`` on the current level, or None if never seen."""
        if not (0 <= x < self.blocks.shape[2] and 0 <= y < self.blocks.shape[1]):
            return "out_of_bounds"
        b = int(self.blocks[self.level, y, x])
        return None if b < 0 else BLOCK_NAMES[b]

    def walkable(self, x: int, y: int, unknown: bool = True) -> bool:
        """Whether a player can stand on ``(x, y)`` as far as the agent knows (``unknown`` if unseen)."""
        if not (0 <= x < self.blocks.shape[2] and 0 <= y < self.blocks.shape[1]):
            return False
        b = int(self.blocks[self.level, y, x])
        return unknown if b < 0 else b in WALKABLE_IDS

    def walkable_mask(self, unknown: bool = True) -> np.ndarray:
        """:meth:`walkable` for every tile of the current level at once, as a ``[y, x]`` bool array."""
        blocks = self.blocks[self.level]
        mask = isin_ids(blocks, WALKABLE_IDS)
        return mask | (blocks < 0) if unknown else mask

    def _found(self, names: str | tuple[str, ...] | list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Row and column indices of the remembered tiles on the current level holding any of the
        given block or item name(s) (a name that is neither matches nothing)."""
        names = [names] if isinstance(names, str) else list(names)
        ids = [BLOCK_ID[n] for n in names if n in BLOCK_ID]
        item_ids = [i for i, n in ITEM_NAMES.items() if n in names]
        hits = isin_ids(self.blocks[self.level], ids)
        if item_ids:
            hits |= isin_ids(self.items[self.level], item_ids)
        return np.nonzero(hits)

    def known(self, names: str | tuple[str, ...] | list[str]) -> list[tuple[int, int]]:
        """All remembered ``(x, y)`` tiles of the given block or item name(s) on the current level."""
        rows, cols = self._found(names)
        return [(int(c), int(r)) for r, c in zip(rows, cols, strict=True)]

    def nearest(self, names: str | tuple[str, ...] | list[str], x: int, y: int) -> tuple[int, int] | None:
        """The remembered tile of the given block or item name(s) closest (Manhattan) to ``(x, y)``."""
        rows, cols = self._found(names)
        if len(rows) == 0:
            return None
        d = np.abs(rows - y) + np.abs(cols - x)
        k = int(np.argmin(d))
        return int(cols[k]), int(rows[k])

    def nearest_k(
        self, names: str | tuple[str, ...] | list[str], x: int, y: int, k: int = 8
    ) -> list[tuple[int, int]]:
        """Up to ``k`` remembered tiles of the given block or item name(s), nearest first."""
        rows, cols = self._found(names)
        if len(rows) == 0:
            return []
        order = np.argsort(np.abs(rows - y) + np.abs(cols - x), kind="stable")[:k]
        return [(int(cols[i]), int(rows[i])) for i in order]

    def coord_tiles(self) -> list[tuple[int, int, int]]:
        """Remembered coordination tiles ``(x, y, value)`` (value > 0 sync count, < 0 handover window)."""
        rows, cols = np.nonzero(self.coord[self.level])
        return [(int(c), int(r), int(self.coord[self.level, r, c])) for r, c in zip(rows, cols, strict=True)]

    def explored_fraction(self) -> float:
        """Share of the current level's tiles ever seen."""
        return float((self.blocks[self.level] >= 0).mean())


@dataclass
class ObsData:
    """Everything a skill may use about one agent at one step (``parse_obs`` returns this)."""

    agent_id: int
    role: str
    step: int
    max_steps: int
    alive: bool
    position: tuple[int, int]
    facing: str
    facing_xy: tuple[int, int]
    do_target: str
    level: int
    level_name: str
    level_cleared: bool
    light: float
    status: dict[str, float]
    attributes: dict[str, int]
    inventory: dict[str, int]
    sleeping: bool = False
    resting: bool = False
    blocks: list[Seen] = field(default_factory=list)
    mobs: list[Mob] = field(default_factory=list)
    teammates: list[Teammate] = field(default_factory=list)
    coord_sites: list[CoordSite] = field(default_factory=list)
    handovers: list[Handover] = field(default_factory=list)
    legal_actions: list[str] = field(default_factory=list)
    legal_indices: list[int] = field(default_factory=list)
    last_action: str | None = None
    new_achievements: list[str] = field(default_factory=list)
    memory: AlemMemory | None = None
    facing_block: str = ""  # block on the tile the agent faces (under any creature standing there)
    my_request: str | None = None  # resource this agent is currently requesting (state only)
    num_levels: int = 9
    achievements: frozenset[str] = frozenset()  # this agent's unlocked achievements (state only)
    relayed: list[Mob] = field(default_factory=list)  # creatures teammates reported (not in own view)
    from_text: bool = False

    # Vital shortcuts, so a skill can write ``obs_data.food < 4``.
    @property
    def health(self) -> float:
        return self.status.get("health", 0.0)

    @property
    def food(self) -> float:
        return self.status.get("food", 0.0)

    @property
    def drink(self) -> float:
        return self.status.get("drink", 0.0)

    @property
    def energy(self) -> float:
        return self.status.get("energy", 0.0)

    @property
    def max_health(self) -> int:
        return 8 + self.attributes.get("strength", 1)

    @property
    def max_food(self) -> int:
        """Food (and drink) capacity: 7 + 2*dexterity, tripled for foragers."""
        return (7 + 2 * self.attributes.get("dexterity", 1)) * (3 if self.role == "forager" else 1)

    @property
    def max_energy(self) -> int:
        return 7 + 2 * self.attributes.get("dexterity", 1)

    @property
    def x(self) -> int:
        return self.position[0]

    @property
    def y(self) -> int:
        return self.position[1]

    def can(self, action: str | int) -> bool:
        """Whether an action (label or index) is legal now."""
        if isinstance(action, int):
            return action in self.legal_indices
        return action.lower() in {a.lower() for a in self.legal_actions}

    def seen(self, name: str) -> list[Seen]:
        """Visible blocks called ``name``, nearest first."""
        return sorted((b for b in self.blocks if b.name == name), key=lambda b: (b.dist, b.y, b.x))

    def nearest_block(self, name: str) -> Seen | None:
        """The nearest visible block called ``name``, or None."""
        found = self.seen(name)
        return found[0] if found else None

    def teammate(self, agent_id: int) -> Teammate | None:
        for t in self.teammates:
            if t.id == agent_id:
                return t
        return None


# What every view carries to the isolated sandbox's worker: pickled there on a shorter path.
wire_plain(Seen, Mob, Teammate, CoordSite, Handover, ObsData)
wire_journaled(AlemMemory)

# ---------------------------------------------------------------------------------------------
# Parsing the harness text back into ObsData
# ---------------------------------------------------------------------------------------------

_XY = r"\(x=(-?\d+), y=(-?\d+)\)"
_POSITION = re.compile(r"^Position: " + _XY, re.M)
_STEP = re.compile(r"^Step: (\d+)/(\d+)", re.M)
_ROLE = re.compile(r"^Role: (\w+)", re.M)
_LOCATION = re.compile(r"^Location: (.+)$", re.M)
_LIGHT = re.compile(r"^- Light: \w+ \(([\d.]+)\)", re.M)
_FACING = re.compile(r"^Facing: (\w+)\.", re.M)
_DO_TARGET = re.compile(r"Do target: (.+?)(?: " + _XY + r")?\.$", re.M)
_LISTED = re.compile(
    r"^- (.+?) ((?:\d+ steps? \w+(?: and \d+ steps? \w+)?)|at your location) " + _XY + r"(.*)$"
)
_TEAMMATE = re.compile(
    r"^Agent (\d+)(?: \((\w+)\))?: (?:off-screen [\w-]+|[^()]*?) ?" + _XY + r", health=(-?[\d.]+)"
)
_DEAD_MATE = re.compile(r"^Agent (\d+) is dead\.")
_REQUEST = re.compile(r"^\s+-> Requesting (\w+)")
_KV = re.compile(r"^- ([\w ]+): (.+)$")
_SYNC = re.compile(r"(works solo but grants a bonus when|requires) (\d+) agents")
_WINDOW = re.compile(r"within (\d+) steps")
_COORD_LINE = re.compile(
    r"^- (.+?) (?:\d+ steps? \w+(?: and \d+ steps? \w+)?|at your location) " + _XY + r": "
)
_ACTIVE_HANDOVER = re.compile(r"^- Active handover .*?" + _XY + r": .* within (\d+) steps")
_MOB_KINDS = {
    **{n: "melee" for n in MELEE_MOB_NAMES},
    **{n: "ranged" for n in RANGED_MOB_NAMES},
    **{n: "passive" for n in PASSIVE_MOB_NAMES},
}
_TIERS = {"wood": 1, "stone": 2, "iron": 3, "diamond": 4}
_SECTIONS = (
    "You see:",
    "Nearby creatures:",
    "Incoming projectiles:",
    "Your projectiles:",
    "Coordination:",
    "Teammates:",
    "Your status:",
    "Attributes:",
    "Your inventory:",
    "Available actions:",
    "Level info:",
)


def _split_sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.strip() in _SECTIONS:
            current = line.strip()
            sections[current] = []
        elif not line.strip():
            current = "" if current not in ("Your status:", "Attributes:", "Teammates:") else current
        elif current:
            sections[current].append(line)
    return sections


def _offset(x: int, y: int, px: int, py: int) -> tuple[int, int, int]:
    return x - px, y - py, abs(x - px) + abs(y - py)


def parse_alem_text(text: str, agent_id: int | None = None) -> ObsData:
    """Rebuild :class:`ObsData` from an ALEM harness observation (blocks are the nearest per type)."""
    m = _POSITION.search(text)
    px, py = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    m = _STEP.search(text)
    step, max_steps = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    m = _ROLE.search(text)
    role = m.group(1) if m else ""
    m = _LOCATION.search(text)
    level, level_name = 0, LEVEL_NAMES[0]
    if m:
        lm = re.search(r"dungeon level (\d+)", m.group(1))
        if lm:
            level = int(lm.group(1))
            level_name = LEVEL_NAMES[level] if level < len(LEVEL_NAMES) else m.group(1)
    m = _LIGHT.search(text)
    light = float(m.group(1)) if m else 1.0
    m = _FACING.search(text)
    facing = m.group(1) if m else "none"
    fvec = {"west": (-1, 0), "east": (1, 0), "north": (0, -1), "south": (0, 1)}.get(facing, (0, 0))
    m = _DO_TARGET.search(text)
    do_target = m.group(1) if m else ""
    sections = _split_sections(text)

    blocks = [_seen(line, px, py) for line in sections.get("You see:", [])]
    mobs = []
    for k, line in enumerate(sections.get("Nearby creatures:", [])):
        lm = _LISTED.match(line)
        if not lm:
            continue
        name, x, y, tail = lm.group(1), int(lm.group(3)), int(lm.group(4)), lm.group(5)
        coord = 2 if "must" in tail else (1 if "bonus" in tail else 0)
        dx, dy, dist = _offset(x, y, px, py)
        mobs.append(Mob(k, name, _MOB_KINDS.get(name, "melee"), x, y, dx, dy, dist, 0.0, coord, 0))

    sites, handovers = [], []
    for line in sections.get("Coordination:", []):
        hm = _ACTIVE_HANDOVER.match(line)
        if hm:
            x, y = int(hm.group(1)), int(hm.group(2))
            dx, dy, _ = _offset(x, y, px, py)
            handovers.append(Handover(x, y, dx, dy, int(hm.group(3))))
            continue
        lm = _COORD_LINE.match(line)
        if not lm:
            continue
        name, x, y = lm.group(1), int(lm.group(2)), int(lm.group(3))
        dx, dy, dist = _offset(x, y, px, py)
        construction = "Build action" in line
        sm = _SYNC.search(line)
        if sm:
            kind, required, soft, window = "sync", int(sm.group(2)), sm.group(1).startswith("works"), 0
        else:
            wm = _WINDOW.search(line)
            kind, required, soft, window = "handover", 0, False, int(wm.group(1)) if wm else 0
        sites.append(CoordSite(name, x, y, dx, dy, dist, kind, required, soft, window, construction))

    mates: list[Teammate] = []
    for line in sections.get("Teammates:", []):
        tm, dm, rm = _TEAMMATE.match(line), _DEAD_MATE.match(line), _REQUEST.match(line)
        if tm:
            x, y = int(tm.group(3)), int(tm.group(4))
            dx, dy, dist = _offset(x, y, px, py)
            mates.append(
                Teammate(
                    int(tm.group(1)),
                    tm.group(2) or "",
                    x,
                    y,
                    dx,
                    dy,
                    dist,
                    float(tm.group(5)),
                    True,
                    "off-screen" not in line,
                )
            )
        elif dm:
            mates.append(Teammate(int(dm.group(1)), "", 0, 0, 0, 0, 0, 0.0, False, False))
        elif rm and mates:
            last = mates[-1]
            mates[-1] = Teammate(
                last.id,
                last.role,
                last.x,
                last.y,
                last.dx,
                last.dy,
                last.dist,
                last.health,
                last.alive,
                last.on_screen,
                rm.group(1),
            )
    if agent_id is None:
        others = {t.id for t in mates}
        missing = [i for i in range(len(others) + 1) if i not in others]
        agent_id = missing[0] if missing else 0

    status = {k: float(v) for k, v in _kv(sections.get("Your status:", [])).items() if _num(v)}
    attributes = {k: int(float(v)) for k, v in _kv(sections.get("Attributes:", [])).items() if _num(v)}
    # The text lists only what the agent has; the state path has every key (zeros included).
    inventory: dict[str, int] = dict.fromkeys(INVENTORY_KEYS, 0)
    for k, v in _kv(sections.get("Your inventory:", [])).items():
        if k in ("pickaxe", "sword"):
            inventory[k] = _TIERS.get(v, 0)
        elif k == "bow":
            inventory[k] = 1
        elif k == "armour":
            inventory[k] = sum(int(n) for n in re.findall(r"(\d+)x", v))
        elif _num(v):
            inventory[k] = int(v)
    legal = [a.strip().lstrip("-").strip() for a in sections.get("Available actions:", [])]
    indices = []
    for a in legal:
        try:
            indices.append(action_index(a, agent_id))
        except ValueError:
            continue
    dead = "Status: dead" in text
    fb = re.search(r"\(on (\w+)\)$", do_target)
    facing_block = fb.group(1) if fb else do_target
    return ObsData(
        agent_id=agent_id,
        role=role,
        step=step,
        max_steps=max_steps,
        alive=not dead,
        position=(px, py),
        facing=facing,
        facing_xy=(px + fvec[0], py + fvec[1]),
        do_target=do_target,
        level=level,
        level_name=level_name,
        level_cleared="Level: cleared" in text,
        light=light,
        status=status,
        attributes=attributes or {"dexterity": 1, "strength": 1, "intelligence": 1},
        inventory=inventory,
        sleeping="Status: sleeping" in text,
        resting="Status: resting" in text,
        blocks=[b for b in blocks if b is not None],
        mobs=mobs,
        teammates=mates,
        coord_sites=sites,
        handovers=handovers,
        legal_actions=legal,
        legal_indices=sorted(indices),
        facing_block=facing_block,
        from_text=True,
    )


def _seen(line: str, px: int, py: int) -> Seen | None:
    lm = _LISTED.match(line)
    if not lm:
        return None
    x, y = int(lm.group(3)), int(lm.group(4))
    dx, dy, dist = _offset(x, y, px, py)
    return Seen(lm.group(1), x, y, dx, dy, dist)


def _kv(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        m = _KV.match(line.strip())
        if m:
            out[m.group(1).strip()] = m.group(2).strip()
    return out


def _num(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


__all__ = [
    "ACTION_LABELS",
    "AlemMemory",
    "CoordSite",
    "Handover",
    "Mob",
    "ObsData",
    "Seen",
    "Teammate",
    "parse_alem_text",
]
