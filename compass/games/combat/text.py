"""The combat family's text observation (SMACv2 style), rendered from and parsed back to entities.

Skills receive this text (the paper's ``obs: str``); VLM prompts show it. Rendering and parsing
live together so that ``parse(render(view))`` recovers exactly what a skill needs.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass

from compass.core.types import AgentView, Entity, OwnUnit, wire_plain
from compass.util.rounding import round1, round2, round3

# SMACv2 action vocabulary shared by every combat adapter.
NOOP, STOP, MOVE_NORTH, MOVE_SOUTH, MOVE_EAST, MOVE_WEST = 0, 1, 2, 3, 4, 5
ATTACK_OFFSET = 6
DIRECTIONS = {"north": MOVE_NORTH, "south": MOVE_SOUTH, "east": MOVE_EAST, "west": MOVE_WEST}
DIRECTION_VECTORS = {MOVE_NORTH: (0, 1), MOVE_SOUTH: (0, -1), MOVE_EAST: (1, 0), MOVE_WEST: (-1, 0)}
MELEE_TYPES = frozenset({"zealot", "zergling", "baneling"})
_ID = operator.attrgetter("id")


def _teams_by_id(view: AgentView) -> tuple[list[Entity], list[Entity]]:
    """``view.enemies`` and ``view.allies``, each sorted by id (the text and ``parse_obs`` data
    list units so), from one pass over the entities."""
    enemies, allies = [], []
    for e in view.entities:
        if e.team == "enemy":
            enemies.append(e)
        elif e.team == "ally":
            allies.append(e)
    enemies.sort(key=_ID)
    allies.sort(key=_ID)
    return enemies, allies


def action_name(action: int) -> str:
    """Human-readable name of a combat action index."""
    if action == NOOP:
        return "no-op"
    if action == STOP:
        return "stop"
    for name, idx in DIRECTIONS.items():
        if idx == action:
            return f"move {name.capitalize()}"
    return f"attack Enemy #{action - ATTACK_OFFSET}"


def parse_action_name(text: str) -> int:
    """Inverse of :func:`action_name`."""
    text = text.strip().lower()
    if text == "no-op":
        return NOOP
    if text == "stop":
        return STOP
    if text.startswith("move "):
        return DIRECTIONS[text[5:]]
    m = re.fullmatch(r"attack enemy #(\d+)", text)
    if m:
        return ATTACK_OFFSET + int(m.group(1))
    raise ValueError(f"unknown action name {text!r}")


def _relay_suffix(e: Entity) -> str:
    if e.visible:
        return ""
    ago = "this step" if e.age == 0 else f"{e.age} step{'s' if e.age != 1 else ''} ago"
    return f" [relayed by Ally #{e.source}, {e.hops} hop{'s' if e.hops != 1 else ''}, seen {ago}]"


@dataclass(frozen=True)
class CombatObs:
    """The combat-only part of what an agent observes about its own unit (``AgentView.obs``)."""

    shield: float
    weapon_cooldown: float


_NO_COMBAT_OBS = CombatObs(0.0, 0.0)
wire_plain(CombatObs)  # every view carries one to the isolated sandbox's worker
_new, _set_attr = object.__new__, object.__setattr__


def new_combat_obs(shield: float, weapon_cooldown: float) -> CombatObs:
    """``CombatObs(shield, weapon_cooldown)``, about 2x cheaper (one per agent per step; as
    :func:`compass.core.types.new_entity` builds entities)."""
    obs = _new(CombatObs)
    _set_attr(obs, "__dict__", {"shield": shield, "weapon_cooldown": weapon_cooldown})
    return obs


def render_combat_text(view: AgentView) -> str:
    """SMACv2-style text for one agent, built only from ``view.own`` and ``view.entities``."""
    own = view.own
    cobs = view.obs if isinstance(view.obs, CombatObs) else _NO_COMBAT_OBS
    if not view.alive:
        return (
            f"Step {view.step}. You are Ally #{view.agent_id}, a {own.unit_type}. Your unit is dead.\n"
            "Available actions: " + ", ".join(str(a) for a in sorted(view.avail_actions))
        )
    lines = [
        f"Step {view.step}. You are Ally #{view.agent_id}, a {own.unit_type} "
        f"(shoot range {own.attack_range:.1f}, sight range {own.sight_range:.1f}).",
        f"Own unit: position ({own.x / own.map_width:.3f}, {own.y / own.map_height:.3f}) of the "
        f"{own.map_width:g}x{own.map_height:g} map, "
        f"health {own.health:.2f}, shield {cobs.shield:.2f}, weapon cooldown {cobs.weapon_cooldown:.2f}, "
        f"last action: {action_name(own.last_action)}",
    ]
    avail = set(view.avail_actions)
    for name, idx in DIRECTIONS.items():
        lines.append(f"Can move {name.capitalize()}: {'yes' if idx in avail else 'no'}")
    enemies, allies = _teams_by_id(view)
    for e in enemies:
        lines.append(
            f"Enemy #{e.id}: {e.unit_type}, relative position ({e.rel_x:+.3f}, {e.rel_y:+.3f}), "
            f"distance {e.distance:.3f}, health {e.health:.2f}, shield {e.shield:.2f}, "
            f"can attack: {'yes' if e.can_attack else 'no'}{_relay_suffix(e)}"
        )
    for a in allies:
        lines.append(
            f"Ally #{a.id}: {a.unit_type}, relative position ({a.rel_x:+.3f}, {a.rel_y:+.3f}), "
            f"distance {a.distance:.3f}, health {a.health:.2f}, shield {a.shield:.2f}, "
            f"last action: {action_name(a.last_action)}{_relay_suffix(a)}"
        )
    lines.append("Available actions: " + ", ".join(str(a) for a in sorted(avail)))
    return "\n".join(lines)


# --- parsing -----------------------------------------------------------------------------------

_HEAD = re.compile(r"Step (\d+)\. You are Ally #(\d+), an? (\w+)")
_RANGES = re.compile(r"shoot range ([\d.]+), sight range ([\d.]+)")
_OWN = re.compile(
    r"Own unit: position \(([-\d.]+), ([-\d.]+)\) of the ([\d.]+)x([\d.]+) map, health ([-\d.]+), shield ([-\d.]+), "
    r"weapon cooldown ([-\d.]+), last action: (.+)$"
)
_UNIT = re.compile(
    r"(Enemy|Ally) #(\d+): (\w+), relative position \(([-+\d.]+), ([-+\d.]+)\), distance ([\d.]+), "
    r"health ([-\d.]+), shield ([-\d.]+), (can attack: (yes|no)|last action: ([^\[]+?))"
    r"(?: \[relayed by Ally #(\d+), (\d+) hops?, seen (?:this step|(\d+) steps? ago)\])?$"
)
_MOVE = re.compile(r"Can move (North|South|East|West): (yes|no)")


class Unit:
    """A unit as a skill sees it (``obs_data.allies`` / ``obs_data.enemies``)."""

    __slots__ = (
        "id",
        "unit_type",
        "position",
        "distance",
        "health",
        "shield",
        "last_action",
        "visible",
        "relayed",
        "source",
        "hops",
        "age",
    )

    def __init__(
        self,
        id: int,
        unit_type: str,
        position: tuple[float, float],
        distance: float,
        health: float,
        shield: float,
        last_action: int = 0,
        visible: bool = True,
        source: int | None = None,
        hops: int = 0,
        age: int = 0,
    ) -> None:
        self.id = id
        self.unit_type = unit_type
        self.position = position
        self.distance = distance
        self.health = health
        self.shield = shield
        self.last_action = last_action
        self.visible = visible
        self.relayed = not visible
        self.source = source
        self.hops = hops
        self.age = age

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id}, {self.unit_type}, d={self.distance:.2f}, hp={self.health:.2f})"


class EnemyUnit(Unit):
    """An enemy; only enemies have ``can_attack`` (the paper's skills test ``hasattr(unit, 'can_attack')``)."""

    __slots__ = ("can_attack",)

    def __init__(self, *args, can_attack: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.can_attack = can_attack


class AllyUnit(Unit):
    """A teammate."""

    __slots__ = ()


class ObsData:
    """Structured observation handed to skills by ``parse_obs`` (fields as in the paper's Listing 2)."""

    def __init__(self) -> None:
        self.step = 0
        self.agent_id = 0
        self.alive = True
        self.own_unit_type = ""
        self.own_position = (0.0, 0.0)
        self.map_size = (32.0, 32.0)
        self.own_health = 0.0
        self.own_shield = 0.0
        self.own_weapon_cooldown = 0.0
        self.own_sight_range = 1.0
        self.own_shoot_range = 1.0
        self.last_action = 0
        self.can_move: dict[str, bool] = {}
        self.available_actions: list[int] = []
        self.enemies: list[EnemyUnit] = []
        self.allies: list[AllyUnit] = []

    def __repr__(self) -> str:
        return (
            f"ObsData(agent={self.agent_id}, {self.own_unit_type}, hp={self.own_health:.2f}, "
            f"enemies={self.enemies}, allies={self.allies}, avail={self.available_actions})"
        )


def obs_data_from_view(view: AgentView) -> ObsData:
    """Build ``obs_data`` straight from a view (fast path; equal to parsing its text)."""
    own = view.own
    d = ObsData()
    d.step, d.agent_id, d.alive = view.step, view.agent_id, view.alive
    d.own_unit_type = own.unit_type
    d.available_actions = sorted(view.avail_actions)
    if not view.alive:
        return d  # the text of a dead unit says only that (and its available actions)
    d.own_position = (round3(own.x / own.map_width), round3(own.y / own.map_height))
    d.map_size = (float(own.map_width), float(own.map_height))
    cobs = view.obs if isinstance(view.obs, CombatObs) else _NO_COMBAT_OBS
    d.own_health, d.own_shield = round2(own.health), round2(cobs.shield)
    d.own_weapon_cooldown = round2(cobs.weapon_cooldown)
    d.own_sight_range, d.own_shoot_range = round1(own.sight_range), round1(own.attack_range)
    d.last_action = own.last_action
    avail = set(view.avail_actions)
    d.can_move = {name: idx in avail for name, idx in DIRECTIONS.items()}
    enemies, allies = _teams_by_id(view)
    d.enemies = [_unit_from(_new(EnemyUnit), e, 0) for e in enemies]
    for u, e in zip(d.enemies, enemies, strict=True):
        u.can_attack = e.can_attack
    d.allies = [_unit_from(_new(AllyUnit), a, a.last_action) for a in allies]
    return d


def _unit_from(u: Unit, e: Entity, last_action: int) -> Unit:
    """Fill a new (``__init__`` not run) unit with what ``parse_obs`` reads from entity ``e``:
    the fields ``Unit.__init__`` sets, numbers rounded as the text writes them. About 3x cheaper
    than the constructor, and one is built per unit per agent per step."""
    visible = e.visible
    shield = e.shield
    u.id = e.id
    u.unit_type = e.unit_type
    u.position = (round3(e.rel_x), round3(e.rel_y))
    u.distance = round3(e.distance)
    u.health = round2(e.health)
    u.shield = round2(shield) if shield else shield  # round(0.0, 2) is 0.0 (-0.0 too): no call
    u.last_action = last_action
    u.visible = visible
    u.relayed = not visible
    u.source = None if visible else e.source
    u.hops = 0 if visible else e.hops
    u.age = 0 if visible else e.age
    return u


def parse_combat_text(text: str) -> ObsData:
    """Parse the combat text observation into ``obs_data``. Unknown lines are ignored."""
    d = ObsData()
    for line in text.splitlines():
        line = line.strip()
        if m := _HEAD.match(line):
            d.step, d.agent_id, d.own_unit_type = int(m.group(1)), int(m.group(2)), m.group(3)
            if r := _RANGES.search(line):
                d.own_shoot_range, d.own_sight_range = float(r.group(1)), float(r.group(2))
            d.alive = "Your unit is dead" not in line
        elif m := _OWN.match(line):
            d.own_position = (float(m.group(1)), float(m.group(2)))
            d.map_size = (float(m.group(3)), float(m.group(4)))
            d.own_health, d.own_shield = float(m.group(5)), float(m.group(6))
            d.own_weapon_cooldown = float(m.group(7))
            d.last_action = parse_action_name(m.group(8))
        elif m := _MOVE.match(line):
            d.can_move[m.group(1).lower()] = m.group(2) == "yes"
        elif m := _UNIT.match(line):
            relayed = m.group(12) is not None
            common = dict(
                visible=not relayed,
                source=int(m.group(12)) if relayed else None,
                hops=int(m.group(13)) if relayed else 0,
                age=int(m.group(14)) if relayed and m.group(14) else 0,
            )
            args = (
                int(m.group(2)),
                m.group(3),
                (float(m.group(4)), float(m.group(5))),
                float(m.group(6)),
                float(m.group(7)),
                float(m.group(8)),
            )
            if m.group(1) == "Enemy":
                d.enemies.append(EnemyUnit(*args, 0, can_attack=m.group(10) == "yes", **common))
            else:
                d.allies.append(AllyUnit(*args, parse_action_name(m.group(11)), **common))
        elif line.startswith("Available actions:"):
            rest = line.split(":", 1)[1].strip()
            d.available_actions = [int(x) for x in rest.split(",") if x.strip()]
    return d


def view_from_text(text: str) -> AgentView:
    """The combat :class:`AgentView` a text observation describes.

    Positions in the text are fractions of the map (own unit) and of the sight range (others),
    so absolute entity coordinates are rebuilt from them; everything a skill reads through
    ``parse_obs`` comes out as it would from the original view (``obs_data_from_view`` of the
    result equals ``parse_combat_text(text)``). The view's text is ``text`` itself.
    """
    d = parse_combat_text(text)
    if not d.available_actions:
        raise ValueError("not a combat observation: no 'Available actions:' line")
    own = _own_unit(d)
    entities: list[Entity] = []
    for team, units in (("enemy", d.enemies), ("ally", d.allies)):
        for u in units:
            rx, ry = u.position
            entities.append(
                Entity(
                    id=u.id,
                    team=team,
                    unit_type=u.unit_type,
                    x=own.x + rx * own.sight_range,
                    y=own.y + ry * own.sight_range,
                    rel_x=rx,
                    rel_y=ry,
                    distance=u.distance,
                    health=u.health,
                    shield=u.shield,
                    can_attack=bool(getattr(u, "can_attack", False)),
                    last_action=u.last_action,
                    visible=u.visible,
                    source=u.source,
                    hops=u.hops,
                    age=u.age,
                )
            )
    return AgentView(
        agent_id=d.agent_id,
        family="combat",
        step=d.step,
        alive=d.alive,
        own=own,
        entities=tuple(entities),
        avail_actions=tuple(d.available_actions),
        text=text,
        obs=CombatObs(d.own_shield, d.own_weapon_cooldown),
        text_fn=render_combat_text,
    )


def _own_unit(d: ObsData) -> OwnUnit:
    w, h = d.map_size
    return OwnUnit(
        d.own_unit_type,
        d.own_position[0] * w,
        d.own_position[1] * h,
        d.own_health,
        d.own_sight_range,
        d.own_shoot_range,
        d.last_action,
        w,
        h,
    )
