"""Tactics measured from recorded combat trajectories, and seed-skill parameters fitted to them.

``compass skills bootstrap --offline`` calls :func:`measure` on the demonstrations' trajectories
(:mod:`compass.demos.record` format: each unit's text observation and action per step) and
:func:`fit` to turn the measurements into values of the seed skills' named parameters
(``# params:`` in their headers). Every measure is computed from what the units saw when they
acted, so it works for any demonstrator (MAPPO, the heuristic, a library, a person).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any

from compass.games.combat.text import ATTACK_OFFSET, DIRECTION_VECTORS, MELEE_TYPES, parse_combat_text

#: minimum number of observations before a measure is used for fitting
MIN_SAMPLES = 5


def _clip(x: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, x))


def measure(trajectories: list[tuple[dict, list[dict]]]) -> dict[str, Any]:
    """Focus-fire concentration, engagement distance per unit type, retreat health threshold,
    kiting rate, group radius and target priority by type, with their sample counts."""
    conc: list[float] = []
    engage: dict[str, list[float]] = defaultdict(list)
    spreads: list[float] = []
    attacked: Counter = Counter()
    offered: Counter = Counter()
    # (health, retreated?) for every step a live unit with enemies in sight acted
    health_moves: list[tuple[float, bool]] = []
    kite_opportunities = kite_moves = 0
    for _header, steps in trajectories:
        for rec in steps:
            units = [(u, parse_combat_text(u["obs"])) for u in rec["units"] if u.get("alive")]
            targets = [u["action"] - ATTACK_OFFSET for u, _ in units if u["action"] >= ATTACK_OFFSET]
            if len(targets) >= 2:
                conc.append(max(Counter(targets).values()) / len(targets))
            if len(units) >= 2:
                pts = [
                    (d.own_position[0] * d.map_size[0], d.own_position[1] * d.map_size[1]) for _, d in units
                ]
                cx = sum(p[0] for p in pts) / len(pts)
                cy = sum(p[1] for p in pts) / len(pts)
                spreads.append(sum(((x - cx) ** 2 + (y - cy) ** 2) ** 0.5 for x, y in pts) / len(pts))
            for u, d in units:
                seen = [e for e in d.enemies if e.visible and e.health > 0]
                if not seen:
                    continue
                a = u["action"]
                sight = d.own_sight_range or 1.0
                if a >= ATTACK_OFFSET:
                    tgt = next((e for e in seen if e.id == a - ATTACK_OFFSET), None)
                    if tgt is not None:
                        engage[d.own_unit_type].append(tgt.distance * sight)
                        attacked[tgt.unit_type] += 1
                        for t in {e.unit_type for e in seen if e.can_attack}:
                            offered[t] += 1
                move = DIRECTION_VECTORS.get(a)
                ex = sum(e.position[0] for e in seen) / len(seen)
                ey = sum(e.position[1] for e in seen) / len(seen)
                away = move is not None and move[0] * ex + move[1] * ey < 0
                health_moves.append((d.own_health, away))
                if d.own_unit_type not in MELEE_TYPES and d.own_weapon_cooldown > 0:
                    close = [e for e in seen if e.unit_type in MELEE_TYPES and e.distance * sight < 6.0]
                    if close:
                        kite_opportunities += 1
                        n = min(close, key=lambda e: e.distance)
                        if move is not None and move[0] * n.position[0] + move[1] * n.position[1] < 0:
                            kite_moves += 1
    return {
        "focus_concentration": _mean(conc),
        "focus_samples": len(conc),
        "engagement_distance": {t: round(statistics.median(v), 3) for t, v in sorted(engage.items()) if v},
        "engagement_samples": {t: len(v) for t, v in sorted(engage.items())},
        "retreat_health": _threshold(health_moves),
        "retreat_samples": sum(1 for _, r in health_moves if r),
        "kite_rate": round(kite_moves / kite_opportunities, 4) if kite_opportunities else None,
        "kite_samples": kite_opportunities,
        "group_radius": round(statistics.median(spreads), 3) if spreads else None,
        "group_samples": len(spreads),
        "target_priority": _priority(attacked, offered),
        "target_samples": dict(sorted(offered.items())),
    }


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def _threshold(health_moves: list[tuple[float, bool]]) -> float | None:
    """The health below which units step away from enemies clearly more often than above it."""
    retreats = sum(1 for _, r in health_moves if r)
    if retreats < MIN_SAMPLES:
        return None
    best, best_gap = None, 0.1  # demand a 10-point difference in retreat rate
    for k in range(2, 19):
        t = k * 0.05
        below = [r for h, r in health_moves if h < t]
        above = [r for h, r in health_moves if h >= t]
        if len(below) < MIN_SAMPLES or len(above) < MIN_SAMPLES:
            continue
        gap = sum(below) / len(below) - sum(above) / len(above)
        if gap > best_gap:
            best, best_gap = round(t, 2), gap
    return best


def _priority(attacked: Counter, offered: Counter) -> dict[str, float]:
    """How much more often a type is shot than it is in range, relative to the average (0 = average)."""
    rates = {t: attacked[t] / offered[t] for t in offered if offered[t] >= MIN_SAMPLES}
    if len(rates) < 2:
        return {}
    mean = sum(rates.values()) / len(rates)
    return {t: round(r / mean - 1.0, 2) for t, r in sorted(rates.items())}


def fit(m: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Parameter values per seed skill from :func:`measure`'s output (measures with too few samples are skipped)."""
    out: dict[str, dict[str, Any]] = defaultdict(dict)
    if m.get("retreat_health") is not None:
        t = float(m["retreat_health"])
        out["retreat_when_low"]["retreat_health"] = round(_clip(t, 0.05, 0.8), 2)
        out["race_adaptive_combat"]["hurt_health"] = round(_clip(2 * t, 0.1, 0.9), 2)
    if m.get("focus_concentration") is not None and m.get("focus_samples", 0) >= MIN_SAMPLES:
        # 0.5 (half the shots on one target) is the seed's 0.6; all shots on one target -> 1.2
        out["race_adaptive_combat"]["focus_bonus"] = round(_clip(1.2 * m["focus_concentration"], 0.0, 2.0), 2)
    if m.get("group_radius") is not None and m.get("group_samples", 0) >= MIN_SAMPLES:
        g = float(m["group_radius"])
        out["regroup"]["group_radius"] = round(_clip(g, 1.0, 6.0), 2)
        out["race_adaptive_combat"]["group_radius"] = round(_clip(1.5 * g, 1.5, 8.0), 2)
    if m.get("kite_rate") is not None and m.get("kite_samples", 0) >= MIN_SAMPLES:
        out["race_adaptive_combat"]["backstep_cooldown"] = round(
            _clip(1.4 * (1 - m["kite_rate"]), 0.1, 1.4), 2
        )
    ranged = [
        d
        for t, d in m.get("engagement_distance", {}).items()
        if t not in MELEE_TYPES and m["engagement_samples"].get(t, 0) >= MIN_SAMPLES
    ]
    if ranged:
        out["kite_melee"]["kite_distance"] = round(_clip(statistics.median(ranged), 2.0, 6.0), 2)
    if m.get("target_priority"):
        out["focus_fire"]["type_priority"] = dict(m["target_priority"])
    return {k: dict(v) for k, v in out.items()}


