# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Mine stone with a pickaxe
def gather_stone(obs: str) -> int:
    """Mine stone: needs a wood pickaxe (craft one at a table first; returns a move toward the table if none).
    Walks to the nearest visible or remembered stone, faces it and mines it with Do. Stone builds furnaces, stone
    tools, shelters and forges, can be placed (miners) and seals a sleeping tunnel. Explores when no stone is known."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    if d.inventory["pickaxe"] < 1:
        if legal(craft("wood_pickaxe")):
            return craft("wood_pickaxe")
        table = nearest(d, "crafting_table")
        if table is not None and d.inventory["wood"] >= 1:
            return path_to(d, table) or noop()
        return explore(d)
    spot = nearest(d, "stone")
    if spot is not None:
        return act_on(d, spot)
    return explore(d)
