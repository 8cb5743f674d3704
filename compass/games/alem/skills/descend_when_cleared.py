# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Take the team down the ladder once the level is cleared
def descend_when_cleared(obs: str) -> int:
    """Go down to the next level: when the level is cleared (the overworld starts cleared; deeper levels need 8
    kills) and a 'ladder down' is known, walk onto it and use Descend; every teammate is teleported along and each
    agent unlocks the Enter achievement of the new level (Gnomish Mines is worth 3). Explores to find the ladder,
    fights creatures in the way. Noop on the last level or the one-level overworld variant."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    if d.level + 1 >= d.num_levels:
        return noop()
    adjacent_threats = [m for m in hostile_mobs(d, 1)]
    if adjacent_threats:
        m = adjacent_threats[0]
        return act_on(d, (m.x, m.y))
    if not d.level_cleared:
        threats = hostile_mobs(d, 8)
        if threats:
            return act_on(d, (threats[0].x, threats[0].y))
        return explore(d)
    if legal(descend()):
        return descend()
    ladder = nearest(d, "ladder down")
    if ladder is None:
        return explore(d)
    return path_to(d, ladder, adjacent=False) or noop()
