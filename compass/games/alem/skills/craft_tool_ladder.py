# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Craft the next pickaxe, sword or armour at the table and furnace
def craft_tool_ladder(obs: str) -> int:
    """Climb the tool ladder: wood pickaxe and sword (1 wood), stone pickaxe and sword (1 wood + 1 stone), iron
    pickaxe and sword (1 wood, stone, iron, coal; table and furnace), iron armour (3 iron + 3 coal), plus arrows
    (warrior) and torches (miner). Crafts the first legal item; otherwise walks next to the table (and furnace for
    iron items) when holding the materials. Pickaxes are the miner's speciality and stone/iron swords the warrior's:
    other roles retry until the roll succeeds (failed attempts cost nothing)."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    inv = d.inventory
    order = []
    if inv["pickaxe"] < 1:
        order.append("wood_pickaxe")
    if inv["sword"] < 1:
        order.append("wood_sword")
    if inv["pickaxe"] < 2:
        order.append("stone_pickaxe")
    if inv["sword"] < 2:
        order.append("stone_sword")
    if inv["pickaxe"] < 3:
        order.append("iron_pickaxe")
    if inv["sword"] < 3:
        order.append("iron_sword")
    order.append("iron_armour")
    if d.role == "warrior" or "MAKE_ARROW" not in d.achievements:
        order.append("arrow")
    if d.role == "miner" or "MAKE_TORCH" not in d.achievements:
        order.append("torch")
    for item in order:
        if legal(craft(item)):
            return craft(item)
    table = nearest(d, "crafting_table")
    furnace = nearest(d, "furnace")
    iron_ready = inv["iron"] >= 1 and inv["coal"] >= 1 and inv["stone"] >= 1 and inv["wood"] >= 1
    if iron_ready and furnace is not None and not near(d, furnace):
        return path_to(d, furnace) or noop()
    if table is not None and not near(d, table) and inv["wood"] >= 1:
        return path_to(d, table) or noop()
    return noop()
