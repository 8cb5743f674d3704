"""What one combat agent sees, computed from a host-side snapshot (shared by SMAX and SMACv2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from compass.core.types import AgentView, Entity, OwnUnit, new_entity, new_view
from compass.games.combat.text import CombatObs


class UnitSnapshot(Protocol):
    """The fields both combat adapters' snapshots carry (allies first, then enemies)."""

    pos: np.ndarray
    alive: np.ndarray
    health: np.ndarray
    sight: np.ndarray
    attack: np.ndarray
    names: Sequence[str]  # type_name of every unit, allies first

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
    return entities_seen(snap, [i], n_agents, observed, last_actions, [can_shoot], range_inclusive)[0]


def entities_seen(
    snap: UnitSnapshot,
    agents: Sequence[int],
    n_agents: int,
    observed: np.ndarray,
    last_actions: np.ndarray,
    can_shoot: Sequence[bool] | None = None,
    range_inclusive: bool = False,
) -> list[tuple[Entity, ...]]:
    """:func:`entities_seen_by` for each of ``agents`` (``can_shoot`` per agent, default all True).

    The offsets and distances of every agent to every unit in two array operations, the rest in
    plain floats (positions, sight and shoot ranges are float64 in both adapters: the same IEEE
    operations per element as one agent at a time, so the same numbers), entities for the units
    in sight only.
    """
    agents = list(agents)
    alive = np.asarray(snap.alive).tolist()
    live = [i for i in agents if alive[i]]
    if not live:
        return [() for _ in agents]
    pos = np.asarray(snap.pos, dtype=np.float64)
    n = len(pos)
    # Only the offsets and distances are array work (np.hypot is the one operation Python has no
    # bit-identical twin for); the rest runs on the units in sight only, in Python floats (the same
    # IEEE divisions and comparisons as numpy's float64 ones).
    rows_pos = pos[: len(live)] if live == list(range(len(live))) else pos[live]
    dx = pos[:, 0][None, :] - rows_pos[:, 0][:, None]  # [agent, unit]: unit - agent
    dy = pos[:, 1][None, :] - rows_pos[:, 1][:, None]
    dist_all, dx_all, dy_all = np.hypot(dx, dy).tolist(), dx.tolist(), dy.tolist()
    sight = np.asarray(snap.sight, dtype=np.float64).tolist()
    shoot = np.asarray(snap.attack, dtype=np.float64).tolist()
    observed_l = np.asarray(observed, dtype=bool).tolist()  # [enemy][agent]
    xs, ys = pos[:, 0].tolist(), pos[:, 1].tolist()
    health = snap.health.tolist()
    shields = getattr(snap, "shield", None)
    shield_l = [float(v) for v in shields] if shields is not None else [0.0] * n
    last = [int(a) for a in last_actions]
    names = snap.names
    shoots = dict(zip(agents, can_shoot if can_shoot is not None else [True] * len(agents), strict=True))
    rows = {}
    for r, i in enumerate(live):
        dist, dx, dy, rng = dist_all[r], dx_all[r], dy_all[r], sight[i]
        shooter, reach = shoots[i], shoot[i]
        ents = []
        for u in range(n):
            # Alive, in sight range, not itself, and an enemy only when observed.
            d = dist[u]
            if not (d < rng and alive[u]) or u == i:
                continue
            if u >= n_agents:
                uid = u - n_agents
                if not observed_l[uid][i]:
                    continue
                in_range = d <= reach if range_inclusive else d < reach
                team, can_attack, last_action = "enemy", shooter and in_range, 0
            else:
                uid, team, can_attack, last_action = u, "ally", False, last[u]
            ents.append(
                new_entity(
                    uid,
                    team,
                    names[u],
                    xs[u],
                    ys[u],
                    dx[u] / rng,
                    dy[u] / rng,
                    d / rng,
                    health[u],
                    shield_l[u],
                    can_attack,
                    last_action,
                )
            )
        rows[i] = tuple(ents)
    return [rows.get(i, ()) for i in agents]


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
    # text: text_fn(view) when something reads it
    alive = bool(snap.alive[agent_id])
    return new_view(
        agent_id,
        "combat",
        step,
        alive,
        own,
        entities,
        avail,
        None,
        obs,
        extra,
        lambda v: _render_ego(snap, v),
        text_fn,
    )


def _render_ego(snap: UnitSnapshot, view: AgentView) -> np.ndarray:
    # Imported on first render, not per view built (render pulls in the drawing code).
    from compass.games.combat.render import render_ego

    return render_ego(snap, view)
