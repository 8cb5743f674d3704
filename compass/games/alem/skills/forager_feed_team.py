# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Forager keeps the team fed and watered
def forager_feed_team(obs: str) -> int:
    """The forager's specialisation: it alone always gets food from cows, drink from water and saplings from
    grass, and carries three times the food and drink. Gives food or drink to any teammate that requests it,
    drinks to full at water, hunts the nearest cow when below 20 food, gathers saplings from grass and plants them
    next to the team's table (ripe plants feed every role), and otherwise stays within a few tiles of the team."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    for t in team_alive(d):
        if t.request in ("food", "drink") and legal(give(t.id)):
            mine = d.food if t.request == "food" else d.drink
            if mine >= 6:
                return give(t.id)
    water = nearest(d, "water")
    if water is not None and (d.drink <= 8 or (adjacent(d, water) and d.drink < d.max_food - 2)):
        return act_on(d, water)
    if d.food < 20:
        cows = passive_mobs(d, 10)
        if cows:
            return act_on(d, (cows[0].x, cows[0].y))
    table = nearest(d, "crafting_table")
    ground = facing_free_ground(d) and d.facing_block == "grass"
    if d.inventory["sapling"] >= 1 and ground and table is not None and distance(d.position, table) <= 8:
        return place("plant")
    if d.inventory["sapling"] < 3 and ground:
        return do()
    center = team_center(d)
    if distance(d.position, center) > 4:
        return path_to(d, center, adjacent=False) or explore(d)
    return explore(d)
