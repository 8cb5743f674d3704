# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Kill the nearest hostile creature
def fight_nearby_mobs(obs: str) -> int:
    """Attack the nearest hostile creature (zombie, skeleton...) within 6 tiles: walk next to it, face it, hit it
    with Do. Warriors deal double melee damage and should lead; a sword helps everyone. Elite creatures marked
    'must fight alongside teammates' take no damage from a lone attacker, so it only engages them with a teammate
    next to them. Steps away when health drops to 2 or less; Noop when nothing hostile is near."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    threats = hostile_mobs(d, 6)
    if not threats:
        return noop()
    m = threats[0]
    if d.health <= 2:
        return flee(d, (m.x, m.y))
    if m.coord == 2 and agents_adjacent(d, (m.x, m.y), False) + 1 < max(2, m.agents_required):
        helpers = [t for t in team_alive(d) if distance((t.x, t.y), (m.x, m.y)) <= 3]
        if not helpers:
            return flee(d, (m.x, m.y)) if m.dist <= 2 else noop()
    return act_on(d, (m.x, m.y))
