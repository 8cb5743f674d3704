# provenance: human
# parent: -
# created: 2026-11-22
# model: -
# subtask: Seal yourself in a stone tunnel and sleep through the night
def sleep_safely(obs: str) -> int:
    """Sleep where zombies cannot reach: find a dead-end corridor of two tiles (or dig one two tiles deep into
    stone with a pickaxe), walk to its end, step back one tile to face the entrance and place stone on it, then
    sleep until energy is full (sleepers take 2.5x damage, and zombies spawn in the dark). Once rested in
    daylight it digs back out. Falls back to sleeping in place only when energy is about to run out."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping or d.resting:
        return noop()
    if enclosed(d):
        if d.energy < d.max_energy and (is_dusk_or_night(d) or d.energy <= 4):
            return sleep()
        return dig_out(d) or noop()
    step = shelter_step(d)
    if step is not None:
        return step
    if d.energy <= 1:
        return sleep()
    spot = nearest(d, "stone") if d.inventory["pickaxe"] >= 1 else None
    return act_on(d, spot) if spot is not None else explore(d)
