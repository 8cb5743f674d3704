# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: focus fire
def focus_fire(obs: str) -> int:
    """Focus fire: attack the enemy in range that allies already target, else the weakest in range.

    Concentrating damage kills enemies one by one and removes their damage quickly. If nothing is
    in range, move towards the weakest known enemy.
    """
    obs_data = parse_obs(obs)
    if 0 in obs_data.available_actions:
        return 0
    focus = {}
    for ally in obs_data.allies:
        if ally.last_action >= 6:
            focus[ally.last_action - 6] = focus.get(ally.last_action - 6, 0) + 1
    in_range = [e for e in obs_data.enemies if e.can_attack and (e.id + 6) in obs_data.available_actions]
    if in_range:
        best = max(in_range, key=lambda e: (focus.get(e.id, 0), -e.health, -e.distance))
        return attack(best.id)
    if obs_data.enemies:
        weakest = min(obs_data.enemies, key=lambda e: (e.health, e.distance))
        action = find_path(obs_data, weakest.position[0], weakest.position[1], target_type=weakest.unit_type)
        if action:
            return action
    return default_action(obs)
