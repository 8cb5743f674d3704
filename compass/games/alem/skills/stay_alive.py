# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Keep food, drink and energy up
def stay_alive(obs: str) -> int:
    """Keep the vital stats up. Drinks at the nearest water when drink is low (foragers always succeed, others
    only sometimes, so they also request drink), eats ripe plants (any role) or cows (foragers always get the food)
    when hungry and asks the forager for food, and sleeps when out of energy (sealed in a stone tunnel at dusk when
    it holds stone and a pickaxe). Returns Noop when every stat is fine, so it can be chained before other skills."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    forager_alive = any(t.role == "forager" for t in team_alive(d))
    if d.role != "forager" and forager_alive and d.my_request is None:
        if d.food <= 6:
            return request("food")
        if d.drink <= 3:
            return request("drink")
    water = nearest(d, "water")
    if d.drink <= 4 or (water is not None and adjacent(d, water) and d.drink < d.max_food - 1):
        return act_on(d, water) if water is not None else explore(d)
    if d.food <= 5:
        ripe = nearest(d, "ripe_plant")
        if ripe is not None:
            return act_on(d, ripe)
        cows = passive_mobs(d, 8)
        if cows:
            return act_on(d, (cows[0].x, cows[0].y))
        return explore(d)
    if d.energy <= 2:
        return sleep()
    return noop()
