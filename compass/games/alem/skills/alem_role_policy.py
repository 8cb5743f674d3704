# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# params: dusk, dawn, threat_radius, elite_flee_health, cornered_health, flee_health, archer_health, engage_health, food_request, drink_request, drink_urgent, thirst, share_keep, fed_level, descend_from, first_visit, seek_ladder_from, revive_reach, refuel_at, feed_keep, hunt_reach, hunt_health, elite_keep, wake_radius, quick_kill
# subtask: Play ALEM as any role: survive, then coordinate with the team, then climb the tool ladder
# tuned: alem:hard seeds 0,1,2,3 x 2000 steps: total_pct 5.563, return 20.017 -> total_pct 6.383, return 23.250
def alem_role_policy(obs: str) -> int:
    """Generalist team policy for any role (warrior, forager, miner) that plays the whole game to collect the
    team's achievements: survive, coordinate with teammates, climb the tool ladder, descend.

    Priority order survive > coordinate > progress. Survive: hit creatures that are adjacent (and one it
    kills in a few hits whatever its health), keep away from a hard elite it cannot hurt alone, flee when
    nearly dead, drink water when thirsty, eat ripe plants or cows when hungry (non-foragers also request
    food), from dusk to dawn seal itself in a stone tunnel chosen around the base and sleep there
    (bunker_step), never fall asleep in the open with a melee creature near (meet it awake), gather only
    from tiles one agent can mine. Coordinate: finish a handover a teammate started, give teammates the
    food, drink or material they request, by day work a 3-agent sync site all three see with the whole
    team (each on its own tile, Do together; then the 2-agent ones), and during the team's coordination
    window converge with the team on a shared sync/handover site or construction site, wait there until
    enough teammates stand next to it, then act together on the same step; kill an elite creature or a
    large cow with the agents it needs, all hitting on one step (Hunting together). Progress: wood, table,
    wood pickaxe and sword, stone, furnace, stone tools, coal and iron, iron tools and armour, arrows
    (warrior), torches (miner), saplings (forager); explore when nothing is known; descend (and stay
    below) by day when the whole team is near the overworld's ladder (from the second day), by day once
    armed, healthy and fed (exploring for the ladder when none is known), once the overworld basics are
    done (from step 1200), or late in the episode from a cleared level. Below the overworld: shoot
    creatures in line with a found bow, drink a first potion, open chests (the warrior's first chest on
    level 1 holds the bow), the forager eats a snail, and once the level is cleared the team goes down
    again at once (or climbs back up for food when short with no ladder down known); parched or starving
    below, it climbs back to the overworld's water and food. A downed teammate
    within reach is revived (walk to its body, face it, Do); back with the food and drink it died with, at
    1 or less it eats, drinks or asks anyone first, and a teammate asking at 1 health is fed from a
    smaller buffer. The warrior hunts nearby monsters, the forager keeps the team fed, the miner mines and
    places stone."""
    dusk = 120  # step of the 300-step day from which the agent seals itself in for the night...
    dawn = 265  # ... until this step (or while the light is below 0.35)
    threat_radius = 6  # hostile creatures within this many tiles are threats
    elite_flee_health = 5  # flee an adjacent elite fought without enough teammates at this health or below
    cornered_health = 2  # a non-warrior flees an adjacent creature at this health or below
    flee_health = 3  # flee the nearest threat (not adjacent) at this health or below
    archer_health = 5  # charge skeletons within 4 tiles from this health up
    engage_health = 6  # the fed warrior attacks threats from this health up
    food_request = 6  # a non-forager asks the forager for food at this food or below...
    drink_request = 3  # ... and for drink at this drink or below
    drink_urgent = 2  # drink at the nearest known water (or ask for drink) at this drink or below
    thirst = 4  # walk to water (or explore for it) at this drink or below
    share_keep = 7  # give requested food or drink only while holding this much (the forager one more)
    fed_level = 3  # seal in for the night only with food and drink above this
    descend_from = 1200  # step from which a team with a pickaxe descends from the overworld
    first_visit = 300  # no visit below before this step (toolless teams that went on day 1 died to orcs)
    seek_ladder_from = 900  # from this step an armed agent with no ladder down known explores for one
    revive_reach = 30  # walk this far (Manhattan) to revive a downed teammate
    refuel_at = 1  # at this food or drink or below (a revived agent), eat/drink near or ask anyone first
    feed_keep = 5  # give a weak (revived) asking teammate food or drink while holding more than this
    hunt_reach = 7  # hunt an elite or large cow together when the agents it needs are within this many tiles...
    hunt_health = 5  # ... and have this much health or more (this agent too)
    elite_keep = 3  # step away from a hard elite it cannot hurt alone while it is this close
    wake_radius = 8  # at energy 0, no sleep in the open with a melee creature this close: meet it awake
    quick_kill = 3  # hit back an adjacent creature it kills in this many hits, whatever its health
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    inv = d.inventory
    role = d.role
    have = d.achievements
    me = d.position
    mates = team_alive(d)
    forager_alive = any(t.role == "forager" for t in mates)

    # Below the overworld, I (issue 23 item 2): the bow before any other fight (an arrow does 5 damage).
    if d.level >= 1:
        step = bow_step(d)
        if step is not None:
            return step
        # A cleared level: down at once to the next (its ladder known), or up for food when short (level 1 has
        # none but snails; a team that cleared it late starved there). Not with a creature adjacent: hit it.
        if not hostile_mobs(d, 1):
            step = cleared_level_step(d)
            if step is not None:
                return step

    # Hunting together (docs/alem.md "Hunting together"): an elite creature or large cow with the agents it
    # needs near pays COORD_ELITE_*_KILL (8) or COORD_LARGE_PASSIVE_KILL (3) only to those whose Do kills it
    # together: all step next to it, face it, Do on one step. By day (or below), healthy and not parched,
    # and not with another creature adjacent (that one is hit first, below). Kept on Hard 100,288-100,479
    # (192 seeds): +0.54 team Total %, paired 90 % CI [+0.05, +1.04]; large cows killed together in 88 episodes.
    if d.health >= hunt_health and d.drink > drink_urgent and d.food > 1 \
            and (d.level >= 1 or not (shelter_time(d, dusk, dawn) or d.light < 0.35)):
        prey = hunt_target(d, reach=hunt_reach, min_health=hunt_health)
        if prey is not None and not any(m.id != prey.id for m in hostile_mobs(d, 1)):
            step = hunt_step(d, reach=hunt_reach, min_health=hunt_health)
            if step is not None:
                return step

    # 1. Creatures: hit what is adjacent, flee when nearly dead, the warrior hunts.
    threats = hostile_mobs(d, threat_radius)
    # Nights, seventh pass (docs/alem.md), I: a hard elite takes no damage from one agent; keep out of its
    # reach unless teammates stand by it to hit together; fight the others as before. I-III and the 2-agent
    # opening below were kept together ("Judging a variant, eighth round"): +0.65 team Total %, paired
    # 90 % CI [+0.22, +1.08] on Hard 100,720-100,959 (240 seeds), median survival 654.5 -> 774.5 steps.
    foes = untouchable(d, threat_radius)
    if foes and not enclosed(d):
        step = keep_away_step(d, (foes[0].x, foes[0].y), keep=elite_keep)
        if step is not None:
            return step
    threats = [m for m in threats if m not in foes]
    # II: a creature that has just hit waits 5 steps before its next hit, so one this agent kills in
    # `quick_kill` hits is fought, not fled.
    close = [m for m in threats if m.dist == 1 and m.kind == "melee"]
    if close and (strikes_to_kill(d, close[0]) or quick_kill + 1) <= quick_kill:
        return act_on(d, (close[0].x, close[0].y))
    for m in threats:
        if m.dist == 1:
            alone_on_elite = m.coord == 2 and agents_adjacent(d, (m.x, m.y)) < max(2, m.agents_required)
            if (alone_on_elite and d.health <= elite_flee_health) or (d.health <= cornered_health and role != "warrior"):
                return flee(d, (m.x, m.y))
            return act_on(d, (m.x, m.y))
    # Ask the forager early: a request is one action, and Give works at any distance.
    if role != "forager" and forager_alive and d.my_request is None:
        if d.food <= food_request:
            return request("food")
        if d.drink <= drink_request:
            return request("drink")
    water = nearest(d, "water")
    if d.drink <= drink_urgent and water is not None:
        return act_on(d, water)
    # Water and food below (docs/alem.md "Judging a variant, eleventh round"): level 1 has no water but
    # fountains and no food but the forager's snails; parched or starving, the team goes back up by the
    # known ladder (the forager drinks at a known fountain instead), and not back down in that state.
    short = short_of_supplies(d)
    step = resupply_step(d)
    if step is not None:
        return step
    # Feeding the revived (docs/alem.md "Feeding the revived"): food and drink before sleep for an agent
    # back from the dead with what it died with (0 food after starving): eat or drink near, else ask anyone.
    # Kept on 192 fresh Hard tuning seeds (200-391): +0.49 team Total %, paired 90 % CI [+0.14, +0.84].
    step = refuel_step(d, critical=refuel_at)
    if step is not None:
        return step
    # III: no sleep at energy 0 in the open while a melee creature is within `wake_radius` (a sleeper
    # takes 3.5x damage): meet it awake, or keep away from one it cannot hurt.
    if d.energy <= 0 and not enclosed(d):
        coming = [m for m in hostile_mobs(d, wake_radius) if m.kind == "melee"]
        if coming:
            m = coming[0]
            if can_hurt(d, m, reach=2):
                return act_on(d, (m.x, m.y))
            step = keep_away_step(d, (m.x, m.y), keep=wake_radius)
            if step is not None:
                return step
    if d.energy <= 0 and not hostile_mobs(d, 3):
        return sleep()
    # 2. Share: give teammates what they ask for when we can spare it (Give works at any distance).
    # Feeding the revived (docs/alem.md "Feeding the revived"): a weak teammate asking gets food or
    # drink from a smaller buffer than the usual sharing keeps.
    step = feed_step(d, keep=feed_keep, weak=1.0)
    if step is not None:
        return step
    for t in mates:
        if t.request and legal(give(t.id)):
            # Keep a margin: a forager that shared down to 4 food starved in its sleep (seen in an
            # earlier session's runs); it refills from cows (6 food, gated to its role) while hunting.
            if t.request == "food" and d.food >= share_keep + (role == "forager"):
                return give(t.id)
            if t.request == "drink" and d.drink >= share_keep + (role == "forager"):
                return give(t.id)
            if t.request not in ("food", "drink") and inv.get(t.request, 0) >= 2:
                return give(t.id)

    # The opening (docs/alem.md "The opening: the 3-agent sites at the start"): when all three see a
    # 3-agent sync site by day (the team spawns together with some in view), they walk to it, each to
    # its own tile, face it and Do together. Kept: +1.38 team Total % [+0.58, +2.18] on Hard 488-583.
    if d.level == 0 and not (shelter_time(d, dusk, dawn) or d.light < 0.35):
        step = opening_step(d)
        if step is not None:
            return step
        # The opening, second pass (docs/alem.md), vA: the 2-agent sync sites too (every agent facing one
        # on the step it needs two unlocks COORD_2_AGENTS_*).
        step = opening_step(d, (2, 3))
        if step is not None:
            return step

    if threats:
        m = threats[0]
        if d.health <= flee_health:
            return flee(d, (m.x, m.y))
        # Skeletons shoot from afar but have 3 health: charge the close ones instead of taking arrows.
        archers = [x for x in threats if x.kind == "ranged" and x.dist <= 4 and x.coord != 2]
        if archers and d.health >= archer_health:
            return act_on(d, (archers[0].x, archers[0].y))
        if (role == "warrior" and d.health >= engage_health and d.food > 2) or (m.dist <= 2 and inv["sword"] >= 1):
            if m.coord != 2 or len(mates) > 0:
                return act_on(d, (m.x, m.y))

    # Revive (issue 23 item 2): a Do facing a downed teammate's body brings it back at 1 health
    # (alem's interplayer_interaction). Only once nothing is adjacent and no flight is due (above):
    # reviving ahead of those (safe_radius 3) scored 12.63 vs 12.50 on Hard 0-23 but with 9 episodes
    # down, not 7 (docs/alem.md "Reviving teammates").
    step = revive_step(d, reach=revive_reach)
    if step is not None:
        return step

    # 3. Survival.
    if water is not None and (d.drink <= thirst or (d.drink < d.max_food - 1 and distance(me, water) == 1)):
        if role != "forager" and forager_alive and d.drink <= drink_urgent and d.my_request is None:
            return request("drink")
        return act_on(d, water)
    if d.drink <= thirst and water is None:
        return explore(d)
    # Nights are spent sealed in a stone tunnel, asleep (zombies come out in the dark; sleepers take
    # 2.5x damage). Daytime naps only when exhausted.
    fed = d.food > fed_level and d.drink > fed_level  # starving or thirsty sleepers lose health all night
    night = shelter_time(d, dusk, dawn) or d.light < 0.35
    if enclosed(d):
        if (night or d.energy <= 3) and (fed or d.energy <= 1):
            return sleep() if d.energy < d.max_energy else noop()
        out = dig_out(d)
        if out is not None:
            return out
    if (night and fed) or d.energy <= 2:
        # The shelter is chosen around the base, so it does not change while the agent walks to it.
        step = bunker_step(d, base_anchor(d))
        if step is not None:
            return step
        if d.energy <= 1 and not hostile_mobs(d, 8):
            return sleep()

    # Food: ripe plants feed every role; cows feed the forager (others eat one only 1 time in 10 on
    # Hard), so the forager hunts for the team whenever it is short or a teammate asks.
    ripe = nearest(d, "ripe_plant")
    if ripe is not None and d.food <= d.max_food - 4 and distance(me, ripe) <= (30 if d.food <= 4 else 12):
        return act_on(d, ripe)
    team_hungry = any(t.request == "food" for t in mates)
    if role == "forager" and (d.food < d.max_food - 2 or team_hungry):
        cows = [c for c in passive_mobs(d, 12) if c.coord != 2]
        if cows:
            return act_on(d, (cows[0].x, cows[0].y))
        if d.food <= 4 or team_hungry:
            return explore(d, near="grass")
    elif d.food <= 4:
        cows = [c for c in passive_mobs(d, 8) if c.coord != 2]
        if cows:
            return act_on(d, (cows[0].x, cows[0].y))
        if d.food <= 2 and not forager_alive:
            return explore(d, near="grass")

    # Below the overworld, II: a first potion, arrows for a found bow, a snail for the forager, chests
    # (the warrior's first on level 1 holds the bow), then the next level down once eight monsters died.
    if d.level >= 1:
        step = below_step(d)
        if step is not None:
            return step

    # 4. By day, with the whole team near the overworld's ladder down, one agent descends (it takes
    # everyone: ENTER_DUNGEON, 3 points each, and the next level's creatures); the team stays below.
    visit = visit_next_level_step(d, from_step=first_visit)
    if visit is not None:
        return visit

    # Down armed (issue 23 item 2): by day, once this agent holds a pickaxe and a sword and is healthy
    # and fed, it takes the team down itself (Descend moves everyone, so nobody waits by the ladder),
    # or explores for the ladder down when none is known.
    if armed_for_descent(d, from_step=first_visit):
        # Down armed, third pass (docs/alem.md "Down armed, third pass"): the walk to a known ladder digs
        # through the stone round it where that is shorter than the way round (ladders lie inside mountains).
        step = descent_step(d, from_step=first_visit, min_energy=0, seek_from=d.max_steps, dig=True)
        if step is not None:
            return step
        if d.step >= seek_ladder_from and not threats and nearest(d, "ladder down") is None:
            return explore(d)

    # Coordinate: finish teammates' handovers; converge on a shared site in the coordination window.
    for h in d.handovers:
        if h.initiator != d.agent_id and distance(me, (h.x, h.y)) <= h.remaining + 1:
            act = do() if h.building == "mining" else build(h.building)
            if h.building == "mining" or legal(act):
                return act_on(d, (h.x, h.y), act)
    if d.step % 200 < 130:
        site = coordination_target(d)
        if site is not None:
            target = (site.x, site.y)
            need = site.required if site.kind == "sync" else 2
            near_mates = [t for t in mates if distance((t.x, t.y), target) <= 7]
            if len(near_mates) + 1 >= need:
                act = do()
                if site.construction:
                    act = None
                    for kind in ("shelter", "beacon", "forge"):
                        if legal(build(kind)):
                            act = build(kind)
                            break
                if act is not None:
                    step = path_to(d, target)
                    if step is not None and distance(me, target) > 1:
                        return step
                    if step is not None:
                        return step  # adjacent: turn to face it
                    ready = agents_adjacent(d, target) >= need
                    if site.kind == "handover":
                        return act if ready else noop()
                    if not site.soft:
                        return act if ready or d.step % 4 == 0 else noop()
                    return act if ready and d.step % 2 == 0 else noop()
        # Stay with the team so shared sites are in everyone's view.
        lead = leader_id(d)
        if lead != d.agent_id:
            leader = d.teammate(lead)
            if leader is not None and distance(me, (leader.x, leader.y)) > 4:
                step = path_to(d, (leader.x, leader.y))
                if step is not None:
                    return step

    # 5. Progress: craft what the ladder needs, place stations, gather, explore.
    table = nearest(d, "crafting_table")
    furnace = nearest(d, "furnace")
    at_table = near(d, table)
    wants = []
    if inv["pickaxe"] < 1:
        wants.append("wood_pickaxe")
    if inv["sword"] < 1:
        wants.append("wood_sword")
    if inv["pickaxe"] < 2:
        wants.append("stone_pickaxe")
    if inv["sword"] < 2:
        wants.append("stone_sword")
    if inv["pickaxe"] < 3:
        wants.append("iron_pickaxe")
    if inv["sword"] < 3:
        wants.append("iron_sword")
    if inv["armour"] < 4 and inv["iron"] >= 3 and inv["coal"] >= 3:
        wants.append("iron_armour")
    if "MAKE_ARROW" not in have or (role == "warrior" and inv["arrows"] < 4 and inv["wood"] > 4):
        wants.append("arrow")
    if "MAKE_TORCH" not in have or (role == "miner" and inv["torches"] < 2 and inv["coal"] > 2):
        wants.append("torch")
    for item in wants:
        if legal(craft(item)):
            return craft(item)

    ground_ahead = facing_free_ground(d)
    if "PLACE_TABLE" not in have and inv["wood"] >= 2 and ground_ahead:
        return place("table")
    if (table is None or distance(me, table) > 15) and inv["wood"] >= 4 and ground_ahead:
        return place("table")
    if inv["stone"] >= 1 and at_table and (furnace is None or distance(table, furnace) > 2):
        step = face_free_tile(d, table)
        if step is None:
            return place("furnace")
        return step
    if "PLACE_FURNACE" not in have and inv["stone"] >= 1 and ground_ahead:
        return place("furnace")
    if "PLACE_STONE" not in have and inv["stone"] >= 2 and (ground_ahead or d.facing_block == "water"):
        return place("stone")
    if "PLACE_TORCH" not in have and inv["torches"] >= 1 and ground_ahead:
        return place("torch")
    if "PLACE_PLANT" not in have and inv["sapling"] >= 1 and d.facing_block == "grass" and ground_ahead:
        return place("plant")
    if role == "forager" and inv["sapling"] >= 1 and d.facing_block == "grass" and ground_ahead \
            and table is not None and distance(me, table) <= 8:
        return place("plant")  # a small farm by the table: ripe plants feed every role
    if role == "forager" and inv["sapling"] < 2 and d.facing_block == "grass" and ground_ahead:
        return do()

    # Materials for the next craft: go to the table when holding them.
    craftable_soon = (inv["pickaxe"] < 1 and inv["wood"] >= 1) or (inv["sword"] < 1 and inv["wood"] >= 1) \
        or (inv["pickaxe"] < 2 and inv["wood"] >= 1 and inv["stone"] >= 1) \
        or (inv["sword"] < 2 and inv["wood"] >= 1 and inv["stone"] >= 1)
    iron_ready = inv["wood"] >= 1 and inv["stone"] >= 1 and inv["iron"] >= 1 and inv["coal"] >= 1 \
        and (inv["pickaxe"] < 3 or inv["sword"] < 3)
    if table is not None and (craftable_soon or iron_ready) and distance(me, table) <= 20:
        if iron_ready and furnace is not None and distance(table, furnace) <= 2 and not near(d, furnace):
            return path_to(d, furnace) or path_to(d, table) or noop()
        if not at_table:
            step = path_to(d, table)
            if step is not None:
                return step

    # Descend once the overworld basics are done (every teammate is teleported along and unlocks the
    # next level's Enter achievement), or late in the episode from deeper cleared levels.
    late = d.step > 0.6 * d.max_steps or (d.level == 0 and d.step >= descend_from and inv["pickaxe"] >= 1)
    if late and (d.level >= 1 or not short):
        step = descend_step(d)  # also from the ladder the agent stands on (the view omits its tile)
        if step is not None:
            return step

    goals = []
    if inv["pickaxe"] >= 3 and inv["diamond"] < 3:
        goals.append("diamond")
    if inv["pickaxe"] >= 2 and inv["iron"] < (5 if role == "miner" else 3):
        goals.append("iron")
    if inv["pickaxe"] >= 1 and inv["coal"] < (5 if role == "miner" else 3):
        goals.append("coal")
    if inv["pickaxe"] >= 1 and inv["stone"] < (12 if role == "miner" else 5):
        goals.append("stone")
    if inv["wood"] < (12 if role == "miner" else 6):
        goals.append("tree")
    for block in goals:
        spot = nearest(d, block, solo=True)
        if spot is not None and distance(me, spot) <= 14:
            return act_on(d, spot)
    if role == "forager" and d.food < d.max_food - 4:
        cows = passive_mobs(d, 8)
        if cows:
            return act_on(d, (cows[0].x, cows[0].y))
    if goals:
        spot = nearest(d, goals[-1], solo=True)
        if spot is not None:
            return act_on(d, spot)
    if role == "forager" and d.facing_block == "grass" and ground_ahead and d.step % 3 == 0:
        return do()
    return explore(d)
