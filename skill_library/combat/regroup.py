# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: regroup with allies
def regroup(obs: str) -> int:
    """Regroup: move to the centre of visible allies so the team fights together; attack only enemies already in range."""
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    in_range = [e for e in obs_data.enemies if e.can_attack and (e.id + 6) in valid]
    if obs_data.allies:
        n = len(obs_data.allies)
        cx = sum(a.position[0] for a in obs_data.allies) / n
        cy = sum(a.position[1] for a in obs_data.allies) / n
        if (cx * cx + cy * cy) ** 0.5 > 0.2:
            action = find_path(obs_data, cx, cy)
            if action:
                return action
    if in_range:
        return attack(min(in_range, key=lambda e: e.health).id)
    return 1
