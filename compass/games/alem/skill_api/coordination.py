"""Team conventions for ALEM's coordination sites: which site the team converges on (a rule every
agent applies to what it sees, so they agree without talking), who stands where, what it pays."""

from __future__ import annotations

from compass.games.alem.names import BUILD_COSTS, N_AGENTS, WALKABLE_BLOCKS
from compass.games.alem.obs import CoordSite, ObsData
from compass.games.alem.skill_api.knowledge import (
    STEP_DIRS,
    Point,
    _occupied,
    can_build_here,
    can_mine,
    distance,
    has_materials,
    leader_id,
    team_alive,
    team_center,
    walkable,
)

_COORD_MINE = {
    "stone": "STONE",
    "coal": "COAL",
    "iron": "IRON",
    "diamond": "DIAMOND",
    "sapphire": "SAPPHIRE",
    "ruby": "RUBY",
}


def free_adjacent_tiles(d: ObsData, target: Point) -> list[Point]:
    """Walkable tiles next to ``target`` that no teammate or creature stands on."""
    occupied = _occupied(d)
    out = []
    for _, dx, dy in STEP_DIRS:
        p = (target[0] + dx, target[1] + dy)
        if p not in occupied and walkable(d, p, unknown=False):
            out.append(p)
    return out


def agents_adjacent(d: ObsData, target: Point, include_self: bool = True) -> int:
    """How many living agents (this one included by default) stand next to ``target``."""
    n = sum(1 for t in team_alive(d) if distance((t.x, t.y), target) == 1)
    return n + (1 if include_self and distance(d.position, target) == 1 else 0)


def coordination_target(
    d: ObsData,
    kinds: tuple[str, ...] = ("sync", "handover"),
    max_required: int = N_AGENTS,
    new_only: bool = True,
) -> CoordSite | None:
    """The coordination site the team should converge on, by a convention every agent can apply.

    Sites next to the team leader (lowest living id) come first, then the one closest to the
    team's centre; construction sites only when someone can pay; with ``new_only``, only sites
    that can still unlock an achievement for this agent. Deterministic tie-breaks, so agents
    seeing the same tiles pick the same one.
    """
    lead = leader_id(d)
    lead_pos = (
        d.position
        if lead == d.agent_id
        else next(((t.x, t.y) for t in d.teammates if t.id == lead), d.position)
    )
    center = team_center(d)
    alive = len(team_alive(d)) + 1
    cands = []
    for s in d.coord_sites:
        if s.kind not in kinds:
            continue
        if s.kind == "sync" and s.required > min(alive, max_required):
            continue
        if s.kind == "handover" and alive < 2:
            continue
        if s.name in WALKABLE_BLOCKS:  # a flag left on open ground: nothing to act on
            continue
        if s.construction and s.name != "construction_in_progress":
            # Someone must pay: this agent, or a teammate already standing there (the payer goes first).
            payer_there = any(distance((t.x, t.y), (s.x, s.y)) == 1 for t in team_alive(d))
            if not any(can_build_here(d, k) or has_materials(d, k) for k in BUILD_COSTS) and not payer_there:
                continue
        elif not s.construction and not can_mine(d, s.name):
            continue
        if new_only and d.achievements and all(a in d.achievements for a in coordination_rewards(s)):
            continue
        cands.append(s)
    if not cands:
        return None
    return min(
        cands, key=lambda s: (distance(lead_pos, (s.x, s.y)) > 1, distance(center, (s.x, s.y)), s.y, s.x)
    )


def coordination_rewards(site: CoordSite, structure: str = "shelter") -> list[str]:
    """Achievements a participant can unlock at ``site`` (so skills skip sites that pay nothing new)."""
    if site.kind == "handover":
        return ["HANDOVER_COMPLETE"] + ([] if site.construction else ["COORD_MINE_HANDOVER"])
    if site.construction:
        return [f"COORD_BUILD_{structure.upper()}"]
    tier = "SOFT" if site.soft else "HARD"
    out = [f"COORD_{'2' if site.required == 2 else '3'}_AGENTS_{tier}"]
    if site.name in _COORD_MINE:
        out.append(f"COORD_MINE_{_COORD_MINE[site.name]}_{tier}")
    return out
