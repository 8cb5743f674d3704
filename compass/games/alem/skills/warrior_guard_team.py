# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Warrior protects teammates and crafts weapons
def warrior_guard_team(obs: str) -> int:
    """The warrior's specialisation: double melee damage, and it alone always succeeds at stone/iron swords and
    arrows. Crafts the next sword or arrows when legal, attacks any hostile creature within 6 tiles of itself or of
    a teammate (elites that need several attackers only when a teammate is next to them), and otherwise stays
    between the team and the dark: within 3 tiles of the teammate that is most exposed (lowest health)."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    for item in ("wood_sword", "stone_sword", "iron_sword", "arrow"):
        if legal(craft(item)) and (item != "arrow" or d.inventory["arrows"] < 4):
            return craft(item)
    mates = team_alive(d)
    threats = []
    for m in hostile_mobs(d):
        close_to_team = any(distance((t.x, t.y), (m.x, m.y)) <= 4 for t in mates)
        if m.dist <= 6 or close_to_team:
            if m.coord != 2 or agents_adjacent(d, (m.x, m.y), False) >= 1 or m.dist == 1:
                threats.append(m)
    if threats and d.health > 2:
        m = min(threats, key=lambda m: (m.dist, m.id))
        return act_on(d, (m.x, m.y))
    if threats:
        return flee(d, (threats[0].x, threats[0].y))
    if mates:
        weakest = min(mates, key=lambda t: (t.health, t.id))
        if distance(d.position, (weakest.x, weakest.y)) > 3:
            return path_to(d, (weakest.x, weakest.y)) or noop()
    return noop()
