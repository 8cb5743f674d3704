# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Meet teammates at a coordination site and act on it together
def coordinate_at_site(obs: str) -> int:
    """Go to the coordination site the team converges on (the one next to the team leader, else the one nearest
    the team's centre: trees, ores or construction sites marked 'requires N agents', 'grants a bonus when N agents'
    or a handover), take a free tile next to it and face it, then wait until enough teammates stand next to it and
    act on the same step: Do for mining, the matching Build action for construction sites (needs a teammate who can
    pay). Hard sites fail alone, so it keeps hitting them; soft sites are only hit on even steps once the team is
    there, so nobody takes the solo payoff. Noop when no suitable site is in view."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    site = coordination_target(d)
    if site is None:
        return noop()
    target = (site.x, site.y)
    need = site.required if site.kind == "sync" else 2
    act = do()
    if site.construction:
        act = None
        for kind in ("shelter", "beacon", "forge"):
            if legal(build(kind)):
                act = build(kind)
                break
        if act is None:
            return noop()
    step = path_to(d, target)
    if step is not None:
        return step
    ready = agents_adjacent(d, target) >= need
    if site.kind == "handover":
        return act if ready else noop()
    if not site.soft:
        return act if ready or d.step % 4 == 0 else noop()
    return act if ready and d.step % 2 == 0 else noop()
