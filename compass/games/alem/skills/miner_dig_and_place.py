# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Miner crafts pickaxes, mines ore and places stone
def miner_dig_and_place(obs: str) -> int:
    """The miner's specialisation: it alone always succeeds at crafting pickaxes and torches and placing stone.
    Crafts the next pickaxe as soon as it is legal, mines the best ore its pickaxe allows (diamond, iron, coal,
    stone, nearest first), stockpiles stone and wood for the team's shelter (10 wood + 5 stone) and requests,
    places stone and torches once for the achievements, and explores for ore when none is known."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    inv = d.inventory
    for item in ("wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "torch"):
        if legal(craft(item)) and (item != "torch" or inv["torches"] < 2):
            return craft(item)
    if "PLACE_STONE" not in d.achievements and inv["stone"] >= 1 and (facing_free_ground(d)
                                                                        or d.facing_block == "water"):
        return place("stone")
    if "PLACE_TORCH" not in d.achievements and inv["torches"] >= 1 and facing_free_ground(d):
        return place("torch")
    goals = []
    if inv["pickaxe"] >= 3:
        goals.append("diamond")
    if inv["pickaxe"] >= 2 and inv["iron"] < 6:
        goals.append("iron")
    if inv["pickaxe"] >= 1 and inv["coal"] < 6:
        goals.append("coal")
    if inv["pickaxe"] >= 1 and inv["stone"] < 12:
        goals.append("stone")
    if inv["wood"] < 10:
        goals.append("tree")
    for block in goals:
        spot = nearest(d, block)
        if spot is not None and distance(d.position, spot) <= 12:
            return act_on(d, spot)
    return explore(d)
