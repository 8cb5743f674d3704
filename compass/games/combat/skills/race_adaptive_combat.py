# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: defeat all enemy units
# params: focus_bonus, group_radius, hurt_health, backstep_cooldown
def race_adaptive_combat(obs: str) -> int:
    """Destroy the enemy team for every race with coordinated focus fire, kiting and grouping.

    Focus fire on priority targets (score_target): the most enemy damage removed per damage dealt,
    i.e. lowest effective health first, the target allies already attack, no overkill. Kite melee
    units at max range (control_logic): fire when the weapon is ready, step back while it cools
    down, step out of range when hurt. Keep the group together: regroup when far from the team,
    never run into the enemy alone, close in on the enemy nearest the group. Uses enemies relayed
    by allies (attacked by id under extended partial observability) and ignores reports of units
    that died. Medivacs heal the most hurt ally. Never steps into the map edge.
    """
    obs_data = parse_obs(obs)
    valid = obs_data.available_actions
    if 0 in valid:
        return 0
    # max health, damage, weapon cooldown (s), attack range, speed (per s): SMAX's unit values
    stats = {"marine": (45.0, 9.0, 0.61, 5.0, 3.15), "marauder": (125.0, 10.0, 1.07, 6.0, 2.25),
             "stalker": (160.0, 13.0, 1.87, 6.0, 4.13), "zealot": (150.0, 8.0, 0.86, 2.0, 3.15),
             "zergling": (35.0, 5.0, 0.5, 2.0, 4.13), "hydralisk": (80.0, 12.0, 0.59, 5.0, 3.15),
             "colossus": (350.0, 20.0, 1.07, 7.0, 3.15), "medivac": (150.0, 0.0, 1.0, 4.0, 3.5),
             "baneling": (30.0, 16.0, 1.0, 1.0, 3.5)}
    unknown = (100.0, 10.0, 1.0, 5.0, 3.0)
    melee_types = ("zealot", "zergling", "baneling")
    step_time = 0.5  # seconds of game time per environment step
    focus_bonus = 0.6  # score multiplier added per ally already shooting a target
    group_radius = 3.5  # team centre further than this: regroup before anything else
    edge_margin = 4.0  # moves ending closer than this to the map edge are penalised
    hurt_health = 0.6  # below this, a ranged unit steps out of enemy range while reloading
    backstep_cooldown = 0.7  # only when the weapon needs longer than this (s) to be ready
    patrol_after = 40  # steps; nobody in sight after this: sweep the map quarters

    me = obs_data.own_unit_type.lower()
    sight = obs_data.own_sight_range
    shoot = obs_data.own_shoot_range
    mine = stats.get(me, (100.0, 10.0, 1.0, shoot, 3.0))
    own_melee = me in melee_types
    my_step = mine[4] * step_time
    reload = obs_data.own_weapon_cooldown * mine[2]  # seconds until the weapon is ready
    ready = reload <= step_time  # an attack issued now fires within this step
    width, height = obs_data.map_size
    own_x = obs_data.own_position[0] * width
    own_y = obs_data.own_position[1] * height
    last_target = obs_data.last_action - 6 if obs_data.last_action >= 6 else -1
    in_range_ids = [e.id for e in obs_data.enemies if e.can_attack]
    # Extended partial observability (no attack mask): attacks on out-of-range enemies are offered,
    # and an attack action is available exactly while that enemy lives.
    epo = any(a >= 6 and (a - 6) not in in_range_ids for a in valid)
    # Work in world units relative to me: (unit, x, y, distance, stats).
    enemies = []
    for e in obs_data.enemies:
        # A relayed report of a unit inside my own sight that I do not see is a ghost (it died);
        # under EPO I cannot see every enemy near me, but the attack mask says whether it lives.
        ghost = not e.visible and ((e.id + 6) not in valid if epo else e.distance < 0.95)
        if e.health > 0 and not ghost:
            kind = stats.get(e.unit_type.lower(), unknown)
            enemies.append((e, e.position[0] * sight, e.position[1] * sight, e.distance * sight, kind))
    allies = [(a, a.position[0] * sight, a.position[1] * sight, a.distance * sight) for a in obs_data.allies]
    focus = {}  # enemy id -> allies whose last action attacked it
    incoming = {}  # enemy id -> damage those allies deal if they keep shooting it
    for a in obs_data.allies:
        if a.last_action >= 6 and a.unit_type != "medivac":  # a medivac's 6 + j heals ally j
            j = a.last_action - 6
            focus[j] = focus.get(j, 0) + 1
            incoming[j] = incoming.get(j, 0.0) + stats.get(a.unit_type.lower(), unknown)[1]
    # Centre of the team including me: the same point for every member, so they converge.
    team_x = team_y = 0.0
    if allies:
        team_x = sum(a[1] for a in allies) / (len(allies) + 1.0)
        team_y = sum(a[2] for a in allies) / (len(allies) + 1.0)
    spread = (team_x * team_x + team_y * team_y) ** 0.5

    def score_target(unit):
        if unit.health <= 0:
            return -1.0
        kind = stats.get(unit.unit_type.lower(), unknown)
        hp = max(unit.health, 0.02) * kind[0]
        score = (kind[1] / kind[2] + 1.0) / hp  # enemy dps removed per point of damage dealt
        score *= 1.0 + focus_bonus * focus.get(unit.id, 0)
        if incoming.get(unit.id, 0.0) >= hp:
            score *= 0.3  # allies' shots already kill it: do not waste mine
        if unit.id == last_target:
            score *= 1.3  # switching targets wastes time
        gap = unit.distance * sight - shoot
        if gap > 0:
            score /= 1.0 + gap / max(my_step, 0.5)
        if not unit.visible and unit.age > 0:
            score *= 0.8  # stale report: it may have moved
        return score

    def best_move(goal_x, goal_y, avoid, keep):
        """Stop or the one-step move ending nearest ``keep`` from the goal, out of reach of ``avoid``."""
        best, best_cost = None, None
        for action, ux, uy in ((2, 0.0, 1.0), (3, 0.0, -1.0), (4, 1.0, 0.0), (5, -1.0, 0.0), (1, 0.0, 0.0)):
            if action not in valid:
                continue  # the environment hides moves into the map edge
            px, py = ux * my_step, uy * my_step
            cost = 0.0
            for ex, ey, reach in avoid:
                d = ((px - ex) ** 2 + (py - ey) ** 2) ** 0.5
                if d < reach:
                    cost += (reach - d) * 3.0
            if goal_x is not None:
                cost += abs(((px - goal_x) ** 2 + (py - goal_y) ** 2) ** 0.5 - keep)
            wx, wy = own_x + px, own_y + py
            edge = min(wx, wy, width - wx, height - wy)
            if edge < edge_margin:
                cost += (edge_margin - edge) * 2.0  # kiting into a corner ends the kiting
            if best_cost is None or cost < best_cost - 1e-9:
                best, best_cost = action, cost
        return best

    def go_near(x, y, keep=0.0):
        # Greedy steps keep the dominant direction; grid paths flip between equal routes and dither.
        move = best_move(x, y, [], keep)
        return None if move == 1 else move

    def control_logic():
        if me == "medivac":
            hurt = [a for a in obs_data.allies if a.visible and a.health < 0.9 and (a.id + 6) in valid]
            if hurt:
                return heal(min(hurt, key=lambda a: a.health).id)
            return go_near(team_x, team_y) or 1
        if not enemies:
            if epo:
                known = [e.id for e in obs_data.enemies]
                # An ally fights an enemy only it can see (its last action names the target): an
                # out-of-range attack sends no order in SMACv2, so walk to that ally instead.
                fighting = [a for a in allies if a[0].last_action >= 6 and (a[0].last_action - 6) not in known
                            and a[0].unit_type != "medivac"]
                if fighting:
                    a = min(fighting, key=lambda a: (a[3], a[0].id))
                    move = go_near(a[1], a[2])
                    if move:
                        return move
            if spread > group_radius:
                move = go_near(team_x, team_y)
                if move:
                    return move
            if obs_data.step >= patrol_after:
                # Sweep the map quarters in turn: survivors may sit wherever their orders left them.
                k = (obs_data.step // 20) % 4
                tx = (0.25 if k in (0, 3) else 0.75) * width - own_x
                ty = (0.25 if k < 2 else 0.75) * height - own_y
            else:
                tx, ty = width / 2 - own_x, height / 2 - own_y
            if (tx * tx + ty * ty) ** 0.5 > 2.0:
                return go_near(tx, ty) or 1
            return 1
        # Relayed enemies carry no can_attack: judge their range from the reported position.
        attackable = [t for t in enemies if (t[0].id + 6) in valid
                      and (t[0].can_attack or (not t[0].visible and t[3] < shoot - 0.3))]
        threats = [(ex, ey, kind[3] + kind[4] * step_time + 0.8)
                   for e, ex, ey, d, kind in enemies if e.visible or e.age <= 1]
        if attackable:
            target = max(attackable, key=lambda t: score_target(t[0]))
            if ready or own_melee:
                return attack(target[0].id)
            # Reloading: stutter-step away from melee attackers, or out of range when hurt.
            reached = [t for t in threats if (t[0] ** 2 + t[1] ** 2) ** 0.5 < t[2]]
            melee_near = [t for t in reached if t[2] < 5.0]
            hurt = obs_data.own_health < hurt_health and reload > backstep_cooldown and reached
            if melee_near or hurt:
                move = best_move(target[1], target[2], threats, shoot - 0.5)
                if move is not None and move != 1:
                    return move
            return attack(target[0].id)  # hold and fire the moment the weapon is ready
        # Nothing in range. Ranged units close in on the enemy nearest the team centre (allies pick
        # the same one, so forces concentrate); melee units on the one nearest to them.
        if allies and not own_melee:
            target = min(enemies, key=lambda t: (((t[1] - team_x) ** 2 + (t[2] - team_y) ** 2) ** 0.5
                                                 - 0.5 * (t[0].id in focus), t[0].id))
        else:
            target = min(enemies, key=lambda t: (t[3] - 0.5 * (t[0].id in focus), t[0].id))
        e, ex, ey, d, kind = target
        contact = len(focus) > 0 or d < kind[3] + 2 * kind[4] * step_time + 1.0
        if allies and not contact:
            # Do not run in alone: not in the fight yet, so stay level with the team.
            level = [a for a in allies if ((a[1] - ex) ** 2 + (a[2] - ey) ** 2) ** 0.5 < d + 3.0]
            if len(level) < min(2, len(allies)):
                if spread > group_radius + 2.0:
                    return go_near(team_x, team_y) or 1
                return 1  # ahead of the team: wait for it rather than walking back and forth
        return go_near(ex, ey, 0.0 if own_melee else shoot - 0.5) or default_action(obs)

    return control_logic()
