# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Finish a handover a teammate started before its window closes
def complete_handover(obs: str) -> int:
    """Finish a handover a teammate started ('Active handover ... complete it within N steps'): walk next to the
    tile, face it and use Do (mining handover) or the same Build action (construction handover) before the window
    closes; both agents unlock Handover Complete and the miner also Coord Mine Handover. When no handover is active
    but a handover site and a teammate are next to each other, starts one with Do so the teammate can finish it.
    Noop otherwise."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    best = None
    for h in d.handovers:
        if h.initiator == d.agent_id or distance(d.position, (h.x, h.y)) > h.remaining + 1:
            continue
        act = do() if h.building == "mining" else build(h.building)
        if h.building != "mining" and not legal(act) and adjacent(d, (h.x, h.y)):
            continue
        if best is None or distance(d.position, (h.x, h.y)) < distance(d.position, (best[0].x, best[0].y)):
            best = (h, act)
    if best is not None:
        return act_on(d, (best[0].x, best[0].y), best[1])
    sites = [s for s in d.coord_sites if s.kind == "handover" and not s.construction and can_mine(d, s.name)]
    for s in sites:
        if agents_adjacent(d, (s.x, s.y), False) >= 1:
            return act_on(d, (s.x, s.y))
    return noop()