def trajectory_events(steps: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Events per step of a combat trajectory (key frames for bootstrapping from videos): first contact, focus fire, kills, deaths, retreats."""
    out: dict[int, list[str]] = {}
    contact = False
    last_focus = -10
    for rec in steps:
        t = rec["t"]
        ev: list[str] = []
        alive = [u for u in rec["units"] if u.get("alive")]
        sees = any("Enemy #" in u["obs"] for u in alive)
        if sees and not contact:
            ev.append("first contact: the teams see each other")
            contact = True
        targets = [u["action"] - ATTACK_OFFSET for u in alive if u["action"] >= ATTACK_OFFSET]
        if targets:
            tgt, n = max(((x, targets.count(x)) for x in set(targets)), key=lambda p: (p[1], -p[0]))
            if n >= 3 and t - last_focus > 5:
                ev.append(f"focus fire: {n} allies attack enemy {tgt}")
                last_focus = t
        for d in rec.get("deaths", []):
            ev.append(f"kill: {d} destroyed" if d.startswith("enemy") else f"death: {d} lost")
        moving = [u for u in alive if u["action"] in DIRECTION_VECTORS]
        if len(moving) >= 2 and contact and not targets:
            ev.append(f"movement: {len(moving)} allies reposition (retreat or regroup)")
        if ev:
            out[t] = ev
    return out
