# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Get away from hostile creatures toward the team
def avoid_mobs(obs: str) -> int:
    """Retreat from hostile creatures: when one is within 4 tiles, step to the free tile that increases the
    distance to the nearest one, preferring steps toward the warrior or the team; hits back only when cornered
    next to one. For low-health agents, foragers and miners without swords. Noop when no threat is near."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    threats = hostile_mobs(d, 4)
    if not threats:
        return noop()
    m = threats[0]
    step = flee(d, (m.x, m.y))
    if step == noop() and m.dist == 1:
        return act_on(d, (m.x, m.y))
    guards = [t for t in team_alive(d) if t.role == "warrior"] or team_alive(d)
    if guards and step == noop():
        g = min(guards, key=lambda t: t.dist)
        return path_to(d, (g.x, g.y)) or noop()
    return step
