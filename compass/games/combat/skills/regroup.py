# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: regroup with allies
# params: group_radius
def regroup(obs: str) -> int:
    """Regroup: move to the centre of visible allies so the team fights together; attack only enemies already in range.

    The centre includes the unit itself, so every member heads for the same point and the group
    converges instead of chasing each other.
    """
    group_radius = 2.0  # world units from the team centre beyond which the unit moves back in
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    in_range = [e for e in obs_data.enemies if e.can_attack and (e.id + 6) in valid]
    allies = [a for a in obs_data.allies if a.visible]
    if allies:
        n = len(allies) + 1
        cx = sum(a.position[0] for a in allies) / n
        cy = sum(a.position[1] for a in allies) / n
        if (cx * cx + cy * cy) ** 0.5 * obs_data.own_sight_range > group_radius:
            # the move that gets closest to the centre (one step is about two world units)
            step = 2.0 / obs_data.own_sight_range
            options = [((cx - ux * step) ** 2 + (cy - uy * step) ** 2, a)
                       for a, ux, uy in ((2, 0, 1), (3, 0, -1), (4, 1, 0), (5, -1, 0)) if a in valid]
            if options and min(options)[0] < cx * cx + cy * cy:
                return min(options)[1]
    if in_range:
        return attack(min(in_range, key=lambda e: (e.health, e.id)).id)
    return 1
