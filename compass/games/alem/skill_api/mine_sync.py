"""The mining sync sites: the team's miner mines a stone or coal sync tile while teammates Do on it
(issue 23, item 2).

In alem (``do_action`` and ``check_sync_coordination`` in ``alem_coop/game_logic.py``) every agent
whose Do faces a sync tile on a step counts toward the agents the tile needs, pickaxe or not, but
only an agent that *mines* the block (its pickaxe allows) unlocks COORD_MINE_<ORE>_<tier>:

* hard: the Do's succeed only when the tile's ``required`` agents Do on it together;
* soft: COORD_MINE_<ORE>_SOFT needs at least two agents Doing on the tile that step, whatever its
  ``required``. With fewer than ``required`` each agent's Do succeeds alone 1 time in 10 on Hard
  (``soft_solo_fail_prob``), so a pair takes a soft 3-agent tile in about ten steps of Doing; a lone
  success mines the block without the unlock (the site is gone).

An agent without a pickaxe Doing on a stone or coal tile changes nothing, so the tile stays a site
(the opening's three Do's at a stone site leave it for the miner). Teammates cannot see who holds
a pickaxe, so the convention names the **miner role** as the one who mines: while it holds a
pickaxe that mines the site and lacks the site's COORD_MINE_<ORE>_<tier>, it walks to the site and
faces it; the helpers (the teammates nearest the site, as many as it needs besides the miner) walk
over when they see the miner standing next to a mining sync site, and all Do together
(docs/alem.md "The mining sync sites").
"""

from __future__ import annotations

from compass.games.alem.obs import CoordSite, ObsData
from compass.games.alem.skill_api.actions import do, noop
from compass.games.alem.skill_api.coordination import free_adjacent_tiles, in_view_of, mine_unlock
from compass.games.alem.skill_api.knowledge import STEP_DIRS, Point, can_mine, distance, team_alive, walkable
from compass.games.alem.skill_api.paths import give_way, path_to

#: The ores whose sync sites this convention works (iron needs a stone pickaxe and 5 agents' worth
#: of luck on Hard: its sites were never unlocked; the same code serves it when the pickaxe allows).
MINE_SYNC_ORES = ("stone", "coal", "iron")


def mine_sync_need(site: CoordSite, full: bool = False) -> int:
    """How many agents (the miner included) must Do on ``site`` together for the COORD_MINE unlock:
    2 at a soft site or one that needs 2, else the site's ``required``. ``full``: the site's
    ``required`` at a soft site too (all Do on one step: the miner's Do succeeds at once, without
    the ten tries of a pair, and each also unlocks COORD_<n>_AGENTS_SOFT)."""
    if full:
        return max(2, site.required)
    return 2 if site.soft or site.required <= 2 else site.required


def _miner(d: ObsData) -> tuple[int, Point] | None:
    """``(id, position)`` of the living agent with the miner role (this one included), or ``None``."""
    if d.role == "miner":
        return d.agent_id, d.position
    return next(((t.id, (t.x, t.y)) for t in team_alive(d) if t.role == "miner"), None)


def _site_miner(d: ObsData, site: CoordSite) -> tuple[int, Point] | None:
    """``(id, position)`` of the agent that mines ``site`` when any agent with the pickaxe may: this
    one when its pickaxe mines the block and it lacks the unlock, else the living teammate standing
    next to the site (the lowest id), else ``None``."""
    if can_mine(d, site.name) and mine_unlock(site) not in d.achievements:
        return d.agent_id, d.position
    by = [(t.id, (t.x, t.y)) for t in team_alive(d) if distance((t.x, t.y), (site.x, site.y)) == 1]
    return min(by, default=None)


def mine_sync_helpers(d: ObsData, site: CoordSite, miner_id: int, full: bool = False) -> list[int]:
    """The ids of the teammates that help the miner at ``site``: the ``need - 1`` living agents other
    than the miner nearest the site (ties by id; ``need`` is :func:`mine_sync_need` with ``full``).
    Every agent sees every teammate's coordinates, so all name the same ones."""
    others = [(d.agent_id, d.position)] + [(t.id, (t.x, t.y)) for t in team_alive(d)]
    others = sorted(
        ((distance(p, (site.x, site.y)), i) for i, p in others if i != miner_id),
    )
    return [i for _, i in others[: mine_sync_need(site, full) - 1]]


