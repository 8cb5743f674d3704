"""Mob kills and revivals of one ALEM step, as :class:`compass.core.types.StepEvent` records.

ALEM counts monsters killed per level (``monsters_killed``, the team's; eight clear a level) and
unlocks a ``DEFEAT_<MOB>`` achievement for an agent's first kill of each kind. A rise of the
counter is a kill; the agent that unlocked a ``DEFEAT_`` achievement in the same step is named
as the killer, with the mob's kind; later kills of a kind name no agent (ALEM does not say who).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_KILL_PREFIXES = ("DEFEAT_", "COORD_ELITE_", "COORD_LARGE_PASSIVE_KILL")


def _mob(achievement: str) -> str:
    name = achievement.removeprefix("DEFEAT_").removeprefix("COORD_").lower().replace("_", " ")
    return name.replace("solider", "soldier")  # ALEM's spelling of the orc soldier


def kill_events(
    prev_killed: np.ndarray | None, killed: np.ndarray, new_achievements: list[list[str]]
) -> list[dict[str, Any]]:
    """Kill events from the per-level kill counters before/after a step and the step's new achievements."""
    credited = [
        (i, a) for i, names in enumerate(new_achievements) for a in names if a.startswith(_KILL_PREFIXES)
    ]
    if prev_killed is None:
        return []
    delta = np.asarray(killed, dtype=np.int64) - np.asarray(prev_killed, dtype=np.int64)
    out: list[dict[str, Any]] = []
    for level in np.nonzero(delta > 0)[0]:
        for _ in range(int(delta[level])):
            if credited:
                agent, ach = credited.pop(0)
                text = f"agent {agent} killed a {_mob(ach)} (level {int(level)})"
                out.append(
                    {"kind": "kill", "agent": agent, "level": int(level), "mob": _mob(ach), "text": text}
                )
            else:
                out.append(
                    {
                        "kind": "kill",
                        "agent": None,
                        "level": int(level),
                        "text": f"a monster was killed (level {int(level)})",
                    }
                )
    return out


def revive_events(revived: list[tuple[int, ...] | None]) -> list[dict[str, Any]]:
    """Revive events from :func:`compass.games.alem.deaths.revivals`: ``agent`` is the reviver
    (the first, ``None`` if unseen), ``revived`` the agent brought back."""
    out: list[dict[str, Any]] = []
    for i, by in enumerate(revived):
        if by is None:
            continue
        who = by[0] if by else None
        text = f"agent {who} revived agent {i}" if who is not None else f"agent {i} was revived"
        out.append({"kind": "revive", "agent": who, "revived": i, "text": text})
    return out
