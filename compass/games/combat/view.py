"""What one combat agent sees, computed from a host-side snapshot (shared by SMAX and SMACv2)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from compass.core.types import AgentView, Entity, OwnUnit
from compass.games.combat.text import CombatObs


class UnitSnapshot(Protocol):
    """The fields both combat adapters' snapshots carry (allies first, then enemies)."""

    pos: np.ndarray
    alive: np.ndarray
    health: np.ndarray
    sight: np.ndarray
    attack: np.ndarray

    def type_name(self, u: int) -> str: ...


def entities_seen_by(
    snap: UnitSnapshot,
    i: int,
    n_agents: int,
    observed: np.ndarray,
    last_actions: np.ndarray,
    can_shoot: bool = True,
    range_inclusive: bool = False,
) -> tuple[Entity, ...]:
    """Units agent ``i`` sees: alive, closer than its sight range and, for enemy ``j``, ``observed[j, i]``.

    ``can_shoot`` is False for units that cannot attack (medivacs); ``range_inclusive`` follows
    the engine's rule for the shoot range (SMAX ``<``, SC2 ``<=``).
    """
    if not snap.alive[i]:
        return ()
    shields = getattr(snap, "shield", None)
    sight, shoot = float(snap.sight[i]), float(snap.attack[i])
    # Whole-array arithmetic, then plain floats: the same IEEE operations per element as the
    # scalar version (hypot, one division each), without ~10 numpy scalar ops per unit.
    delta = snap.pos - snap.pos[i]
    dist = np.hypot(delta[:, 0], delta[:, 1]).tolist()
    dx, dy = (delta[:, 0] / sight).tolist(), (delta[:, 1] / sight).tolist()
    xs, ys = snap.pos[:, 0].tolist(), snap.pos[:, 1].tolist()
    alive, health = snap.alive.tolist(), snap.health.tolist()
    out = []
    for u in range(len(alive)):
        if u == i or not alive[u] or dist[u] >= sight:
            continue
        is_enemy = u >= n_agents
        if is_enemy and not observed[u - n_agents, i]:
            continue
        d = dist[u]
        in_range = d <= shoot if range_inclusive else d < shoot
        out.append(
            Entity(
                id=u - n_agents if is_enemy else u,
                team="enemy" if is_enemy else "ally",
                unit_type=snap.type_name(u),
                x=xs[u],
                y=ys[u],
                rel_x=dx[u],
                rel_y=dy[u],
                distance=d / sight,
                health=health[u],
                shield=float(shields[u]) if shields is not None else 0.0,
                can_attack=is_enemy and can_shoot and in_range,
                last_action=0 if is_enemy else int(last_actions[u]),
            )
        )
    return tuple(out)


def deaths_seen_by(
    snap: UnitSnapshot, prev_alive: np.ndarray | None, i: int, n_agents: int, observed: np.ndarray
) -> tuple[Entity, ...]:
    """Units that died this step where agent ``i`` could see them, as health-0 reports.

    They go to ``AgentView.extra["deaths_seen"]`` (not into what skills see): the entity memory
    drops a unit on a health-0 report, so teammates stop chasing enemies that are already dead.
    """
    if prev_alive is None or not snap.alive[i]:
        return ()
    out = []
    for u in np.flatnonzero(prev_alive & ~snap.alive):
        u = int(u)
        is_enemy = u >= n_agents
        if u == i or (is_enemy and not observed[u - n_agents, i]):
            continue
        delta = snap.pos[u] - snap.pos[i]
        dist = float(np.hypot(*delta))
        if dist < snap.sight[i]:
            out.append(
                Entity(
                    id=u - n_agents if is_enemy else u,
                    team="enemy" if is_enemy else "ally",
                    unit_type=snap.type_name(u),
                    x=float(snap.pos[u, 0]),
                    y=float(snap.pos[u, 1]),
                    rel_x=float(delta[0] / snap.sight[i]),
                    rel_y=float(delta[1] / snap.sight[i]),
                    distance=dist / snap.sight[i],
                    health=0.0,
                )
            )
    return tuple(out)


def combat_agent_view(
    agent_id: int,
    step: int,
    snap: UnitSnapshot,
    own: OwnUnit,
    obs: CombatObs,
    entities: tuple[Entity, ...],
    avail: tuple[int, ...],
    text_fn,
    extra: dict,
) -> AgentView:
    """A combat AgentView whose text comes from ``text_fn`` and whose frame is the ego render of ``snap``."""
    from compass.games.combat.render import render_ego

    view = AgentView(
        agent_id=agent_id,
        family="combat",
        step=step,
        alive=bool(snap.alive[agent_id]),
        own=own,
        entities=entities,
        avail_actions=avail,
        text=None,  # text_fn(view) when something reads it
        obs=obs,
        extra=extra,
        text_fn=text_fn,
    )
    view.render = lambda v: render_ego(snap, v)
    return view
