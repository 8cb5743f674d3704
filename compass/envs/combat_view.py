"""What one combat agent sees, computed from a host-side snapshot (shared by SMAX and SMACv2)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from compass.envs.base import Entity


class UnitSnapshot(Protocol):
    """The fields both combat adapters' snapshots carry (allies first, then enemies)."""

    pos: np.ndarray
    alive: np.ndarray
    health: np.ndarray
    sight: np.ndarray
    attack: np.ndarray

    def type_name(self, u: int) -> str: ...


def entities_seen_by(snap: UnitSnapshot, i: int, n_agents: int, observed: np.ndarray,
                     last_actions: np.ndarray, can_shoot: bool = True,
                     range_inclusive: bool = False) -> tuple[Entity, ...]:
    """Units agent ``i`` sees: alive, closer than its sight range and, for enemy ``j``, ``observed[j, i]``.

    ``can_shoot`` is False for units that cannot attack (medivacs); ``range_inclusive`` follows
    the engine's rule for the shoot range (SMAX ``<``, SC2 ``<=``).
    """
    if not snap.alive[i]:
        return ()
    shields = getattr(snap, "shield", None)
    sight, shoot = snap.sight[i], snap.attack[i]
    out = []
    for u in range(len(snap.alive)):
        if u == i or not snap.alive[u]:
            continue
        delta = snap.pos[u] - snap.pos[i]
        dist = float(np.hypot(*delta))
        if dist >= sight:
            continue
        is_enemy = u >= n_agents
        if is_enemy and not observed[u - n_agents, i]:
            continue
        in_range = dist <= shoot if range_inclusive else dist < shoot
        out.append(Entity(
            id=u - n_agents if is_enemy else u, team="enemy" if is_enemy else "ally",
            unit_type=snap.type_name(u), x=float(snap.pos[u, 0]), y=float(snap.pos[u, 1]),
            rel_x=float(delta[0] / sight), rel_y=float(delta[1] / sight), distance=dist / sight,
            health=float(snap.health[u]), shield=float(shields[u]) if shields is not None else 0.0,
            can_attack=is_enemy and can_shoot and in_range,
            last_action=0 if is_enemy else int(last_actions[u])))
    return tuple(out)