def mine_sync_site(
    d: ObsData,
    reach: int = 4,
    slack: int = 2,
    ores: tuple[str, ...] = MINE_SYNC_ORES,
    full: bool = False,
    anyone: bool = False,
) -> tuple[CoordSite, int] | None:
    """``(site, miner id)`` of the mining sync site the team works now, or ``None``.

    The miner (role "miner") picks, among the stone/coal/iron sync sites it sees whose block its
    pickaxe mines and whose COORD_MINE_<ORE>_<tier> it lacks, needing no more agents than are
    alive and within ``reach + slack`` (Manhattan) of itself, with a walkable tile next to it for
    each of the crew, the ones whose helpers
    (:func:`mine_sync_helpers`) are all within ``reach`` of the site and see it: the one it stands
    next to first (the choice sticks), then the nearest, ties by (y, x). A helper takes a mining sync site it sees with the miner standing next to it
    and itself among that site's helpers within ``reach`` (the miner announces its choice by
    standing there); it cannot see the miner's pickaxe, and the miner stands there only to mine.
    ``ores``: the blocks whose sites are worked (``("coal", "iron")`` in the second pass, docs/alem.md
    "The mining sync sites, second pass": stone sites are where the opening takes COORD_3_AGENTS_*,
    and a pair mining a soft 3-agent stone tile consumes it); ``full``: every agent a soft site
    requires comes (:func:`mine_sync_need`); ``anyone``: not only the miner role mines but any agent
    whose pickaxe mines the site and which lacks its unlock (on Hard the warrior crafts a pickaxe in
    nearly every episode too): it walks there as the miner does, and a helper takes the teammate
    standing next to a site for its miner (the lowest id when several do)."""
    role_miner = _miner(d)
    alive = len(team_alive(d)) + 1
    pos = {d.agent_id: d.position} | {t.id: (t.x, t.y) for t in team_alive(d)}
    cands = []
    miners = {}
    for s in d.coord_sites:
        xy = (s.x, s.y)
        if s.kind != "sync" or s.construction or s.name not in ores or s.required > alive:
            continue
        miner = _site_miner(d, s) if anyone else role_miner
        if miner is None:
            continue
        miner_id, mpos = miner
        helpers = mine_sync_helpers(d, s, miner_id, full)
        if len(helpers) < mine_sync_need(s, full) - 1:
            continue
        # Coal and iron lie inside the mountains: a tile with less room round it than the crew
        # needs held the miner waiting there for helpers that could not stand by it.
        if (
            sum(walkable(d, (s.x + dx, s.y + dy), unknown=False) for _, dx, dy in STEP_DIRS)
            < len(helpers) + 1
        ):
            continue
        if not all(distance(pos[i], xy) <= reach and in_view_of(xy, pos[i]) for i in helpers):
            continue
        if distance(mpos, xy) > reach + slack:
            continue
        if miner_id == d.agent_id:
            if can_mine(d, s.name) and mine_unlock(s) not in d.achievements:
                cands.append(s)
        elif distance(mpos, xy) == 1 and d.agent_id in helpers:
            cands.append(s)
        miners[xy] = miner
    if not cands:
        return None
    me = d.position

    def key(s: CoordSite) -> tuple:
        return distance(miners[(s.x, s.y)][1], (s.x, s.y)) != 1, distance(me, (s.x, s.y)), s.y, s.x

    best = min(cands, key=key)
    return best, miners[(best.x, best.y)][0]


def mine_sync_step(
    d: ObsData,
    reach: int = 4,
    slack: int = 2,
    ores: tuple[str, ...] = MINE_SYNC_ORES,
    full: bool = False,
    anyone: bool = False,
) -> int | None:
    """The next action at the team's mining sync site (:func:`mine_sync_site`), or ``None``.

    The miner walks next to the site and faces it; a helper walks to the free tile next to it
    nearest itself and faces it. Once the miner and all the helpers stand next to the site, all Do
    every step (a pair on a soft 3-agent site needs about ten Do's: each succeeds 1 time in 10);
    otherwise they wait (noop). The miner never Does alone: on a soft 3-agent site a lone success
    mines the block without the unlock. The caller decides when it is worth its steps (the library: by day on the
    overworld, nothing hostile near). ``reach``, ``slack``, ``ores``, ``full`` and ``anyone`` as in
    :func:`mine_sync_site`."""
    got = mine_sync_site(d, reach, slack, ores, full, anyone)
    if got is None:
        return None
    site, miner_id = got
    xy: Point = (site.x, site.y)
    if d.agent_id != miner_id and distance(d.position, xy) != 1:
        tiles = sorted(free_adjacent_tiles(d, xy), key=lambda p: (distance(d.position, p), p[1], p[0]))
        if not tiles:
            return None
        step = path_to(d, tiles[0], adjacent=False)
        return None if step is None else give_way(d, step)
    step = path_to(d, xy)
    if step is not None:
        return give_way(d, step)  # walking there (the miner), or turning to face it
    if distance(d.position, xy) != 1:
        return None  # no way there known
    mates = {t.id: (t.x, t.y) for t in team_alive(d)}
    crew = [miner_id] + mine_sync_helpers(d, site, miner_id, full)
    ready = all(i == d.agent_id or (i in mates and distance(mates[i], xy) == 1) for i in crew)
    return do() if ready else noop()
