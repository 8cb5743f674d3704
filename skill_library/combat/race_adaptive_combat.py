# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: defeat all enemy units
def race_adaptive_combat(obs: str) -> int:
    """Defeat all enemy units with coordinated focus fire, kiting and grouping, for every race.

    Stalker/Zealot/Marine/Marauder/Zergling/Hydralisk (and Colossus/Medivac/Baneling on SMACv2).
    Target scoring (score_target): unit-type threat priority, matchup multiplier, low health first,
    closer first, bonus for targets allies already attack (focus fire) and for the current target.
    Control (control_logic): ranged units kite melee enemies at max shoot range while the weapon
    cools down and fire when it is ready; melee units charge the best target; with no enemy in
    range the unit closes in on the best known target (including enemies relayed by allies) along
    an A* path, regrouping first when it is far from the team. Medivacs heal the weakest ally.
    """
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    melee_types = ["zealot", "zergling", "baneling"]
    me = obs_data.own_unit_type.lower()
    own_melee = me in melee_types
    shoot = obs_data.own_shoot_range / obs_data.own_sight_range
    priorities = {"colossus": 9.0, "baneling": 8.0, "zealot": 6.0, "stalker": 7.0, "hydralisk": 7.5,
                  "marauder": 6.5, "marine": 7.0, "zergling": 5.0, "medivac": 6.0}
    counters = {"stalker": {"zealot": 1.3, "stalker": 1.0}, "zealot": {"stalker": 1.2, "zealot": 1.0},
                "marine": {"marine": 1.2, "marauder": 1.0}, "marauder": {"marauder": 1.2, "marine": 1.0},
                "hydralisk": {"zergling": 1.3, "hydralisk": 1.1}, "zergling": {"hydralisk": 1.3}}
    focus = {}
    for ally in obs_data.allies:
        if ally.last_action >= 6:
            focus[ally.last_action - 6] = focus.get(ally.last_action - 6, 0) + 1

    def score_target(unit):
        if unit.health <= 0:
            return -1.0
        kind = unit.unit_type.lower()
        score = priorities.get(kind, 5.0) * counters.get(me, {}).get(kind, 1.0)
        score *= 2.2 - unit.health  # finish weak units: fewer enemy guns sooner
        score *= max(0.4, 1.3 - unit.distance)
        score *= 1.25 ** focus.get(unit.id, 0)
        if obs_data.last_action == unit.id + 6:
            score *= 1.3  # keep shooting the same target; switching wastes time
        if not unit.visible:
            score *= 0.8
        return score

    def step_away(cx, cy):
        best, best_dot = None, 0.0
        for action, (ux, uy) in ((2, (0, 1)), (3, (0, -1)), (4, (1, 0)), (5, (-1, 0))):
            if action in valid:
                dot = ux * cx + uy * cy
                if dot < best_dot:
                    best, best_dot = action, dot
        return best

    def team_center():
        if not obs_data.allies:
            return None
        n = len(obs_data.allies)
        return (sum(a.position[0] for a in obs_data.allies) / n, sum(a.position[1] for a in obs_data.allies) / n)

    def control_logic():
        enemies = [e for e in obs_data.enemies if e.health > 0]
        visible = [e for e in enemies if e.visible]
        if me == "medivac":
            hurt = [a for a in obs_data.allies if a.visible and a.health < 0.9 and (a.id + 6) in valid]
            if hurt:
                return heal(min(hurt, key=lambda a: a.health).id)
            center = team_center()
            if center:
                return find_path(obs_data, center[0], center[1]) or 1
            return 1
        attackable = [e for e in visible if e.can_attack and (e.id + 6) in valid]
        if not own_melee and visible:
            threats = [e for e in visible if e.unit_type.lower() in melee_types and e.distance < shoot * 0.75]
            if threats and obs_data.own_weapon_cooldown > 0.15:
                cx = sum(e.position[0] for e in threats) / len(threats)
                cy = sum(e.position[1] for e in threats) / len(threats)
                away = step_away(cx, cy)
                if away is not None:
                    return away
        if attackable:
            return attack(max(attackable, key=score_target).id)
        center = team_center()
        if enemies:
            target = max(enemies, key=score_target)
            # Do not run in alone: regroup when the team is far and the enemy is not yet close.
            if center and (center[0] ** 2 + center[1] ** 2) ** 0.5 > 0.6 and target.distance > 0.8:
                action = find_path(obs_data, center[0], center[1])
                if action:
                    return action
            if (target.id + 6) in valid and not target.visible:
                return attack(target.id)  # EPO, no action mask: the attack order walks to the target
            action = find_path(obs_data, target.position[0], target.position[1], target_type=target.unit_type)
            if action:
                return action
            return default_action(obs)
        if center and (center[0] ** 2 + center[1] ** 2) ** 0.5 > 0.25:
            action = find_path(obs_data, center[0], center[1])
            if action:
                return action
        # Nobody in sight: sweep towards the middle of the map, where fights happen.
        w, h = obs_data.map_size
        dx = (0.5 - obs_data.own_position[0]) * w / obs_data.own_sight_range
        dy = (0.5 - obs_data.own_position[1]) * h / obs_data.own_sight_range
        return find_path(obs_data, dx, dy) or 1

    return control_logic()
