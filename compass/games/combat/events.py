"""Kills between two snapshots of one combat episode, as :class:`compass.core.types.StepEvent` records.

SMAX applies an attack in the step its order is given (weapon ready, target in range), so a
unit that was alive before a step and is dead after it was killed by the units whose attack
order of that step targeted it (``Snapshot.attack_target``). Several attackers share the kill.
A unit that dies with no attacker on it (walking into the map edge) is a ``death``, not a kill.
"""

from __future__ import annotations

from typing import Any


def unit_name(u: int, n_allies: int) -> str:
    """``ally 2`` / ``enemy 0``: our agents by id, enemies by their index in attack actions."""
    return f"ally {u}" if u < n_allies else f"enemy {u - n_allies}"


def kill_events(prev, snap) -> list[dict[str, Any]]:
    """One ``kill`` event per unit killed in the step from ``prev`` to ``snap`` (both snapshots)."""
    if prev is None:
        return []
    na = snap.n_allies
    was, now = prev.alive.tolist(), snap.alive.tolist()  # read as lists: most steps kill nobody
    if not any(w and not a for w, a in zip(was, now, strict=True)):
        return []
    targets = getattr(snap, "attack_target", None)
    out: list[dict[str, Any]] = []
    for u in range(len(now)):
        if not (was[u] and not now[u]):
            continue
        by = [] if targets is None else [a for a, t in enumerate(targets) if int(t) == u and was[a]]
        victim = unit_name(u, na)
        if not by:
            if u >= na:  # our own agents' deaths are already marked by the trace (skill -> None)
                out.append({"kind": "death", "agent": None, "target": victim, "text": f"{victim} died"})
            continue
        names = [unit_name(a, na) for a in by]
        ours = [a for a in by if a < na]
        out.append(
            {
                "kind": "kill",
                "agent": ours[0] if ours else None,
                "by": names,
                "target": victim,
                "text": f"{' + '.join(names)} killed {victim}",
            }
        )
    return out
