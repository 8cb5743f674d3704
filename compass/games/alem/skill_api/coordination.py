"""Team conventions for ALEM's coordination sites: which site the team converges on (a rule every
agent applies to what it sees, so they agree without talking), who stands where, what it pays, and
how the team stays within a view of its leader so that everyone sees the same sites; and the elite
creatures and large cows the team kills together (hunting)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import permutations

from compass.games.alem.names import (
    BUILD_COSTS,
    CONSTRUCTION_BLOCK_NAMES,
    DIRECTION_ACTIONS,
    N_AGENTS,
    VIEW_COLS,
    VIEW_ROWS,
    WALKABLE_BLOCKS,
)
from compass.games.alem.obs import CoordSite, Mob, ObsData, Teammate
from compass.games.alem.skill_api.actions import build, do, noop, request
from compass.games.alem.skill_api.knowledge import (
    STEP_DIRS,
    Point,
    _approachable,
    _coordination_tile,
    _occupied,
    can_build_here,
    can_mine,
    distance,
    has_materials,
    leader_id,
    nearest,
    team_alive,
    team_center,
    walkable,
)
from compass.games.alem.skill_api.paths import flee, path_to
from compass.games.alem.skill_api.progress import achievement_weight

_COORD_MINE = {
    "stone": "STONE",
    "coal": "COAL",
    "iron": "IRON",
    "diamond": "DIAMOND",
    "sapphire": "SAPPHIRE",
    "ruby": "RUBY",
}


def mine_unlock(site: CoordSite) -> str | None:
    """``COORD_MINE_<ORE>_<SOFT|HARD>`` for a sync site on an ore block (what the agent that mines it
    unlocks), ``None`` for any other site."""
    if site.kind != "sync" or site.name not in _COORD_MINE:
        return None
    return f"COORD_MINE_{_COORD_MINE[site.name]}_{'SOFT' if site.soft else 'HARD'}"


def remembered_site(d: ObsData, name: str, x: int, y: int, value: int) -> CoordSite:
    """The site at a remembered coordination tile (:meth:`AlemMemory.coord_tiles`), ``value`` as the
    memory stores it (> 0 the agents a sync site needs, < 0 a handover's window). The memory does
    not record softness: ``soft`` is False. A construction block is a construction site, as in view."""
    dx, dy = x - d.position[0], y - d.position[1]
    return CoordSite(
        name,
        x,
        y,
        dx,
        dy,
        abs(dx) + abs(dy),
        "sync" if value > 0 else "handover",
        required=max(value, 0),
        window=max(-value, 0),
        construction=name in CONSTRUCTION_BLOCK_NAMES,
    )


def known_sites(d: ObsData, keep: Callable[[CoordSite], bool]) -> dict[Point, CoordSite]:
    """The coordination sites ``keep`` accepts that this agent sees, or remembers on its level, by tile.

    A site in view is taken as seen (its softness known); any other comes from the memory's
    coordination values (:func:`remembered_site`). A site the agent saw used up is gone from its
    memory too. Every seen-or-remembered site list (pairs, handovers, construction sites, the
    rally) is this with its own ``keep``."""
    sites = {(s.x, s.y): s for s in d.coord_sites if keep(s)}
    mem = d.memory
    if mem is not None and mem.level == d.level:
        for x, y, value in mem.coord_tiles():
            name = mem.block_at(x, y)
            if (x, y) in sites or name is None:
                continue
            site = remembered_site(d, name, x, y, value)
            if keep(site):
                sites[(x, y)] = site
    return sites


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
    helpers: bool = False,
) -> CoordSite | None:
    """The coordination site the team should converge on, by a convention every agent can apply.

    Sites next to the team leader (lowest living id) come first, then the one closest to the
    team's centre; construction sites only when someone can pay; with ``new_only``, only sites
    that can still unlock an achievement for this agent. Deterministic tie-breaks, so agents
    seeing the same tiles pick the same one. Mining sites count only when this agent can mine them,
    unless ``helpers``: then also sync sites it can only help at, and "new" is judged by
    :func:`site_rewards_for` (a shelter handover then pays COORD_BUILD_SHELTER). On Hard tuning
    seeds ``helpers`` completed no more 2-agent sites and scored lower (docs/alem.md "Daytime scoring").
    """
    cands = _eligible_sites(d, kinds, max_required, new_only, helpers)
    if not cands:
        return None
    lead_pos = leader_position(d)
    center = team_center(d)
    return min(
        cands, key=lambda s: (distance(lead_pos, (s.x, s.y)) > 1, distance(center, (s.x, s.y)), s.y, s.x)
    )


def _eligible_sites(
    d: ObsData, kinds: tuple[str, ...], max_required: int, new_only: bool, helpers: bool
) -> list[CoordSite]:
    """The visible sites :func:`coordination_target` and :func:`team_site` choose from."""
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
        elif not s.construction and not can_mine(d, s.name) and not helpers:
            continue
        rewards = site_rewards_for(d, s) if helpers else coordination_rewards(s)
        if not rewards:
            continue
        if new_only and d.achievements and all(a in d.achievements for a in rewards):
            continue
        cands.append(s)
    return cands


# --------------------------------------------------------------------------- the leader's choice
def leader_position(d: ObsData, lead: int | None = None) -> Point:
    """Where the team leader stands: agent ``lead``, by default :func:`leader_id` (the lowest living id).

    Every agent's observation gives every teammate's coordinates (off-screen ones too), so all
    agents agree on this point without any message; the leader gets its own position, and a dead
    ``lead`` gives this agent's position.
    """
    lead = leader_id(d) if lead is None else lead
    if lead == d.agent_id:
        return d.position
    return next(((t.x, t.y) for t in team_alive(d) if t.id == lead), d.position)


def team_site(
    d: ObsData,
    reach: int = 5,
    kinds: tuple[str, ...] = ("sync", "handover"),
    max_required: int = N_AGENTS,
    new_only: bool = True,
    lead: int | None = None,
    helpers: bool = False,
) -> CoordSite | None:
    """The coordination site the leader picks, as any agent near the leader can work it out.

    The site (of those :func:`coordination_target` accepts) nearest the leader's position, among
    those within ``reach`` (Manhattan) of it: the leader picks from its own view, and a follower
    that keeps within a view of the leader (:func:`cohesion_step`) sees the same tiles, so both
    name the same site. :func:`coordination_target` instead ranks sites from each agent's own view
    around the team's centre, and on Hard the team spreads wider than a view, so agents picked
    different sites (docs/alem.md "The coordination points in view every episode").
    Ties break on (y, x), so agents seeing the same tiles agree. ``lead`` as in :func:`leader_position`.
    ``helpers`` as in :func:`coordination_target` (also sync sites this agent can only help at).
    With it the team agreed on one site far more often on Hard tuning seeds, but the library
    scored no higher (docs/alem.md "One choice for the team").
    """
    pos = leader_position(d, lead)
    cands = [
        s
        for s in _eligible_sites(d, kinds, max_required, new_only, helpers)
        if distance(pos, (s.x, s.y)) <= reach
    ]
    if not cands:
        return None
    return min(cands, key=lambda s: (distance(pos, (s.x, s.y)), s.y, s.x))


def _leads(d: ObsData, lead: int | None) -> bool:
    """Whether this agent is the leader, or has no living leader to follow."""
    lead = leader_id(d) if lead is None else lead
    return lead == d.agent_id or not any(t.id == lead for t in team_alive(d))


def shared_site(
    d: ObsData, reach: int = 5, lead: int | None = None, max_required: int = N_AGENTS
) -> CoordSite | None:
    """The team's one coordination target: the leader picks, the followers go where it stands.

    The leader takes :func:`team_site` (with ``helpers``: sync sites it can only help at count,
    judged by what they pay it). A follower takes only the site the leader stands next to, whether
    or not it pays the follower anything new (the team's score counts an achievement once, when
    any agent gets it): the leader announces its choice by walking there, which every follower
    sees, since the observation gives teammates' coordinates. ``None`` when the leader is not at a
    site yet. ``lead`` as in :func:`leader_position`; ``max_required`` caps the leader's sync sites.
    """
    if _leads(d, lead):
        return team_site(d, reach, max_required=max_required, helpers=True)
    pos = leader_position(d, lead)
    cands = [
        s
        for s in _eligible_sites(d, ("sync", "handover"), N_AGENTS, new_only=False, helpers=True)
        if distance(pos, (s.x, s.y)) == 1
    ]
    return min(cands, key=lambda s: (s.y, s.x)) if cands else None


def within_leash(d: ObsData, xy: Point, radius: int, lead: int | None = None) -> bool:
    """Whether ``xy`` lies within ``radius`` (Manhattan) of the leader (always, for the leader)."""
    return _leads(d, lead) or distance(leader_position(d, lead), xy) <= radius


def nearest_on_leash(
    d: ObsData,
    names: str | list[str] | tuple[str, ...],
    radius: int,
    solo: bool = True,
    lead: int | None = None,
) -> Point | None:
    """The closest tile of ``names`` (visible, then remembered) that lies within ``radius`` of the
    leader: where a follower can gather without leaving the team. The leader gets :func:`nearest`."""
    if _leads(d, lead):
        return nearest(d, names, solo=solo)
    wanted = {names} if isinstance(names, str) else set(names)
    pos = leader_position(d, lead)
    tiles = [(b.x, b.y) for b in d.blocks if b.name in wanted]
    if d.memory is not None:
        tiles += d.memory.nearest_k(tuple(wanted), pos[0], pos[1], 16)
    tiles = sorted(
        {p for p in tiles if distance(pos, p) <= radius}, key=lambda p: (distance(d.position, p), p[1], p[0])
    )
    for p in tiles:
        if _approachable(d, p) and not (solo and _coordination_tile(d, p)):
            return p
    return None


def cohesion_step(d: ObsData, radius: int = 6, lead: int | None = None) -> int | None:
    """A follower farther than ``radius`` from the leader walks toward it; ``None`` otherwise.

    Keeps the team within about one view (9x11 tiles) of the leader by day, so a coordination site
    the leader sees is in every follower's view too (:func:`team_site`). ``None`` for the leader,
    without a living leader, or when no step toward it is known. ``lead`` as in :func:`leader_position`.
    A leash of 6-9 tiles cost the library exploration and food on Hard tuning seeds (docs/alem.md
    "One choice for the team").
    """
    if _leads(d, lead):
        return None
    pos = leader_position(d, lead)
    if distance(d.position, pos) <= radius:
        return None
    return path_to(d, pos)


def site_rewards_for(d: ObsData, site: CoordSite) -> list[str]:
    """The achievements of :func:`coordination_rewards` this agent can earn at ``site`` with its tools.

    alem counts every agent that acts on a sync tile toward the agents it needs, whatever its
    pickaxe, and gives each of them COORD_<N>_AGENTS_*; only COORD_MINE_* needs the agent to mine
    the block itself (``check_sync_coordination`` and ``do_action`` in alem's game_logic). So a
    teammate without a pickaxe can still complete a stone site with the miner. A handover of a
    block this agent cannot mine pays nothing.
    """
    rewards = coordination_rewards(site)
    if site.construction and site.kind == "handover":
        # A construction handover also builds the structure: its completer unlocks COORD_BUILD_*
        # (coordination_rewards omits it, and the library's default rule keeps that).
        return rewards + ["COORD_BUILD_SHELTER"]
    if site.construction or can_mine(d, site.name):
        return rewards
    if site.kind != "sync":
        return []
    return [a for a in rewards if not a.startswith("COORD_MINE_")]


def coordination_rewards(site: CoordSite, structure: str = "shelter") -> list[str]:
    """Achievements a participant can unlock at ``site`` (so skills skip sites that pay nothing new)."""
    if site.kind == "handover":
        return ["HANDOVER_COMPLETE"] + ([] if site.construction else ["COORD_MINE_HANDOVER"])
    if site.construction:
        return [f"COORD_BUILD_{structure.upper()}"]
    tier = "SOFT" if site.soft else "HARD"
    out = [f"COORD_{'2' if site.required == 2 else '3'}_AGENTS_{tier}"]
    mine = mine_unlock(site)
    return out if mine is None else [*out, mine]


#: The order a construction site is tried in: the shelter costs only wood and stone.
STRUCTURES = ("shelter", "beacon", "forge")


def construction_action(d: ObsData, site: CoordSite) -> int | None:
    """The Build action to walk to a construction ``site`` with and use there, or ``None``.

    alem lists Build only next to a site, so a skill that waits for it to be legal never walks
    there. A handover this site already holds gives its structure; else the first structure that
    is legal now, then one this agent pays for, then a shelter when a teammate (the payer, by
    :func:`coordination_target`'s rule) stands next to the site.
    """
    for h in d.handovers:
        if (h.x, h.y) == (site.x, site.y) and h.building in BUILD_COSTS:
            return build(h.building)
    for kind in STRUCTURES:
        if can_build_here(d, kind):
            return build(kind)
    for kind in STRUCTURES:
        if has_materials(d, kind):
            return build(kind)
    if any(distance((t.x, t.y), (site.x, site.y)) == 1 for t in team_alive(d)):
        return build("shelter")
    return None


def large_passive_target(d: ObsData, reach: int = 8) -> Mob | None:
    """A large passive creature (``coord`` > 0: alem's large cows) the team can kill together, or ``None``.

    COORD_LARGE_PASSIVE_KILL (3 points) goes to the agents whose blow kills it while its
    ``agents_required`` agents hit it on the same step. Only when this agent lacks the achievement
    and enough of the team (this agent included) is within ``reach`` tiles of it; nearest first.
    """
    if "COORD_LARGE_PASSIVE_KILL" in d.achievements:
        return None
    team = [d.position] + [(t.x, t.y) for t in team_alive(d)]
    for m in sorted(d.mobs, key=lambda m: (m.dist, m.id)):
        if m.hostile or m.coord <= 0 or m.dist > reach:
            continue
        need = max(2, m.agents_required)
        if sum(1 for p in team if distance(p, (m.x, m.y)) <= reach) >= need:
            return m
    return None


# --------------------------------------------------------------------------- hunting together
#: The achievement a coordinated kill of each creature kind unlocks (alem's attack_mob: every agent
#: whose Do hits the creature on the step it dies, while ``agents_required`` agents hit it then).
HUNT_UNLOCKS = {
    "melee": "COORD_ELITE_MELEE_KILL",
    "ranged": "COORD_ELITE_RANGED_KILL",
    "passive": "COORD_LARGE_PASSIVE_KILL",
}
#: What each pays (its unlock's leaderboard weight: an elite 8 points, a large cow 3).
HUNT_POINTS = {kind: achievement_weight(name) for kind, name in HUNT_UNLOCKS.items()}


def hunt_target(
    d: ObsData,
    reach: int = 5,
    min_health: float = 0.0,
    kinds: tuple[str, ...] = ("melee", "ranged", "passive"),
) -> Mob | None:
    """The elite creature or large cow (``coord`` > 0) the team kills together now, or ``None``.

    alem gives COORD_ELITE_MELEE_KILL / COORD_ELITE_RANGED_KILL (8 points) or COORD_LARGE_PASSIVE_KILL
    (3) only to the agents whose Do kills the creature on a step when at least its ``agents_required``
    agents (2 or 3; 3 for most on Hard) Do facing it; a kill by fewer pays nothing, a hard one (``coord``
    2) takes no damage from fewer. A creature qualifies when this agent lacks its unlock, the living
    team is large enough, this agent is within ``reach`` (Manhattan) of it and so are at least
    ``agents_required`` agents (this one included) with ``min_health`` or more, each with it in
    view (:func:`in_view_of`: a teammate that does not see it would not come). The dearest first,
    then the least summed distance of the nearest ``agents_required`` agents, ties by id: a rule
    every agent applies to what it sees (creature ids are alem's slots, the same for all).
    ``kinds``: the creature kinds hunted (``("passive",)``: large cows only, which do not hit back).
    """
    mates = [(t.x, t.y) for t in team_alive(d) if t.health >= min_health]
    best = None
    for m in d.mobs:
        unlock = HUNT_UNLOCKS.get(m.kind)
        if (
            m.coord <= 0
            or unlock is None
            or unlock in d.achievements
            or m.dist > reach
            or m.kind not in kinds
        ):
            continue
        need = max(2, m.agents_required)
        if need > 1 + len(team_alive(d)):
            continue
        # Only teammates that see it too come (agents share no creature's elite flag).
        team = [d.position] + [p for p in mates if in_view_of((m.x, m.y), p)]
        dists = sorted(distance(p, (m.x, m.y)) for p in team)
        if len(dists) < need or dists[need - 1] > reach:
            continue
        key = (-HUNT_POINTS[m.kind], sum(dists[:need]), m.id)
        if best is None or key < best[0]:
            best = (key, m)
    return None if best is None else best[1]


def hunt_step(
    d: ObsData,
    reach: int = 5,
    min_health: float = 0.0,
    kinds: tuple[str, ...] = ("melee", "ranged", "passive"),
) -> int | None:
    """The next action of a kill together of :func:`hunt_target`, or ``None`` when there is none.

    Not yet next to it: walk to this agent's tile of :func:`opening_stands` round it (each agent its
    own; recomputed every step, as the creature moves), or towards it when there is no room for all.
    Next to it: turn to face it, then wait (noop) until ``agents_required`` agents stand next to it
    and Do together: at a hard creature every step (fewer Do's change nothing), at a soft one only
    on even steps, which gives an agent that arrived not facing it a step to turn (a Do by fewer
    agents does half damage and could kill it without the unlock). One coordinated Do kills any
    creature of the overworld or level 1 (3 agents' damage doubled against at most 7 health). The
    caller decides when a hunt is worth its steps (the library: by day, healthy and fed)."""
    m = hunt_target(d, reach, min_health, kinds)
    if m is None:
        return None
    xy: Point = (m.x, m.y)
    need = max(2, m.agents_required)
    if distance(d.position, xy) > 1:
        stand = opening_stands(d, m).get(d.agent_id)
        if stand is not None and stand != d.position:
            step = path_to(d, stand, adjacent=False)
            if step is not None:
                return step
        return path_to(d, xy)
    step = path_to(d, xy)
    if step is not None:
        return step  # turning to face it
    if agents_adjacent(d, xy) < need or (m.coord == 1 and d.step % 2):
        return noop()
    return do()


# --------------------------------------------------------------------------- calling the team to an elite
#: The request that calls the team to an elite creature (docs/alem.md "Hunting together, second pass:
#: calling the team"). alem carries one thing between agents wherever they stand: a request, shown to
#: every teammate for REQUEST_DURATION steps with the caller's position. A sapphire is never asked for
#: otherwise (the library asks for food, drink and building materials; a sapphire takes a diamond
#: pickaxe to mine), so a request for one reads as "an elite creature here, come".
CALL_REQUEST = "sapphire"


def elite_to_call(
    d: ObsData,
    min_health: float = 0.0,
    kinds: tuple[str, ...] = ("melee", "ranged"),
    reach: int = 99,
) -> Mob | None:
    """The elite creature in this agent's view that it calls the team to, or ``None``.

    An elite (``coord`` > 0) of ``kinds`` whose unlock (COORD_ELITE_MELEE_KILL / _RANGED_KILL, 8
    points) this agent lacks, and whose ``agents_required`` agents the living team has with
    ``min_health`` health or more within ``reach`` tiles of this agent (this agent included: a call
    nobody can answer would only hold the caller): the dearest, then the nearest, ties by id.
    """
    able = 1 + sum(1 for t in team_alive(d) if t.health >= min_health and t.dist <= reach)
    best = None
    for m in d.mobs:
        unlock = HUNT_UNLOCKS.get(m.kind)
        if m.coord <= 0 or m.kind not in kinds or unlock is None or unlock in d.achievements:
            continue
        if max(2, m.agents_required) > able:
            continue
        key = (-HUNT_POINTS[m.kind], m.dist, m.id)
        if best is None or key < best[0]:
            best = (key, m)
    return None if best is None else best[1]


_MOVES = {DIRECTION_ACTIONS[name]: (dx, dy) for name, dx, dy in STEP_DIRS}


def lead_step(d: ObsData, threat: Point) -> int:
    """A step away from a creature at ``threat`` that leads it towards the team: the first step of
    the way to the nearest living teammate when it does not bring the agent nearer the creature,
    else :func:`flee`. A zombie walks after the nearest agent (alem moves it towards the closest
    player on 3 steps in 4 when one is within 10 tiles) and stops to hit one next to it, so an agent
    that keeps two tiles ahead brings it to the others without being hit on the way."""
    mates = team_alive(d)
    if mates:
        t = min(mates, key=lambda t: (t.dist, t.id))
        step = path_to(d, (t.x, t.y))
        delta = _MOVES.get(step)
        if delta is not None:
            nxt = (d.position[0] + delta[0], d.position[1] + delta[1])
            if walkable(d, nxt) and nxt != threat and distance(nxt, threat) >= distance(d.position, threat):
                return step
    return flee(d, threat)


def help_near(d: ObsData, m: Mob, reach: int = 7, min_health: float = 0.0) -> bool:
    """Whether the agents elite creature ``m`` needs (its ``agents_required``, at least 2) stand within
    ``reach`` tiles (Manhattan) of it, this agent included, teammates counted only with ``min_health``
    or more. A hard elite (``coord`` 2) takes no damage from fewer: fighting it without them only
    costs health. An ordinary creature (``coord`` 0) needs no help: True."""
    if m.coord <= 0:
        return True
    xy = (m.x, m.y)
    near = int(distance(d.position, xy) <= reach)
    near += sum(1 for t in team_alive(d) if t.health >= min_health and distance((t.x, t.y), xy) <= reach)
    return near >= max(2, m.agents_required)


def caller(d: ObsData, reach: int = 24) -> Teammate | None:
    """The nearest living teammate calling the team (its request is :data:`CALL_REQUEST`) within
    ``reach`` tiles (Manhattan), or ``None``. Teammates' positions and requests reach every agent."""
    calling = [t for t in team_alive(d) if t.request == CALL_REQUEST and t.dist <= reach]
    return min(calling, key=lambda t: (t.dist, t.id), default=None)


def call_step(
    d: ObsData,
    reach: int = 24,
    hold: int = 3,
    min_health: float = 0.0,
    kinds: tuple[str, ...] = ("melee", "ranged"),
) -> int | None:
    """Bring the agents an elite creature needs to it: the next action, or ``None``.

    An agent that sees an elite (:func:`elite_to_call`, the agents it needs within ``reach``)
    calls (requests :data:`CALL_REQUEST`, again whenever its last call has run out) and holds it
    in view: it walks towards it until ``hold`` tiles from it and waits there; it does not step
    next to it (a hard one takes no damage from one agent; a soft one hit alone dies without the
    unlock), and it leads a zombie that comes within 2 tiles towards the team (:func:`lead_step`)
    rather than wait there to be hit. An agent that sees none walks to the
    nearest :func:`caller` within ``reach`` and waits within 2 tiles of it. Once the creature's
    agents are all near and see it, :func:`hunt_step` (called first) makes the kill. ``None`` when
    this agent sees no elite and nobody calls, or while its own request is another one (food,
    drink: those come first). The caller decides when a call is worth it (the library: by day)."""
    m = elite_to_call(d, min_health, kinds, reach)
    if m is not None:
        if d.my_request is None:
            return request(CALL_REQUEST)
        if d.my_request != CALL_REQUEST:
            return None
        if m.dist <= 2 and m.kind == "melee":
            return lead_step(d, (m.x, m.y))
        if m.dist > hold:
            step = path_to(d, (m.x, m.y))
            if step is not None:
                return step
        return noop()
    t = caller(d, reach)
    if t is None:
        return None
    if t.dist > 2:
        step = path_to(d, (t.x, t.y))
        if step is not None:
            return step
    return noop()


# --------------------------------------------------------------------------- the opening
def in_view_of(xy: Point, pos: Point, margin: int = 0) -> bool:
    """Whether tile ``xy`` lies in the egocentric view of an agent standing at ``pos``
    (VIEW_COLS x VIEW_ROWS, the agent at the centre), at least ``margin`` tiles inside its edge."""
    return abs(xy[0] - pos[0]) <= VIEW_COLS // 2 - margin and abs(xy[1] - pos[1]) <= VIEW_ROWS // 2 - margin


# What each sync site kind pays the team (docs/alem.md "Metrics": COORD_<n>_AGENTS_<tier>'s weight),
# keyed by (agents required, capped at 3; soft): the opening works the dearest first.
OPENING_POINTS = {
    (n, soft): achievement_weight(f"COORD_{n}_AGENTS_{'SOFT' if soft else 'HARD'}")
    for n in (2, 3)
    for soft in (False, True)
}


def opening_site(d: ObsData, sizes: tuple[int, ...] = (3,)) -> CoordSite | None:
    """The sync site the whole team works together now, or ``None``.

    ``sizes``: the requirements worked (``(3,)``: 3-agent sites only; ``(2, 3)``: also 2-agent
    ones, which the whole team works as well: alem counts every Do facing the tile, so three agents
    meet a requirement of 2 and all three unlock COORD_2_AGENTS_<tier>; docs/alem.md "The opening,
    second pass: the 2-agent sites"). A site needing more agents than are alive is skipped; a
    2-agent site is ranked after the 3-agent ones worth as much (by ``OPENING_POINTS``).

    A rule every agent applies to what all of them see: only sites (not construction ones) whose
    requirement is in ``sizes`` and no more than the living team, that lie in every living agent's
    view one tile inside its edge (so their neighbours too are seen by all, and every agent lists
    the same candidates), have a walkable neighbour for every living agent, and still pay this
    agent its COORD_<n>_AGENTS_<tier> (the team unlocks it on the same step, so they agree on that
    too). The dearest first (``OPENING_POINTS``: a hard 3-agent site 8 points, a soft one 5), then
    the site most agents already stand next to (the choice sticks while the team walks), then the
    least summed distance to the team, ties by (y, x). The team spawns together, and such sites are in all three views at step 0 in about a
    third of Hard episodes, or come into them in the first steps (docs/alem.md "The opening: the
    3-agent sites at the start").
    """
    team = [d.position] + [(t.x, t.y) for t in team_alive(d)]
    cands = []
    for s in d.coord_sites:
        xy = (s.x, s.y)
        if s.kind != "sync" or s.construction or s.name in WALKABLE_BLOCKS:
            continue
        if s.required not in sizes or s.required > len(team) or s.required < 2:
            continue
        if f"COORD_{min(s.required, 3)}_AGENTS_{'SOFT' if s.soft else 'HARD'}" in d.achievements:
            continue
        if not all(in_view_of(xy, p, margin=1) for p in team):
            continue
        # A tile for every living agent (opening_stands gives each its own).
        stands = [(s.x + dx, s.y + dy) for _, dx, dy in STEP_DIRS]
        if sum(walkable(d, p, unknown=False) for p in stands) < len(team):
            continue
        cands.append(s)
    if not cands:
        return None

    def key(s: CoordSite) -> tuple:
        xy = (s.x, s.y)
        by = sum(distance(p, xy) == 1 for p in team)
        pts = OPENING_POINTS[(min(s.required, 3), s.soft)]
        return (-pts, -s.required, -by, sum(distance(p, xy) for p in team), s.y, s.x)

    return min(cands, key=key)


def opening_stands(d: ObsData, site: CoordSite) -> dict[int, Point]:
    """Which walkable tile next to ``site`` each living agent (by id) stands on for the opening.

    The assignment with the least summed (Manhattan) distance from the agents' positions, ties by
    the tiles' (y, x) order: every agent sees every teammate's position and (for an
    :func:`opening_site`) the same tiles, so all compute the same one. Two agents walking to the
    same free tile would both be refused by alem, step after step (seen on Hard seed 37)."""
    agents = sorted([(d.agent_id, d.position)] + [(t.id, (t.x, t.y)) for t in team_alive(d)])
    tiles = sorted(
        (
            (site.x + dx, site.y + dy)
            for _, dx, dy in STEP_DIRS
            if walkable(d, (site.x + dx, site.y + dy), unknown=False)
        ),
        key=lambda p: (p[1], p[0]),
    )
    if len(tiles) < len(agents):
        return {}
    best = min(
        permutations(tiles, len(agents)),
        key=lambda perm: (sum(distance(pos, t) for (_, pos), t in zip(agents, perm, strict=True)), perm),
    )
    return {a: t for (a, _), t in zip(agents, best, strict=True)}


def opening_step(d: ObsData, sizes: tuple[int, ...] = (3,)) -> int | None:
    """The next action of the team's opening at :func:`opening_site` (``sizes`` as there), or
    ``None`` when there is none (or no way to it is known).

    Walks to its tile of :func:`opening_stands` and faces the site, then waits (noop) until the
    whole team it needs stands next to it. alem counts every Do that faces a sync tile on the same step, pickaxe
    or not: at a hard site fewer Do's fail and change nothing, so the agents Do every step once all
    are there (one still turning joins a step later); at a soft site a Do with too few agents
    succeeds alone 1 time in 10 at Hard, consuming the site without the COORD unlock, so the agents
    Do only on even steps, which gives an agent that arrived not facing it a step to turn. The
    caller decides when the opening is worth its steps (the library: on the overworld by day).
    """
    site = opening_site(d, sizes)
    if site is None:
        return None
    xy: Point = (site.x, site.y)
    stand = opening_stands(d, site).get(d.agent_id)
    if stand is None:
        return None
    if d.position != stand:
        # A pause in turn (by id) breaks the tie when two agents step onto one tile on the way.
        if (d.step + d.agent_id) % 6 == 0:
            return noop()
        return path_to(d, stand, adjacent=False)
    step = path_to(d, xy)
    if step is not None:
        return step  # turning to face it
    if agents_adjacent(d, xy) < site.required or (site.soft and d.step % 2):
        return noop()
    return do()


# --------------------------------------------------------------------------- the rally: the opening again, later
def _site_points(d: ObsData, required: int, soft: bool | None) -> int:
    """What a sync site needing ``required`` agents still pays the team by its COORD_<n>_AGENTS_<tier>
    (``OPENING_POINTS``), 0 when this agent has it; ``soft=None`` (a remembered site: the memory
    keeps no tier) counts the dearer tier this agent still lacks."""
    n = min(required, 3)
    tiers = (False, True) if soft is None else (soft,)
    return max(
        (
            OPENING_POINTS[(n, s)]
            for s in tiers
            if f"COORD_{n}_AGENTS_{'SOFT' if s else 'HARD'}" not in d.achievements
        ),
        default=0,
    )


def rally_site(d: ObsData, sizes: tuple[int, ...] = (3,), reach: int = 12) -> CoordSite | None:
    """A sync site with room for the whole team within ``reach`` (Manhattan) of the leader, seen or
    remembered, to which the team walks for another opening; ``None`` when there is none.

    The opening (:func:`opening_site`) takes only sites in every agent's view, which after the
    start happens seldom: the team spreads. This finds the site the leader (:func:`leader_position`)
    would walk to: of the visible and remembered (``AlemMemory.coord_tiles``) sync sites on blocks
    to act on (not construction ones) whose requirement is in ``sizes`` and no more than the living
    team, those with a known walkable neighbour for every living agent that still pay this agent a
    COORD_<n>_AGENTS_<tier> (a remembered site either tier: the memory keeps none), the dearest by
    ``OPENING_POINTS``, then the nearest the leader, ties by (y, x). A follower applies the same
    rule to its own knowledge around the leader, to tell whether following the leader can pay
    (agents share no map: the leader's choice is announced by where it walks, and once the site is
    in every view :func:`opening_site` takes over with the same choice for all)."""
    team = 1 + len(team_alive(d))
    pos = leader_position(d)
    seen = {(s.x, s.y) for s in d.coord_sites}
    sites = known_sites(
        d, lambda s: s.kind == "sync" and not s.construction and s.name not in WALKABLE_BLOCKS
    )
    best = None
    for (x, y), site in sites.items():
        soft = site.soft if (x, y) in seen else None  # the memory keeps no tier
        if site.required not in sizes or not 2 <= site.required <= team or distance(pos, (x, y)) > reach:
            continue
        pts = _site_points(d, site.required, soft)
        if not pts:
            continue
        if sum(walkable(d, (x + dx, y + dy), unknown=False) for _, dx, dy in STEP_DIRS) < team:
            continue
        key = (-pts, -site.required, distance(pos, (x, y)), y, x)
        if best is None or key < best[0]:
            best = (key, site)
    return None if best is None else best[1]


def rally_step(d: ObsData, sizes: tuple[int, ...] = (3,), reach: int = 12, radius: int = 2) -> int | None:
    """The next step of a rally to :func:`rally_site`, or ``None`` when there is none to walk.

    The leader walks next to its rally site and waits there (noop) until every living teammate
    stands within ``radius`` of it; a follower that knows such a site around the leader walks to within
    ``radius`` of the leader. Then the site lies in every agent's view and the caller's opening
    (:func:`opening_step`, which should come first) works it with the whole team. ``None`` while
    an opening site is in view, for a follower already close, and when no way is known. The caller
    decides when a rally is worth its steps (e.g. by day on the overworld, the team together).
    In the library on Hard block E (728-775) it moved the 3-agent unlocks a little and scored no
    higher (ties, -0.07 to -0.69): docs/alem.md "The opening, third pass"."""
    if opening_site(d, sizes) is not None:
        return None
    site = rally_site(d, sizes, reach)
    if site is None:
        return None
    if not _leads(d, None):
        pos = leader_position(d)
        return path_to(d, pos) if distance(d.position, pos) > radius else None
    xy = (site.x, site.y)
    if distance(d.position, xy) > 1:
        return path_to(d, xy)
    if any(distance((t.x, t.y), d.position) > radius for t in team_alive(d)):
        return noop()
    return None
