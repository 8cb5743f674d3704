"""Typed messages agents exchange, and their compact JSON wire form (used for byte accounting)."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from compass.core.types import Entity

# Positions and health go on the wire with 3 decimals: ample for 32-unit maps and [0, 1] health.
DECIMALS = 3
_ENCODER = json.JSONEncoder(separators=(",", ":"))  # ASCII output, so len(str) == bytes


@dataclass(frozen=True, slots=True)
class EntityReport:
    """``sender`` saw entity (``team``, ``id``) at ``step``; ``hops`` counts relays so far."""

    sender: int
    step: int
    team: str
    id: int
    unit_type: str
    x: float
    y: float
    health: float
    shield: float = 0.0
    last_action: int = 0
    hops: int = 0

    @classmethod
    def from_entity(cls, sender: int, step: int, entity: Entity, hops: int = 0) -> EntityReport:
        """The report ``sender`` broadcasts about an entity it sees."""
        # Plain Python numbers: adapters may hand over numpy scalars, which JSON cannot encode.
        return cls(
            int(sender),
            int(step),
            entity.team,
            int(entity.id),
            entity.unit_type,
            float(entity.x),
            float(entity.y),
            float(entity.health),
            float(entity.shield),
            int(entity.last_action),
            int(hops),
        )

    def to_dict(self) -> dict[str, Any]:
        r = DECIMALS
        return {
            "kind": "entity",
            "sender": self.sender,
            "step": self.step,
            "team": self.team,
            "id": self.id,
            "unit_type": self.unit_type,
            "x": round(self.x, r),
            "y": round(self.y, r),
            "health": round(self.health, r),
            "shield": round(self.shield, r),
            "last_action": self.last_action,
            "hops": self.hops,
        }

    def to_json(self) -> str:
        """Compact JSON, floats rounded to :data:`DECIMALS`."""
        return _ENCODER.encode(self.to_dict())

    @property
    def nbytes(self) -> int:
        """Size on the wire (the hop counter is one digit for ``max_hops <= 9``)."""
        return len(self.to_json())


@dataclass(frozen=True, slots=True)
class Intent:
    """``sender``'s current sub-task (and the skill executing it), set at ``step``."""

    sender: int
    step: int
    subtask: str
    skill: str | None = None
    hops: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "intent",
            "sender": self.sender,
            "step": self.step,
            "subtask": self.subtask,
            "skill": self.skill,
            "hops": self.hops,
        }

    def to_json(self) -> str:
        """Compact JSON."""
        return _ENCODER.encode(self.to_dict())

    @property
    def nbytes(self) -> int:
        """Size on the wire."""
        return len(self.to_json())


Message = EntityReport | Intent

_ENTITY_FIELDS = tuple(EntityReport(0, 0, "", 0, "", 0.0, 0.0, 0.0).to_dict())
# Everything but the values: braces, quoted keys, colons, commas (each value "0" is one char).
_ENTITY_FRAME = len(_ENCODER.encode(dict.fromkeys(_ENTITY_FIELDS, 0))) - len(_ENTITY_FIELDS)


@lru_cache(maxsize=1024)
def _str_len(text: str) -> int:
    return len(_ENCODER.encode(text))


#: Below this magnitude the fixed-point text has at most 15 significant digits (12 before the point,
#: 3 after), so it round-trips and is the shortest repr of the rounded float; above it (e.g.
#: 999999999999999.9, ".3f" writes ...9.875) the repr can be shorter, and json is asked.
_FIXED_EXACT = 1e12


def _float_len(value: float) -> int:
    """Length of the encoder's text for ``round(value, DECIMALS)``."""
    if -_FIXED_EXACT < value < _FIXED_EXACT:  # repr == fixed-point minus trailing zeros
        text = f"{value:.{DECIMALS}f}".rstrip("0")
        return len(text) + 1 if text[-1] == "." else len(text)  # "2." is written "2.0"
    return len(_ENCODER.encode(round(value, DECIMALS)))  # huge, inf or nan: rare, let json say


def entity_report_size(sender: int, step: int, entity: Entity, hops: int = 0) -> int:
    """``EntityReport.from_entity(sender, step, entity, hops).nbytes`` without building the JSON.

    The protocol sizes every report every step; this is ~5x cheaper than encoding.
    """
    return _report_frame(sender, step, hops) + _entity_part_size(entity)


def entity_report_sizes(
    senders: Sequence[int],
    step: int,
    entities: Sequence[Entity],
    indices: Iterable[int],
    hops: int = 0,
    parts: dict[tuple, int] | None = None,
) -> dict[int, int]:
    """``entity_report_size(senders[i], step, entities[i], hops)`` for each ``i`` in ``indices``.

    Several observers usually report the same unit in the same state in one step; its part of
    the size is computed once per distinct content (floats keyed by their bits, so ``-0.0``,
    written "-0.0", is not taken for ``0.0``). ``parts``: that cache, kept by the caller across
    steps (a unit standing and shooting reports the same content again); the caller bounds it.
    """
    frames: dict[int, int] = {}
    parts = {} if parts is None else parts
    out: dict[int, int] = {}
    for i in indices:
        e, sender = entities[i], senders[i]
        frame = frames.get(sender)
        if frame is None:
            frame = frames[sender] = _report_frame(sender, step, hops)
        key = (e.team, e.id, e.unit_type, e.last_action, _BITS(e.x, e.y, e.health, e.shield))
        part = parts.get(key)
        if part is None:
            part = parts[key] = _entity_part_size(e)
        out[i] = frame + part
    return out


_BITS = struct.Struct("<4d").pack


def _report_frame(sender: int, step: int, hops: int) -> int:
    """Size of everything in a report but the entity's own fields."""
    return (
        _ENTITY_FRAME + _str_len("entity") + len(str(int(sender))) + len(str(int(step))) + len(str(int(hops)))
    )


def _entity_part_size(entity: Entity) -> int:
    """Size of the entity's own fields' values in a report."""
    x, y, health, shield = float(entity.x), float(entity.y), float(entity.health), float(entity.shield)
    fixed = (
        _str_len(entity.team)
        + len(str(int(entity.id)))
        + _str_len(entity.unit_type)
        + len(str(int(entity.last_action)))
    )
    lim = _FIXED_EXACT
    if -lim < x < lim and -lim < y < lim and -lim < health < lim and -lim < shield < lim:
        # _float_len of all four from one format call: "d.ddd|" each, less the separators and
        # the trailing zeros that rstrip would take (the first decimal always stays: "2.0").
        text = f"{x:.3f}|{y:.3f}|{health:.3f}|{shield:.3f}|"
        return fixed + len(text) - 4 - text.count("0|") - text.count("00|")
    return fixed + _float_len(x) + _float_len(y) + _float_len(health) + _float_len(shield)


def decode_message(text: str) -> Message:
    """Parse the JSON produced by ``to_json`` back into a message."""
    data = json.loads(text)
    kind = data.pop("kind", None)
    if kind == "entity":
        return EntityReport(**data)
    if kind == "intent":
        return Intent(**data)
    raise ValueError(f"unknown message kind {kind!r}; expected 'entity' or 'intent'")
