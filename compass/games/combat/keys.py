"""What a person controlling one combat unit may do (``compass play``): move with the arrows or
WASD, stop with X, wait with space, and attack an enemy by its number key or by clicking it."""

from __future__ import annotations

from compass.core.controller import HumanKey
from compass.core.types import AgentView
from compass.games.combat.text import ATTACK_OFFSET, MOVE_EAST, MOVE_NORTH, MOVE_SOUTH, MOVE_WEST, NOOP, STOP

_FIXED = (
    HumanKey("ArrowUp", MOVE_NORTH, "move north"),
    HumanKey("ArrowDown", MOVE_SOUTH, "move south"),
    HumanKey("ArrowRight", MOVE_EAST, "move east"),
    HumanKey("ArrowLeft", MOVE_WEST, "move west"),
    HumanKey("w", MOVE_NORTH, "move north"),
    HumanKey("s", MOVE_SOUTH, "move south"),
    HumanKey("d", MOVE_EAST, "move east"),
    HumanKey("a", MOVE_WEST, "move west"),
    HumanKey("x", STOP, "stop"),
    HumanKey(" ", NOOP, "wait (no-op)"),
)


def human_keys(view: AgentView) -> tuple[HumanKey, ...]:
    """The legal moves of ``view``'s unit, then one attack per enemy it knows of (key: the enemy's
    id when below 10; every enemy can be clicked in the page's list)."""
    avail = set(view.avail_actions)
    keys = [k for k in _FIXED if k.action in avail]
    for e in sorted(view.enemies, key=lambda e: e.id):
        action = ATTACK_OFFSET + e.id
        if action in avail:
            where = "in range" if e.can_attack else f"{e.distance * view.own.sight_range:.1f} away"
            seen = "" if e.visible and e.hops == 0 else " (relayed)"
            label = f"attack {e.unit_type} #{e.id}: health {e.health:.0%}, {where}{seen}"
            keys.append(HumanKey(str(e.id) if e.id < 10 else "", action, label))
    return tuple(keys)
