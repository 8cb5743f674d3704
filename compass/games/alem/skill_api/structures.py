"""The team's structures: a shelter, forge or beacon built at one of the overworld's construction
sites (issue 23, item 2; docs/alem.md "The structures").

alem's rules (``alem_coop/game_logic.py`` ``do_construction``, ``action_masking.py`` and
``world_gen.place_construction_sites``): the overworld holds 8 construction sites on random
grass tiles, each a handover site (1 in 4; its window is 3-6 steps on Hard) or a sync site (2 or,
on Hard 9 times in 10, 3 agents; half of them soft). Any site takes any structure. At a handover
site the payer's Build pays (shelter 10 wood + 5 stone, forge 10 stone + 3 iron + 2 coal, beacon
3 iron + 2 coal) and leaves a ``construction_in_progress`` tile; another agent's Build of the same
structure facing it within the window completes it, and that completer unlocks COORD_BUILD_*
(both get HANDOVER_COMPLETE); on expiry the tile reverts and the payer gets its materials back.
A sync site builds when ``required`` agents Build the same structure on the same step, one of
them able to pay; a soft one also builds for a lone payer, but then pays no achievement. Build is
legal only next to a site, and only while someone on the team can pay (or, next to a started
handover, for its structure). Neither roles nor ``non_specialist_efficiency`` gate any of it.
"""

from __future__ import annotations

from compass.games.alem.names import BLOCK_ID, BUILD_COSTS
from compass.games.alem.obs import CoordSite, ObsData
from compass.games.alem.skill_api.actions import build, noop, request
from compass.games.alem.skill_api.coordination import STRUCTURES, agents_adjacent, known_sites
from compass.games.alem.skill_api.knowledge import distance, has_materials, team_alive
from compass.games.alem.skill_api.paths import path_to
from compass.games.alem.skill_api.survival import time_of_day

_SITE = "construction_site"
_BUILT = {"shelter": "epic_shelter", "forge": "epic_forge", "beacon": "epic_beacon"}


def built_structures(d: ObsData) -> set[str]:
    """The structures (``shelter``, ``forge``, ``beacon``) this agent has seen standing on its level.

    A built structure stays on the map, so an agent that has seen one knows the team's
    COORD_BUILD_* for it is taken (the team's score counts an achievement once).
    """
    seen = {b.name for b in d.blocks}
    mem = d.memory
    out = set()
    for kind, block in _BUILT.items():
        if block in seen or (mem is not None and (mem.blocks[mem.level] == BLOCK_ID[block]).any()):
            out.add(kind)
    return out


def structure_to_pay(d: ObsData) -> str | None:
    """The first structure (shelter, beacon, forge) this agent can pay for that it has not seen built."""
    built = built_structures(d)
    return next((k for k in STRUCTURES if k not in built and has_materials(d, k)), None)


def material_request(d: ObsData, structure: str = "shelter") -> int | None:
    """Ask the team for the first material ``structure`` still needs from this agent, or ``None``.

    Give works at any distance and moves one unit a step while the request lasts (10 steps), so
    a payer can bank a structure's materials from what its teammates hold (on Hard each role
    gathers up to 6-7 wood, and none alone held a shelter's 10 wood + 5 stone in the runs of
    docs/alem.md "The structures"). ``None`` while a request of this agent's runs, with
    everything in hand, without a living teammate, or once ``structure`` is seen built.
    """
    if d.my_request is not None or not team_alive(d) or structure in built_structures(d):
        return None
    for material, amount in BUILD_COSTS[structure].items():
        if d.inventory.get(material, 0) < amount:
            return request(material)
    return None


def wood_reserve(d: ObsData, tiers: int = 3) -> int:
    """The wood this agent still needs for its own tools: one per pickaxe and sword tier it lacks.

    Each of the wood, stone and iron pickaxe and sword costs 1 wood (alem's ``do_crafting``), so
    with ``tiers=3`` an agent with no tools keeps 6 and one with stone tools keeps 2 (for the iron
    ones); ``tiers=2`` counts the wood and stone tools only.
    """
    inv = d.inventory
    return max(0, tiers - inv.get("pickaxe", 0)) + max(0, tiers - inv.get("sword", 0))


def spare_wood(d: ObsData, tiers: int = 3) -> int:
    """The wood this agent can give a payer without losing a craft of its own (see :func:`wood_reserve`)."""
    return max(0, d.inventory.get("wood", 0) - wood_reserve(d, tiers))


