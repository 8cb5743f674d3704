# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Collect wood from the nearest tree
def gather_wood(obs: str) -> int:
    """Collect wood: walk to the nearest visible or remembered tree, face it and hit it with Do until it yields
    wood (a chopped tree turns to grass). Avoids trees that need several agents at once (hard coordination) unless
    teammates stand next to them, and explores to find trees when none are known. Any role can do it; the first
    resource of the tool ladder (table, pickaxes, swords, arrows, torches, shelters all need wood)."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    hard = set((s.x, s.y) for s in d.coord_sites if s.kind == "sync" and not s.soft
               and agents_adjacent(d, (s.x, s.y)) + 1 < s.required)
    trees = [b for b in d.blocks if b.name == "tree" and (b.x, b.y) not in hard]
    if trees:
        t = min(trees, key=lambda b: (b.dist, b.y, b.x))
        return act_on(d, (t.x, t.y))
    spot = nearest(d, "tree")
    if spot is not None:
        return act_on(d, spot)
    return explore(d)
