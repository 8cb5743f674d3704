# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: kite melee units
# params: kite_distance
def kite_melee(obs: str) -> int:
    """Kite melee enemies (zealots, zerglings): shoot when the weapon is ready, step back at max range while it cools down.

    For ranged units (stalker, marine, marauder, hydralisk) facing melee attackers. The weapon
    cooldown is converted to seconds with the unit's reload time, so a shot that is ready within
    the next step is never skipped; the step back avoids the map edge and prefers the direction
    away from the closest melee enemies.
    """
    kite_distance = 4.5  # world units: a melee enemy closer than this makes me step back while reloading
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    reload_time = {"marine": 0.61, "marauder": 1.07, "stalker": 1.87, "hydralisk": 0.59, "colossus": 1.07}
    sight = obs_data.own_sight_range
    shoot = obs_data.own_shoot_range
    seconds_left = obs_data.own_weapon_cooldown * reload_time.get(obs_data.own_unit_type.lower(), 1.0)
    melee = [e for e in obs_data.enemies if e.visible and e.unit_type in ("zealot", "zergling", "baneling")]
    # a melee unit (range ~2) covers ~1.6 more per step: closer than this it can hit me next step
    close = [e for e in melee if e.distance * sight < kite_distance]
    if close and seconds_left > 0.5:
        width, height = obs_data.map_size
        own_x, own_y = obs_data.own_position[0] * width, obs_data.own_position[1] * height
        best, best_score = None, None
        for action, ux, uy in ((2, 0, 1), (3, 0, -1), (4, 1, 0), (5, -1, 0)):
            if action not in valid:
                continue
            # distance to the nearest melee enemy after a 2-unit step, minus a wall penalty
            gap = min(((e.position[0] * sight - 2 * ux) ** 2 + (e.position[1] * sight - 2 * uy) ** 2) ** 0.5
                      for e in close)
            edge = min(own_x + 2 * ux, own_y + 2 * uy, width - own_x - 2 * ux, height - own_y - 2 * uy)
            score = min(gap, shoot) - max(0.0, 3.0 - edge) * 2.0
            if best_score is None or score > best_score:
                best, best_score = action, score
        if best is not None:
            return best
    in_range = [e for e in obs_data.enemies if e.can_attack and (e.id + 6) in valid]
    if in_range:
        return attack(min(in_range, key=lambda e: (e.health, e.distance, e.id)).id)
    return default_action(obs)
