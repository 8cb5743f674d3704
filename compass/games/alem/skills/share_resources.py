# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Answer teammates' requests and ask for what you lack
def share_resources(obs: str) -> int:
    """Trade within the team. Gives a teammate what it requests (food, drink, wood, stone, coal, iron...) when
    this agent can spare it; Give works at any distance and moves one unit. Otherwise asks for what it lacks:
    food or drink when low (the forager has triple capacity and eats and drinks reliably), wood or stone when a
    craft is one unit short. Receiving food or drink by Give also unlocks Collect Food/Drink. Noop when nothing to do."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    inv = d.inventory
    for t in team_alive(d):
        if t.request is None or not legal(give(t.id)):
            continue
        if t.request == "food" and d.food >= (8 if d.role == "forager" else 7):
            return give(t.id)
        if t.request == "drink" and d.drink >= (8 if d.role == "forager" else 7):
            return give(t.id)
        if t.request not in ("food", "drink") and inv.get(t.request, 0) >= 2:
            return give(t.id)
    if d.my_request is None:
        if d.role != "forager" and d.food <= 6:
            return request("food")
        if d.role != "forager" and d.drink <= 4:
            return request("drink")
        if inv["wood"] == 0 and inv["pickaxe"] == 0:
            return request("wood")
        if inv["pickaxe"] >= 1 and inv["stone"] == 0:
            return request("stone")
    return noop()
