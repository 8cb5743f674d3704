# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: attack nearest enemy
def attack_nearest(obs: str) -> int:
    """Attack the nearest enemy; if none is in range, walk to the nearest known enemy along an A* path."""
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    in_range = [e for e in obs_data.enemies if e.can_attack and (e.id + 6) in valid]
    if in_range:
        return attack(min(in_range, key=lambda e: (e.distance, e.id)).id)
    # Relayed reports of units inside my own sight that I no longer see are units that died.
    known = [e for e in obs_data.enemies if e.visible or e.distance >= 0.95 or (e.id + 6) in valid]
    if known:
        e = min(known, key=lambda e: (e.distance, e.id))
        action = find_path(obs_data, e.position[0], e.position[1], target_type=e.unit_type)
        if action:
            return action
    return default_action(obs)
