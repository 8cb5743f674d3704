"""The team fed (docs/alem.md "The team fed"): eating and drinking only at what this agent can reach.

``act_on`` walks to a target and, when it has no path there, falls back to a greedy step that digs
at whatever is in the way, or to Do at whatever the agent faces. For food and water that wastes the
last steps of a starving agent: on Hard tuning seeds a revived miner boxed in by water, a table and
a teammate did Do at water (drink 9) 16 steps at a time until it starved, a ripe plant three tiles
away; a forager at 0 drink did Do at an unripe plant 33 steps, walled off from the water it walked
for. The helpers here pick the nearest water or ripe plant with a known path, and otherwise ask a
teammate or explore. The library's ``alem_role_policy`` does not call them: three variants that
did lost on the selection block (docs/alem.md "The team fed").
"""

from __future__ import annotations

from compass.games.alem.names import DO, MAP_SIZE, NOOP
from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.actions import move, request
from compass.games.alem.skill_api.knowledge import (
    Point,
    can_mine,
    direction_to,
    distance,
    facing,
    passive_mobs,
    team_alive,
)
from compass.games.alem.skill_api.paths import act_on, explore, path_to

#: How many remembered tiles of a kind :func:`supply_step` tries (nearest first): each is one search.
SUPPLY_CANDIDATES = 6


def reach_step(d: ObsData, target: Point) -> int | None:
    """Next action to act on ``target`` along a known path: Do when next to it and facing it, a
    turn when next to it, else the first move of a shortest path to a free tile beside it. ``None``
    when no known path leads there (:func:`path_to` with ``greedy=False``: a starving agent should
    not spend its last steps at a wall)."""
    target = (int(target[0]), int(target[1]))
    if distance(d.position, target) == 1:
        return DO if facing(d, target) else move(direction_to(d.position, target))
    return path_to(d, target, greedy=False)


def supply_step(d: ObsData, need: str, reach: int = MAP_SIZE) -> int | None:
    """Drink (``need="drink"``: water) or eat (``"food"``: a ripe plant; the forager also a cow in
    view, the others eat one only 1 time in 10 on Hard) at the nearest such tile within ``reach``
    (Manhattan) that this agent has a known path to (:func:`reach_step`). ``None`` when none is.

    Only the forager drinks at water for sure; the others drink 1 time in 10 on Hard
    (``non_specialist_efficiency``), which still outpaces thirst (one drink lost per 20 steps)."""
    name = "water" if need == "drink" else "ripe_plant"
    seen = [(b.x, b.y) for b in d.blocks if b.name == name]
    remembered = (
        list(d.memory.nearest_k((name,), d.x, d.y, SUPPLY_CANDIDATES)) if d.memory is not None else []
    )
    spots = sorted(set(seen) | set(remembered), key=lambda p: (distance(d.position, p), p[1], p[0]))
    if need == "food" and d.role == "forager":
        spots += [(c.x, c.y) for c in passive_mobs(d, reach) if c.coord != 2]
    for xy in spots[: SUPPLY_CANDIDATES + 2]:
        if distance(d.position, xy) > reach:
            continue
        step = reach_step(d, xy)
        if step is not None:
            return step
    return None


def fed_step(d: ObsData, food_at: int = 1, drink_at: int = 2, reach: int = 8) -> int | None:
    """Food or drink first at ``food_at`` food or ``drink_at`` drink or below, the scarcer first
    (drink on a tie: thirst takes a point every 20 steps, hunger every 25): water this agent has a
    path to at any distance, a ripe plant (the forager also a cow) within ``reach``; else ask a living
    teammate (one action, open 10 steps; any teammate may give); else, with nobody to ask, explore
    (for water, or near grass for food). ``None`` when neither is that low, or a request of this
    agent's is open and nothing is within reach (it waits for the Give doing its other work)."""
    needs = sorted(
        n
        for n in ((d.drink, 0, "drink"), (d.food, 1, "food"))
        if n[0] <= (drink_at if n[2] == "drink" else food_at)
    )
    if not needs:
        return None
    mates = team_alive(d)
    for _, _, need in needs:
        step = supply_step(d, need, MAP_SIZE if need == "drink" else reach)
        if step is not None:
            return step
        if mates and d.my_request is None:
            return request(need)
        if not mates:
            return explore(d) if need == "drink" else explore(d, near="grass")
    return None


def walk_wasted(d: ObsData, target: Point) -> bool:
    """Whether ``act_on(d, target)`` spends this step for nothing: not facing ``target``, it would Do
    at a tile Do cannot mine now (water, a plant, a table, stone without a pickaxe: ``path_to`` found
    no path and its greedy step has nothing to dig), or wait facing a teammate. A greedy dig through
    what the pickaxe mines is not wasted: it opens a way."""
    target = (int(target[0]), int(target[1]))
    if facing(d, target):
        return False
    act = act_on(d, target)
    if act == NOOP:
        return True
    return act == DO and not can_mine(d, d.facing_block)


def detour_step(
    d: ObsData, target: Point | None, need: str, reach: int = MAP_SIZE, wasted_only: bool = False
) -> int | None:
    """For a skill about to walk to ``target`` (the water or ripe plant it picked for ``need``):
    ``None`` when ``target`` is ``None`` or this agent has a known path to it (the skill's own walk
    gets there), or with ``wasted_only`` unless that walk is wasted (:func:`walk_wasted`: a greedy dig
    through what the pickaxe mines is let be); else the nearest ``need`` tile within ``reach`` it has
    a path to (:func:`supply_step`), else explore (near grass for food) to find one."""
    if target is None or reach_step(d, target) is not None:
        return None
    if wasted_only and not walk_wasted(d, target):
        return None
    step = supply_step(d, need, reach)
    if step is not None:
        return step
    return explore(d) if need == "drink" else explore(d, near="grass")
