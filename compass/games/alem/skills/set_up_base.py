# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Place a crafting table and a furnace next to each other
def set_up_base(obs: str) -> int:
    """Place a crafting table (2 wood) and a furnace (1 stone) next to it, so one spot next to both serves every
    craft up to iron tools and armour. Places on the faced empty ground tile, stepping sideways first when the
    tile ahead is blocked; gathers the missing wood or stone when short. Placing a table and a furnace are
    achievements for every agent, so each agent should do it once."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    inv = d.inventory
    table = nearest(d, "crafting_table")
    if table is None or distance(d.position, table) > 12 or "PLACE_TABLE" not in d.achievements:
        if inv["wood"] >= 2:
            return face_free_tile(d) or place("table")
        spot = nearest(d, "tree")
        return act_on(d, spot) if spot is not None else explore(d)
    furnace = nearest(d, "furnace")
    if furnace is None or distance(table, furnace) > 2 or "PLACE_FURNACE" not in d.achievements:
        if inv["stone"] >= 1:
            if not near(d, table):
                return path_to(d, table) or noop()
            return face_free_tile(d, table) or place("furnace")
        spot = nearest(d, "stone") if inv["pickaxe"] >= 1 else None
        return act_on(d, spot) if spot is not None else explore(d)
    return noop()
