# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Mine coal and iron for iron tools and armour
def gather_coal_and_iron(obs: str) -> int:
    """Mine coal (wood pickaxe) and iron (stone pickaxe) until holding 3 of each, the amount iron armour needs
    (iron pickaxe and sword need 1 each, beacons 3 iron + 2 coal). Picks whichever ore is missing and known
    (visible or remembered), nearest first; diamonds too once an iron pickaxe is held. Explores when none is known."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    inv = d.inventory
    wanted = []
    if inv["pickaxe"] >= 3 and inv["diamond"] < 3:
        wanted.append("diamond")
    if inv["pickaxe"] >= 2 and inv["iron"] < 3:
        wanted.append("iron")
    if inv["pickaxe"] >= 1 and inv["coal"] < 3:
        wanted.append("coal")
    best = None
    for ore in wanted:
        spot = nearest(d, ore)
        if spot is not None and (best is None or distance(d.position, spot) < distance(d.position, best)):
            best = spot
    if best is not None:
        return act_on(d, best)
    if not wanted:
        return noop()
    return explore(d)
