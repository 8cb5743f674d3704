"""Text for the prompts' "Minimap information": what allies told the agent about units it can't see."""

from __future__ import annotations

from collections.abc import Sequence

from compass.core.types import AgentView, Entity

NOTHING_SHARED = "No shared information beyond your own sight."


def _ago(age: int) -> str:
    if age <= 0:
        return "this step"
    return f"{age} step{'s' if age != 1 else ''} ago"


def describe_relayed(entity: Entity, ego_id: int) -> str:
    """One line, e.g. ``Enemy #3 stalker at (+0.42, -0.10) rel, health 0.80 — relayed by Ally #2,
    2 hops, seen 1 step ago``. Coordinates are relative to the ego unit, in its sight ranges."""
    team = "Enemy" if entity.team == "enemy" else "Ally"
    status = f"health {entity.health:.2f}"
    if entity.shield > 0:
        status += f", shield {entity.shield:.2f}"
    head = (
        f"{team} #{entity.id} {entity.unit_type} at ({entity.rel_x:+.2f}, {entity.rel_y:+.2f}) rel, {status}"
    )
    if entity.source is None or entity.source == ego_id:
        return f"{head} — last seen by you {_ago(entity.age)}"
    hops = f"{entity.hops} hop{'s' if entity.hops != 1 else ''}"
    if entity.team == "ally" and entity.source == entity.id:
        return f"{head} — reported by Ally #{entity.id} itself, {hops}, seen {_ago(entity.age)}"
    return f"{head} — relayed by Ally #{entity.source}, {hops}, seen {_ago(entity.age)}"


def minimap_text(view: AgentView, relayed: Sequence[Entity]) -> str:
    """All relayed entities, enemies first, then nearest first; a fixed line when there are none."""
    if not relayed:
        return NOTHING_SHARED
    ordered = sorted(relayed, key=lambda e: (e.team != "enemy", e.distance, e.id))
    return "\n".join(describe_relayed(e, view.agent_id) for e in ordered)
