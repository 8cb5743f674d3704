"""A one-shot pair harvest: two agents mine a 2-agent sync site together, once (issue 23, item 2).

alem pays COORD_2_AGENTS_{HARD,SOFT} to every agent whose Do lands on a required-2 sync tile on the
same step as a teammate's (pickaxe or not), and COORD_MINE_<ORE>_* to those that mine it; each is a
one-time unlock, so after one success nobody needs that kind of site again. The pair and the site
are chosen by rules both agents apply to what they both know: every teammate's position is in the
observation, and the site is one both remember near them (docs/alem.md "Pair harvest").
"""

from __future__ import annotations

from dataclasses import replace

from compass.games.alem.obs import CoordSite, ObsData
from compass.games.alem.skill_api.actions import do, noop
from compass.games.alem.skill_api.coordination import known_sites, site_rewards_for
from compass.games.alem.skill_api.knowledge import (
    RESOURCE_BLOCKS,
    Point,
    _approachable,
    distance,
    team_alive,
)
from compass.games.alem.skill_api.paths import path_to


def harvest_pair(d: ObsData) -> tuple[int, int] | None:
    """The ids of the two living agents (this one included) closest to each other, or ``None`` alone.

    Every agent sees every teammate's coordinates, so all compute the same pair; ties go to the
    lower ids."""
    agents = [(d.agent_id, d.position)] + [(t.id, (t.x, t.y)) for t in team_alive(d)]
    if len(agents) < 2:
        return None
    pairs = [
        (distance(pa, pb), min(a, b), max(a, b))
        for i, (a, pa) in enumerate(agents)
        for b, pb in agents[i + 1 :]
    ]
    _, lo, hi = min(pairs)
    return lo, hi


def pair_sites(d: ObsData) -> list[CoordSite]:
    """The 2-agent sync sites on resource blocks this agent sees or remembers on its level.

    Remembered sites come from the memory's coordination values (2 = two agents), which do not
    record whether a site is soft: such a site is listed as hard and :func:`pair_site_pays` counts
    both tiers for it. A site the agent saw mined is gone from its memory too."""
    return sorted(known_sites(d, _is_pair_site).values(), key=lambda s: (s.y, s.x))


def _is_pair_site(s: CoordSite) -> bool:
    return s.kind == "sync" and not s.construction and s.required == 2 and s.name in RESOURCE_BLOCKS


def pair_site_pays(d: ObsData, site: CoordSite) -> list[str]:
    """The achievements ``site`` can still unlock for this agent (with its tools), either tier when
    the site is only remembered (its softness unknown)."""
    visible = any((s.x, s.y) == (site.x, site.y) for s in d.coord_sites)
    tiers = [site] if visible else [replace(site, soft=False), replace(site, soft=True)]
    rewards = [a for s in tiers for a in site_rewards_for(d, s)]
    return [a for a in dict.fromkeys(rewards) if a not in d.achievements]


def pair_harvest_site(d: ObsData, reach: int = 10) -> tuple[CoordSite, int] | None:
    """The 2-agent site this agent mines with its pair partner, and the partner's id; ``None`` when
    this agent is not in :func:`harvest_pair`'s pair or knows no site within ``reach`` (Manhattan)
    of both that pays it something new.

    Both partners apply the same rule: a site next to which one of them already stands comes first
    (the one who got there announces the choice; when both stand by different sites, the lower
    id's wins), else the site with the least summed distance to the two, ties by (y, x)."""
    pair = harvest_pair(d)
    if pair is None or d.agent_id not in pair:
        return None
    partner_id = pair[0] if pair[1] == d.agent_id else pair[1]
    partner = next(t for t in team_alive(d) if t.id == partner_id)
    there = (partner.x, partner.y)
    me = d.position
    cands = [
        s
        for s in pair_sites(d)
        if distance(me, (s.x, s.y)) <= reach
        and distance(there, (s.x, s.y)) <= reach
        and (distance(me, (s.x, s.y)) == 1 or _approachable(d, (s.x, s.y)))
        and pair_site_pays(d, s)
    ]
    if not cands:
        return None
    by_partner = [s for s in cands if distance(there, (s.x, s.y)) == 1]
    by_me = [s for s in cands if distance(me, (s.x, s.y)) == 1]
    if by_partner and (not by_me or partner_id < d.agent_id):
        return by_partner[0], partner_id
    if by_me:
        return by_me[0], partner_id
    best = min(cands, key=lambda s: (distance(me, (s.x, s.y)) + distance(there, (s.x, s.y)), s.y, s.x))
    return best, partner_id


def pair_harvest_step(d: ObsData, reach: int = 10) -> int | None:
    """The next action of a one-shot pair harvest (:func:`pair_harvest_site`), or ``None`` when none.

    Walks to the site and faces it; there it Does while the partner stands next to it too (both
    partners' Do land on the same steps: alem counts them together), and waits (noop) until then,
    so a soft site is not mined alone (which pays no coordination). The caller decides when a
    harvest is worth its steps (by day, fed, nothing hostile near). In the library (40 steps a
    day from day 2) it added 2-agent unlocks on Hard tuning seeds but scored no higher
    (docs/alem.md "Pair harvest")."""
    plan = pair_harvest_site(d, reach)
    if plan is None:
        return None
    site, partner_id = plan
    xy: Point = (site.x, site.y)
    step = path_to(d, xy)
    if step is not None:
        return step  # walking there, or turning to face it
    if distance(d.position, xy) != 1:
        return None  # no way there known
    partner = next(t for t in team_alive(d) if t.id == partner_id)
    return do() if distance((partner.x, partner.y), xy) == 1 else noop()
