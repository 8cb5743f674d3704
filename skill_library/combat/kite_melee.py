# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: kite melee units
def kite_melee(obs: str) -> int:
    """Kite melee enemies (zealots, zerglings): shoot when the weapon is ready, step back at max range while it cools down.

    For ranged units (stalker, marine, marauder, hydralisk) facing melee attackers.
    """
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    melee = [e for e in obs_data.enemies if e.visible and e.unit_type in ("zealot", "zergling", "baneling")]
    shoot = obs_data.own_shoot_range / obs_data.own_sight_range
    close = [e for e in melee if e.distance < shoot * 0.8]
    if close and obs_data.own_weapon_cooldown > 0.1:
        cx = sum(e.position[0] for e in close) / len(close)
        cy = sum(e.position[1] for e in close) / len(close)
        moves = [(2, 0, 1), (3, 0, -1), (4, 1, 0), (5, -1, 0)]
        options = [(ux * cx + uy * cy, a) for a, ux, uy in moves if a in valid]
        if options:
            dot, action = min(options)
            if dot < 0:
                return action
    in_range = [e for e in obs_data.enemies if e.can_attack and (e.id + 6) in valid]
    if in_range:
        return attack(min(in_range, key=lambda e: (e.health, e.distance)).id)
    return default_action(obs)