def pool_ready(d: ObsData, fed: int = 5, dusk: int = 120, margin: int = 40, team: bool = True) -> bool:
    """Whether pooling a structure's materials now costs this agent nothing it needs first.

    True once its wood pickaxe, wood sword and stone pickaxe are made, its food and drink are
    above ``fed``, no teammate asks for food or drink (with ``team``), and the day is not in the
    ``margin`` steps before ``dusk`` (a request, the walk to a site and the wait there would run
    into the night). A payer that asked from the first day (docs/alem.md "The structures", vF)
    cost the team survival.
    """
    inv = d.inventory
    if inv.get("pickaxe", 0) < 2 or inv.get("sword", 0) < 1:
        return False
    if d.food <= fed or d.drink <= fed:
        return False
    if team and any(t.request in ("food", "drink") for t in team_alive(d)):
        return False
    return not dusk - margin <= time_of_day(d) < dusk


def build_sites(d: ObsData, kinds: tuple[str, ...] = ("handover",)) -> list[CoordSite]:
    """Construction sites of ``kinds`` this agent sees or remembers on its level, nearest first.

    Remembered sites come from the agent's map memory (the block and its coordination value);
    their ``soft`` flag is unknown there and reads False, so a remembered sync site is only a
    place to walk to. Ties break on (y, x), so agents that know the same sites order them alike.
    """
    sites = known_sites(d, lambda s: s.construction and s.name == _SITE and s.kind in kinds)
    return sorted(sites.values(), key=lambda s: (distance(d.position, (s.x, s.y)), s.y, s.x))


def pay_step(
    d: ObsData, reach: int = 20, call: int = 12, kinds: tuple[str, ...] = ("handover",)
) -> int | None:
    """The payer's next action toward a structure the team lacks, or ``None``.

    With the materials for :func:`structure_to_pay`, walk to the nearest known site of ``kinds``
    within ``reach`` (Manhattan), stand next to it facing it, and Build once a teammate stands
    next to it too (a handover needs a second agent to complete it within its 3-6 steps; a sync
    site, its ``required`` agents); until then wait there. Only while some living teammate is
    within ``call`` of the site: it is the teammate that can come and complete it
    (:func:`help_build_step`). ``None`` without materials, site or teammate in call.
    """
    kind = structure_to_pay(d)
    if kind is None:
        return None
    mates = team_alive(d)
    for site in build_sites(d, kinds):
        xy = (site.x, site.y)
        if distance(d.position, xy) > reach:
            break
        if site.kind == "sync" and (site.required > len(mates) + 1 or site.soft):
            continue  # a soft site builds for a lone payer and pays nothing: only hard ones
        if not any(distance((t.x, t.y), xy) <= call for t in mates):
            continue
        step = path_to(d, xy)
        if step is not None:
            return step
        need = site.required if site.kind == "sync" else 2
        return build(kind) if agents_adjacent(d, xy) >= need else noop()
    return None


def help_build_step(d: ObsData, reach: int = 12, kinds: tuple[str, ...] = ("handover",)) -> int | None:
    """A teammate's part in a structure: complete a started one, or join a payer waiting at a site.

    First a construction handover a teammate started (in view, within its remaining steps + 1):
    face it and Build the same structure. Else a known site of ``kinds`` within ``reach`` with a
    teammate standing next to it (the payer, by :func:`pay_step`): walk next to it, face it and
    wait; at a sync site Build once its ``required`` agents stand there. Once next to the site, a
    Build that is not legal means nobody on the team can pay (the teammate was passing by):
    ``None``, as without such a site.
    """
    for h in d.handovers:
        if (
            h.building in BUILD_COSTS
            and h.initiator != d.agent_id
            and distance(d.position, (h.x, h.y)) <= h.remaining + 1
        ):
            step = path_to(d, (h.x, h.y))
            return build(h.building) if step is None else step
    mates = team_alive(d)
    for site in build_sites(d, kinds):
        xy = (site.x, site.y)
        if distance(d.position, xy) > reach:
            break
        if not any(distance((t.x, t.y), xy) == 1 for t in mates):
            continue
        if distance(d.position, xy) == 1:
            legal = [k for k in STRUCTURES if build(k) in d.legal_indices]
            if not legal:
                continue
            step = path_to(d, xy)
            if step is not None:
                return step
            if site.kind == "sync" and agents_adjacent(d, xy) >= site.required:
                return build(legal[0])
            return noop()
        step = path_to(d, xy)
        if step is not None:
            return step
    return None
