"""Why an ALEM agent died: the game's own cause, refined to the creature that did it.

ALEM records a coarse cause per player (``EnvState.player_death_cause``: starvation, dehydration,
exhaustion, mob combat, friendly fire; ``alem_step`` decides it from which part of the step took
the last health point). "Mob combat" hides what a team can act on (zombies at night want a
shelter, skeletons want a charge or cover), so the adapter names the creature from the states
around the fatal step: a melee mob next to the agent, else a mob projectile that was about to
reach it (named by the type of creature that fires it), else a ranged mob in range. Lava and
drowning are not causes here: ALEM's movement rules never let a player onto lava or water.

A dead agent is not always gone for good: ALEM lets a teammate revive it (``Do`` facing the
downed agent's tile sets its health to 1, ``interplayer_interaction`` in alem's
``game_logic.py``; alem counts these in ``Cooperation/revives``). The revived agent acts and
earns achievements again and may die a second time, so :func:`revivals` reports the revival
between the two deaths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from compass.games.alem.names import (
    DIRECTION_ACTIONS,
    DO,
    FACING_NAMES,
    MELEE_MOB_NAMES,
    MOVES,
    RANGED_MOB_NAMES,
)

#: ``alem.alem_coop.constants.DeathCause`` values, by name.
GAME_CAUSES = {0: "alive", 1: "starvation", 2: "dehydration", 3: "exhaustion", 4: "mob", 5: "friendly_fire"}
MOB_COMBAT = 4
# alem's ProjectileType order (ARROW, DAGGER, FIREBALL, ICEBALL, ARROW2, SLIMEBALL, FIREBALL2,
# ICEBALL2); an arrow may come from a skeleton or a gnome archer, so the shooter is looked up.
PROJECTILE_NAMES = ("arrow", "dagger", "fireball", "iceball", "arrow", "slimeball", "fireball", "iceball")
RANGED_REACH = 6  # beyond this a ranged mob is not blamed (alem's ranged mobs shoot from <= ~5 tiles)
# The tile each ``player_direction`` faces, as a step in state (row, col): names.MOVES is (x, y).
FACING_STEP = {
    k: MOVES[DIRECTION_ACTIONS[n]][::-1] for k, n in FACING_NAMES.items() if n in DIRECTION_ACTIONS
}


@dataclass(frozen=True)
class NearbyMob:
    """A creature near the dying agent: ``kind`` melee/ranged/projectile, its name, Manhattan distance."""

    kind: str
    name: str
    dist: int


def classify_death(game_cause: int, nearby: Sequence[NearbyMob], asleep: bool = False) -> str:
    """One death's cause as a short label.

    ``starvation``, ``dehydration``, ``exhaustion`` and ``friendly_fire`` are the game's own;
    a mob death becomes the creature's name (``zombie``, ``skeleton``...) chosen from ``nearby``
    (adjacent melee first, then an incoming projectile's shooter: the nearest ranged mob, or the
    projectile's name when the shooter is out of sight; then the nearest ranged mob in reach),
    or ``mob (unseen)`` when none fits. ``asleep`` appends `` (asleep)``: sleepers take
    extra damage and do not wake to fight, which is a different fix from losing a fight.
    """
    if game_cause not in GAME_CAUSES:
        raise ValueError(f"unknown ALEM death cause {game_cause!r}; valid: {sorted(GAME_CAUSES)}")
    if game_cause == 0:
        return "alive"
    if game_cause != MOB_COMBAT:
        label = GAME_CAUSES[game_cause]
    else:
        label = "mob (unseen)"
        by_dist = sorted(nearby, key=lambda m: m.dist)
        melee = [m for m in by_dist if m.kind == "melee" and m.dist <= 1]
        shots = [m for m in by_dist if m.kind == "projectile" and m.dist <= 2]
        ranged = [m for m in by_dist if m.kind == "ranged" and m.dist <= RANGED_REACH]
        if melee:
            label = melee[0].name
        elif shots:
            label = ranged[0].name if ranged else shots[0].name
        elif ranged:
            label = ranged[0].name
    return f"{label} (asleep)" if asleep else label


def nearby_mobs(s: Any, agent: int) -> list[NearbyMob]:
    """Melee and ranged mobs and mob projectiles on ``agent``'s level in numpy state ``s``."""
    level = int(s.player_level)
    here = np.asarray(s.player_position[agent])
    out: list[NearbyMob] = []
    groups = (
        ("melee", s.melee_mobs, MELEE_MOB_NAMES),
        ("ranged", s.ranged_mobs, RANGED_MOB_NAMES),
        ("projectile", s.mob_projectiles, PROJECTILE_NAMES),
    )
    for kind, mobs, names in groups:
        mask = np.asarray(mobs.mask[level])
        for k in np.nonzero(mask)[0].tolist():
            dist = int(np.abs(np.asarray(mobs.position[level, k]) - here).sum())
            if dist > RANGED_REACH:
                continue
            t = int(mobs.type_id[level, k])
            out.append(NearbyMob(kind, names[t] if t < len(names) else f"{kind}_{t}", dist))
    return out


def death_causes(prev: Any, cur: Any) -> list[str | None]:
    """Per agent: the cause label if it died between numpy states ``prev`` and ``cur``, else ``None``.

    Creatures are looked up in both states (melee mobs stand where they struck in ``cur``; a
    projectile that hit is gone from ``cur`` but was in flight in ``prev``).
    """
    out: list[str | None] = []
    for i, (was, now) in enumerate(zip(prev.player_alive, cur.player_alive, strict=True)):
        if not (bool(was) and not bool(now)):
            out.append(None)
            continue
        cause = int(cur.player_death_cause[i])
        nearby = nearby_mobs(cur, i) + nearby_mobs(prev, i) if cause == MOB_COMBAT else []
        out.append(classify_death(cause, nearby, asleep=bool(prev.is_sleeping[i])))
    return out


def revivals(prev: Any, cur: Any, actions: Sequence[int]) -> list[tuple[int, ...] | None]:
    """Per agent: ``None`` unless it came back to life between numpy states ``prev`` and ``cur``;
    then the teammates whose ``actions`` (the step's) were ``Do`` facing its tile: its revivers,
    as alem's ``interplayer_interaction`` finds them (empty if none matches).
    """
    out: list[tuple[int, ...] | None] = []
    for i, (was, now) in enumerate(zip(prev.player_alive, cur.player_alive, strict=True)):
        if bool(was) or not bool(now):
            out.append(None)
            continue
        here = np.asarray(prev.player_position[i])
        out.append(
            tuple(
                j
                for j, a in enumerate(actions)
                if j != i
                and int(a) == DO
                and bool(prev.player_alive[j])
                and int(prev.player_direction[j]) in FACING_STEP
                and np.array_equal(
                    np.asarray(prev.player_position[j]) + FACING_STEP[int(prev.player_direction[j])], here
                )
            )
        )
    return out
