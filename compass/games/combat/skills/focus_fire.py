# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: focus fire
# params: type_priority
def focus_fire(obs: str) -> int:
    """Focus fire: attack the enemy in range that allies already target, else the weakest in range.

    Concentrating damage kills enemies one by one and removes their damage quickly. If nothing is
    in range, move towards the weakest known enemy (weakest: lowest health times max health).
    """
    type_priority = {}  # enemy type -> bonus rank among targets in range (higher: shot first)
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    max_health = {"marine": 45.0, "marauder": 125.0, "stalker": 160.0, "zealot": 150.0, "zergling": 35.0,
                  "hydralisk": 80.0, "colossus": 350.0, "medivac": 150.0, "baneling": 30.0}
    focus = {}
    for ally in obs_data.allies:
        if ally.last_action >= 6:
            focus[ally.last_action - 6] = focus.get(ally.last_action - 6, 0) + 1

    def effective_health(e):
        return e.health * max_health.get(e.unit_type.lower(), 100.0)

    in_range = [e for e in obs_data.enemies if e.can_attack and (e.id + 6) in valid]
    if in_range:
        best = max(in_range, key=lambda e: (focus.get(e.id, 0), type_priority.get(e.unit_type.lower(), 0), -effective_health(e), -e.distance))
        return attack(best.id)
    # Relayed reports of units inside my own sight that I no longer see are units that died.
    known = [e for e in obs_data.enemies if e.visible or e.distance >= 0.95 or (e.id + 6) in valid]
    if known:
        weakest = min(known, key=lambda e: (effective_health(e), e.distance, e.id))
        sight = obs_data.own_sight_range
        step = 2.0  # about one step of movement, in world units
        options = []
        for action, ux, uy in ((2, 0, 1), (3, 0, -1), (4, 1, 0), (5, -1, 0)):
            if action in valid:
                px, py = weakest.position[0] - ux * step / sight, weakest.position[1] - uy * step / sight
                options.append((px * px + py * py, action))
        if options:
            return min(options)[1]
    return default_action(obs)
