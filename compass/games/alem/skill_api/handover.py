"""The mining handover on purpose: two agents start and complete one at a site near both (issue 23, item 2).

In alem (``process_handover`` in ``alem_coop/game_logic.py``) a mining handover site is a tree or
ore tile whose coordination value is negative (1 in 16 of them; the value is its window, 3-6 steps
on Hard). A Do facing it with no handover pending there starts one (the Do mines nothing); a Do
by a *different* agent facing the same tile before the window runs out completes it: the
completer unlocks HANDOVER_COMPLETE and COORD_MINE_HANDOVER (5 points each; the initiator gets
nothing), the tile stops being a coordination site and the block is mined if the completer's
pickaxe allows. Neither the start nor the completion needs a tool or a role, and an expired
handover leaves the site as it was. So any two agents standing by any handover site can score it,
and one success is all the team's score counts (docs/alem.md "The mining handover, every episode").

The convention here: the pair is :func:`harvest_pair`'s (the two agents closest to each other);
the higher id is the completer. The completer, while it lacks HANDOVER_COMPLETE, walks to the
handover site nearest the two and waits there, facing it; the initiator walks over when it sees
its partner standing by a handover site, faces it and starts the handover; the completer finishes
it on its next step. Once the completer has the achievement it stops going to sites, so the
initiator, which cannot see its partner's achievements, is never left waiting for it.
"""

from __future__ import annotations

from compass.games.alem.obs import CoordSite, ObsData
from compass.games.alem.skill_api.actions import do, noop
from compass.games.alem.skill_api.coordination import in_view_of, known_sites
from compass.games.alem.skill_api.knowledge import (
    RESOURCE_BLOCKS,
    Point,
    _approachable,
    distance,
    team_alive,
)
from compass.games.alem.skill_api.pairs import harvest_pair
from compass.games.alem.skill_api.paths import act_on, give_way, path_to


def handover_sites(d: ObsData) -> list[CoordSite]:
    """The mining handover sites (tree or ore tiles) this agent sees or remembers on its level.

    Any agent can start or complete one whatever its pickaxe, so none is left out for want of a
    tool. Remembered sites come from the memory's coordination values (< 0: a handover's window);
    a site seen completed (or mined) is gone from the memory too."""
    sites = known_sites(
        d, lambda s: s.kind == "handover" and not s.construction and s.name in RESOURCE_BLOCKS
    )
    return sorted(sites.values(), key=lambda s: (s.y, s.x))


def handover_plan(d: ObsData, reach: int = 8, slack: int = 3) -> tuple[CoordSite, int, bool] | None:
    """``(site, partner id, this agent completes)`` for a handover with this agent's pair partner,
    or ``None``.

    The pair is :func:`harvest_pair`'s and the higher id completes. The completer (only while it
    lacks HANDOVER_COMPLETE) picks the handover site with the least summed distance to the two
    among those within ``reach`` (Manhattan) of the partner and ``reach + slack`` of itself and in
    the partner's view (9 rows x 11 columns around it), the one it already stands by first; the
    initiator takes only a site its partner stands next to, within ``reach + slack`` of itself (the
    completer announces the choice by standing there: every agent sees its teammates'
    coordinates). The slack keeps a site chosen while the way there first leads away from it (with
    ``reach`` for both, an agent on Hard seed 13 stepped out of reach, turned back, and paced)."""
    pair = harvest_pair(d)
    if pair is None or d.agent_id not in pair:
        return None
    partner_id = pair[0] if pair[1] == d.agent_id else pair[1]
    partner = next(t for t in team_alive(d) if t.id == partner_id)
    there: Point = (partner.x, partner.y)
    me = d.position
    completer = d.agent_id > partner_id
    if completer and "HANDOVER_COMPLETE" in d.achievements:
        return None
    sites = [
        s
        for s in handover_sites(d)
        if distance(me, (s.x, s.y)) <= reach + slack
        and distance(there, (s.x, s.y)) <= reach
        and (distance(me, (s.x, s.y)) == 1 or _approachable(d, (s.x, s.y)))
    ]
    if not completer:
        by_partner = [s for s in sites if distance(there, (s.x, s.y)) == 1]
        return (by_partner[0], partner_id, False) if by_partner else None
    by_me = [s for s in sites if distance(me, (s.x, s.y)) == 1]
    if by_me:
        return by_me[0], partner_id, True
    # Only a site in the partner's view now, so the partner knows it is one when this agent stands
    # there (a site it never saw would leave this agent waiting by it for nothing).
    sites = [s for s in sites if in_view_of((s.x, s.y), there)]
    if not sites:
        return None
    best = min(sites, key=lambda s: (distance(me, (s.x, s.y)) + distance(there, (s.x, s.y)), s.y, s.x))
    return best, partner_id, True


def handover_step(d: ObsData, reach: int = 8, slack: int = 3) -> int | None:
    """The next action of a mining handover with the pair partner (:func:`handover_plan`), or ``None``.

    First, any mining handover a teammate started within reach of its window is completed (Do
    facing its tile). Otherwise both partners walk to the site and face it; the initiator Does once
    its partner stands next to the site, and the completer waits (noop) until the handover is
    pending, then Does. The caller decides when a handover is worth its steps (by day, nothing
    hostile near); the handover itself takes two steps once both stand there. ``reach`` and
    ``slack`` as in :func:`handover_plan`."""
    for h in d.handovers:
        if (
            h.building == "mining"
            and h.initiator != d.agent_id
            and distance(d.position, (h.x, h.y)) <= h.remaining + 1
        ):
            return act_on(d, (h.x, h.y))
    plan = handover_plan(d, reach, slack)
    if plan is None:
        return None
    site, partner_id, completer = plan
    xy: Point = (site.x, site.y)
    step = path_to(d, xy)
    if step is not None:
        return give_way(d, step)  # walking there, or turning to face it
    if distance(d.position, xy) != 1:
        return None  # no way there known
    if completer:
        return noop()  # the handover is not pending yet: the loop above completes it once it is
    partner = next(t for t in team_alive(d) if t.id == partner_id)
    mine_pending = any((h.x, h.y) == xy for h in d.handovers)
    return do() if distance((partner.x, partner.y), xy) == 1 and not mine_pending else noop()
