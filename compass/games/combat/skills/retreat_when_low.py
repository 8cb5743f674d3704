# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: retreat when low health
# params: retreat_health
def retreat_when_low(obs: str) -> int:
    """Retreat when health is low: a unit below 30% health backs away from enemies towards its allies, otherwise attacks the weakest enemy in range."""
    retreat_health = 0.3  # fraction of max health below which the unit backs away
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    enemies = [e for e in obs_data.enemies if e.visible]
    if obs_data.own_health < retreat_health and enemies:
        cx = sum(e.position[0] for e in enemies) / len(enemies)
        cy = sum(e.position[1] for e in enemies) / len(enemies)
        if obs_data.allies:
            ax = sum(a.position[0] for a in obs_data.allies) / len(obs_data.allies)
            ay = sum(a.position[1] for a in obs_data.allies) / len(obs_data.allies)
            tx, ty = ax - cx, ay - cy
        else:
            tx, ty = -cx, -cy
        # step along the retreat direction, away from the enemies' centre, never into the map edge
        width, height = obs_data.map_size
        own_x, own_y = obs_data.own_position[0] * width, obs_data.own_position[1] * height
        best, best_score = None, None
        for action, ux, uy in ((2, 0, 1), (3, 0, -1), (4, 1, 0), (5, -1, 0)):
            if action not in valid:
                continue
            edge = min(own_x + 2 * ux, own_y + 2 * uy, width - own_x - 2 * ux, height - own_y - 2 * uy)
            score = ux * tx + uy * ty - (ux * cx + uy * cy) - max(0.0, 3.0 - edge)
            if best_score is None or score > best_score:
                best, best_score = action, score
        if best is not None and best_score > 0:
            return best
    in_range = [e for e in enemies if e.can_attack and (e.id + 6) in valid]
    if in_range:
        return attack(min(in_range, key=lambda e: (e.health, e.id)).id)
    return default_action(obs)
