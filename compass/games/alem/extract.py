"""From ALEM's game state (as numpy) to each agent's ``ObsData``, entities and map memory.

Visibility follows the LLM harness exactly (``AlemLanguageWrapper``): the 9x11 window around the
agent, tiles lit above 0.05; teammates are always known; mobs must stand on a lit tile in the
window. So the entities a skill sees are the ones the text names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from compass.core.types import Entity, OwnUnit
from compass.games.alem.names import (
    ACHIEVEMENTS,
    BLOCK_NAMES,
    CONSTRUCTION_BLOCK_NAMES,
    FACING_NAMES,
    GIVE,
    ITEM_NAMES,
    LEVEL_NAMES,
    MELEE_MOB_NAMES,
    MONSTERS_TO_CLEAR_LEVEL,
    PASSIVE_MOB_NAMES,
    RANGED_MOB_NAMES,
    REQUEST_FOOD,
    REQUESTABLE,
    ROLES,
    SIGHT_RANGE,
    SKIP_BLOCKS,
    VIEW_COLS,
    VIEW_ROWS,
    action_name,
)
from compass.games.alem.obs import AlemMemory, CoordSite, Handover, Mob, ObsData, Seen, Teammate
from compass.util.grids import pad2d

HALF_R, HALF_C = VIEW_ROWS // 2, VIEW_COLS // 2
PAD = max(VIEW_ROWS, VIEW_COLS) + 2  # the harness's padding (MAX_OBS_DIM + 2)
OUT_OF_BOUNDS = 1
CONSTRUCTION_BLOCKS = frozenset(BLOCK_NAMES.index(name) for name in CONSTRUCTION_BLOCK_NAMES)
# By block code: the harness never lists these blocks in "You see:".
_SKIP = np.array([name in SKIP_BLOCKS for name in BLOCK_NAMES])
MOB_ID_BASE = {"passive": 100, "melee": 200, "ranged": 300}  # Entity ids: stable per mob slot
_MOB_CLASSES = (
    ("melee", "melee_mobs", "melee_mob_coordination", "melee_mob_agents_required", MELEE_MOB_NAMES),
    ("ranged", "ranged_mobs", "ranged_mob_coordination", "ranged_mob_agents_required", RANGED_MOB_NAMES),
    ("passive", "passive_mobs", "passive_mob_coordination", "passive_mob_agents_required", PASSIVE_MOB_NAMES),
)
_BUILDINGS = {0: "mining", 1: "shelter", 2: "forge", 3: "beacon"}
_TIER_ITEMS = (
    "wood",
    "stone",
    "coal",
    "iron",
    "diamond",
    "ruby",
    "sapphire",
    "sapling",
    "arrows",
    "torches",
    "books",
)


@dataclass
class LevelView:
    """Per-step arrays of the current level, padded once and shared by the three agents."""

    level: int
    map: np.ndarray
    items: np.ndarray
    light: np.ndarray
    coord: np.ndarray
    soft: np.ndarray
    padded_map: np.ndarray
    padded_items: np.ndarray
    padded_light: np.ndarray
    padded_coord: np.ndarray
    padded_soft: np.ndarray


def level_view(s: Any) -> LevelView:
    """Slice and pad the current level of numpy state ``s``."""
    lvl = int(s.player_level)
    m, it, li = s.map[lvl], s.item_map[lvl], s.light_map[lvl]
    co, so = s.coordination_map[lvl], s.soft_coordination_mask[lvl]
    return LevelView(
        lvl,
        m,
        it,
        li,
        co,
        so,
        pad2d(m, PAD, OUT_OF_BOUNDS),
        pad2d(it, PAD, 0),
        pad2d(li, PAD, 0.0),
        pad2d(co, PAD, 0),
        pad2d(so, PAD, False),
    )


def _window(padded: np.ndarray, row: int, col: int) -> np.ndarray:
    r0, c0 = row - HALF_R + PAD, col - HALF_C + PAD
    return padded[r0 : r0 + VIEW_ROWS, c0 : c0 + VIEW_COLS]


def extract_obs(
    s: Any,
    lv: LevelView,
    agent_id: int,
    legal: np.ndarray,
    max_steps: int,
    memory: AlemMemory | None = None,
    last_action: str | None = None,
    new_achievements: list[str] | None = None,
) -> ObsData:
    """One agent's :class:`ObsData` from numpy state ``s``; updates ``memory`` with its view."""
    row, col = (int(v) for v in s.player_position[agent_id])
    n = len(s.player_position)
    win_map = _window(lv.padded_map, row, col)
    win_items = _window(lv.padded_items, row, col)
    lit = _window(lv.padded_light, row, col) > 0.05
    win_coord = _window(lv.padded_coord, row, col)
    win_soft = _window(lv.padded_soft, row, col)
    rr, cc = np.nonzero(lit)
    map_r, map_c = rr + row - HALF_R, cc + col - HALF_C
    inside = (map_r >= 0) & (map_r < lv.map.shape[0]) & (map_c >= 0) & (map_c < lv.map.shape[1])
    if memory is not None:
        memory.update(
            lv.level,
            map_r[inside],
            map_c[inside],
            win_map[rr[inside], cc[inside]],
            win_coord[rr[inside], cc[inside]],
            int(s.timestep),
            win_items[rr[inside], cc[inside]],
        )

    # Every lit tile's codes as plain lists (one conversion each), the tiles ordered by
    # (distance, y, x): the order the blocks list is sorted in (keys are unique per tile, a
    # tile's block before its item, as a stable sort of block-then-item would leave them).
    dxs, dys = map_c - col, map_r - row
    dists = np.abs(dxs) + np.abs(dys)
    codes, items, coords = win_map[rr, cc], win_items[rr, cc], win_coord[rr, cc]
    order = np.lexsort((map_c, map_r, dists))
    listed = (dists > 0) & (~_SKIP[codes] | (items != 0))  # a listed block or maybe an item
    blocks: list[Seen] = []
    sel = order[listed[order]]
    for x, y, dx, dy, dist, code, item in zip(
        *(a[sel].tolist() for a in (map_c, map_r, dxs, dys, dists, codes, items)), strict=True
    ):
        name = BLOCK_NAMES[code]
        if name not in SKIP_BLOCKS:
            blocks.append(Seen(name, x, y, dx, dy, dist))
        if item in ITEM_NAMES:
            blocks.append(Seen(ITEM_NAMES[item], x, y, dx, dy, dist))
    sites: list[CoordSite] = []
    for k in np.flatnonzero(coords).tolist():
        y, x, v = int(map_r[k]), int(map_c[k]), int(coords[k])
        if 0 <= y < lv.map.shape[0] and 0 <= x < lv.map.shape[1]:
            dx, dy, dist = int(dxs[k]), int(dys[k]), int(dists[k])
            code = int(codes[k])
            construction = code in CONSTRUCTION_BLOCKS
            name = BLOCK_NAMES[code]
            if v > 0:
                soft = bool(win_soft[rr[k], cc[k]])
                sites.append(CoordSite(name, x, y, dx, dy, dist, "sync", v, soft, 0, construction))
            else:
                sites.append(CoordSite(name, x, y, dx, dy, dist, "handover", 0, False, -v, construction))
    sites.sort(key=lambda c: (c.dist, c.y, c.x))

    mobs = _mobs(s, lv, row, col)
    mates = _teammates(s, agent_id, row, col, n)
    handovers = _handovers(s, lit, row, col)

    direction = int(s.player_direction[agent_id])
    facing = FACING_NAMES.get(direction, "none")
    fvec = {1: (-1, 0), 2: (1, 0), 3: (0, -1), 4: (0, 1)}.get(direction, (0, 0))
    fx, fy = col + fvec[0], row + fvec[1]
    do_target = _do_target(s, lv, agent_id, fx, fy, lit[HALF_R + fvec[1], HALF_C + fvec[0]], mobs)
    inside_f = 0 <= fy < lv.map.shape[0] and 0 <= fx < lv.map.shape[1]
    facing_block = BLOCK_NAMES[int(lv.map[fy, fx])] if inside_f else "out_of_bounds"
    req_type, req_dur = int(s.request_type[agent_id]), int(s.request_duration[agent_id])
    k = req_type - REQUEST_FOOD
    my_request = REQUESTABLE[k] if req_type > 0 and req_dur > 0 and 0 <= k < len(REQUESTABLE) else None

    inv = s.inventory
    inventory = {k: int(getattr(inv, k)[agent_id]) for k in _TIER_ITEMS}
    inventory.update(
        pickaxe=int(inv.pickaxe[agent_id]),
        sword=int(inv.sword[agent_id]),
        bow=int(inv.bow[agent_id]),
        armour=int((np.asarray(inv.armour[agent_id]) > 0).sum()),
        potions=int(np.asarray(inv.potions[agent_id]).sum()),
    )
    status = {
        "health": float(s.player_health[agent_id]),
        "food": float(s.player_food[agent_id]),
        "drink": float(s.player_drink[agent_id]),
        "energy": float(s.player_energy[agent_id]),
        "mana": float(s.player_mana[agent_id]),
        "xp": float(s.player_xp[agent_id]),
    }
    attributes = {
        "dexterity": int(s.player_dexterity[agent_id]),
        "strength": int(s.player_strength[agent_id]),
        "intelligence": int(s.player_intelligence[agent_id]),
    }
    legal_idx = [int(a) for a in np.nonzero(legal)[0]]
    level = lv.level
    return ObsData(
        agent_id=agent_id,
        role=ROLES.get(int(s.player_specialization[agent_id]), ""),
        step=int(s.timestep),
        max_steps=max_steps,
        alive=bool(s.player_alive[agent_id]) and status["health"] > 0,
        position=(col, row),
        facing=facing,
        facing_xy=(fx, fy),
        do_target=do_target,
        level=level,
        level_name=LEVEL_NAMES[level] if level < len(LEVEL_NAMES) else f"level {level}",
        level_cleared=int(s.monsters_killed[level]) >= MONSTERS_TO_CLEAR_LEVEL,
        light=float(s.light_level),
        status=status,
        attributes=attributes,
        inventory=inventory,
        sleeping=bool(s.is_sleeping[agent_id]),
        resting=bool(s.is_resting[agent_id]),
        blocks=blocks,
        mobs=mobs,
        teammates=mates,
        coord_sites=sites,
        handovers=handovers,
        legal_actions=[action_name(a, agent_id) for a in legal_idx],
        legal_indices=legal_idx,
        last_action=last_action,
        new_achievements=list(new_achievements or []),
        memory=memory,
        facing_block=facing_block,
        my_request=my_request,
        num_levels=int(s.map.shape[0]),
        achievements=frozenset(ACHIEVEMENTS[k] for k in np.nonzero(s.achievements[agent_id])[0]),
    )


def _mobs(s: Any, lv: LevelView, row: int, col: int) -> list[Mob]:
    out: list[Mob] = []
    for kind, attr, coord_attr, req_attr, names in _MOB_CLASSES:
        mobs = getattr(s, attr)
        mask = mobs.mask[lv.level]
        if not mask.any():
            continue
        pos, hp, types = mobs.position[lv.level], mobs.health[lv.level], mobs.type_id[lv.level]
        coord, req = getattr(s, coord_attr)[lv.level], getattr(s, req_attr)[lv.level]
        for k in np.nonzero(mask)[0].tolist():
            y, x = int(pos[k, 0]), int(pos[k, 1])
            dy, dx = y - row, x - col
            if abs(dy) > HALF_R or abs(dx) > HALF_C:
                continue
            if 0 <= y < lv.light.shape[0] and 0 <= x < lv.light.shape[1] and lv.light[y, x] <= 0.05:
                continue
            t = int(types[k])
            name = names[t] if t < len(names) else f"{kind}_mob_{t}"
            out.append(
                Mob(
                    MOB_ID_BASE[kind] + k,
                    name,
                    kind,
                    x,
                    y,
                    dx,
                    dy,
                    abs(dx) + abs(dy),
                    float(hp[k]),
                    int(coord[k]),
                    int(req[k]),
                )
            )
    out.sort(key=lambda m: (m.dist, m.id))
    return out


def _teammates(s: Any, agent_id: int, row: int, col: int, n: int) -> list[Teammate]:
    out = []
    for i in range(n):
        if i == agent_id:
            continue
        y, x = (int(v) for v in s.player_position[i])
        dx, dy = x - col, y - row
        alive = bool(s.player_alive[i])
        req_type, req_dur = int(s.request_type[i]), int(s.request_duration[i])
        k = req_type - REQUEST_FOOD
        request = REQUESTABLE[k] if req_type > 0 and req_dur > 0 and 0 <= k < len(REQUESTABLE) else None
        out.append(
            Teammate(
                i,
                ROLES.get(int(s.player_specialization[i]), ""),
                x,
                y,
                dx,
                dy,
                abs(dx) + abs(dy),
                float(s.player_health[i]),
                alive,
                abs(dy) <= HALF_R and abs(dx) <= HALF_C,
                request,
            )
        )
    return out


def _handovers(s: Any, lit: np.ndarray, row: int, col: int) -> list[Handover]:
    out = []
    t = int(s.timestep)
    for h in np.asarray(s.pending_handovers):
        if int(h[0]) < 1:
            continue
        hy, hx = int(h[1]), int(h[2])  # stored as (row, col)
        dy, dx = hy - row, hx - col
        if abs(dy) > HALF_R or abs(dx) > HALF_C or not lit[dy + HALF_R, dx + HALF_C]:
            continue
        remaining = int(h[3]) - t
        if remaining > 0:
            out.append(Handover(hx, hy, dx, dy, remaining, int(h[4]), _BUILDINGS.get(int(h[5]), "mining")))
    return out


def _do_target(s: Any, lv: LevelView, agent_id: int, fx: int, fy: int, lit: bool, mobs: list[Mob]) -> str:
    if not lit:
        return "darkness"
    if 0 <= fy < lv.map.shape[0] and 0 <= fx < lv.map.shape[1]:
        block = BLOCK_NAMES[int(lv.map[fy, fx])]
    else:
        block = "out_of_bounds"
    for i in range(len(s.player_position)):
        if (
            i != agent_id
            and bool(s.player_alive[i])
            and int(s.player_position[i][0]) == fy
            and int(s.player_position[i][1]) == fx
        ):
            return f"Agent {i} (on {block})"
    for m in mobs:
        if m.x == fx and m.y == fy:
            return f"{m.name} (on {block})"
    return block


def own_unit(obs: ObsData, last_action: int) -> OwnUnit:
    """The agent's own unit in the base contract's terms (health in raw points, no shield)."""
    return OwnUnit(
        unit_type=obs.role,
        x=float(obs.x),
        y=float(obs.y),
        health=obs.health,
        sight_range=SIGHT_RANGE,
        attack_range=1.0,
        last_action=last_action,
        map_width=48.0,
        map_height=48.0,
    )


def entities(obs: ObsData) -> tuple[Entity, ...]:
    """Teammates (``ally``, id = agent id, type = role) and visible mobs (``enemy``, type = mob name).

    Mob ids are stable per mob slot (passive 100+k, melee 200+k, ranged 300+k), so reports from
    different agents agree; passive mobs are ``enemy`` too (they are hunted). Health is raw points.
    """
    out = []
    for t in obs.teammates:
        d = float(np.hypot(t.dx, t.dy)) / SIGHT_RANGE
        out.append(
            Entity(
                id=t.id,
                team="ally",
                unit_type=t.role,
                x=float(t.x),
                y=float(t.y),
                rel_x=t.dx / SIGHT_RANGE,
                rel_y=t.dy / SIGHT_RANGE,
                distance=d,
                health=t.health if t.alive else 0.0,
                visible=t.on_screen,
            )
        )
    for m in obs.mobs:
        d = float(np.hypot(m.dx, m.dy)) / SIGHT_RANGE
        out.append(
            Entity(
                id=m.id,
                team="enemy",
                unit_type=m.name,
                x=float(m.x),
                y=float(m.y),
                rel_x=m.dx / SIGHT_RANGE,
                rel_y=m.dy / SIGHT_RANGE,
                distance=d,
                health=m.health,
                can_attack=m.dist == 1,
            )
        )
    return tuple(out)


def affordances_text(legal_idx: list[int], agent_id: int) -> str:
    """The harness's "Available actions:" block from a legal-action mask (Give slots last)."""
    names = [action_name(a, agent_id) for a in legal_idx if a < GIVE]
    names += [action_name(a, agent_id) for a in legal_idx if a >= GIVE]
    return "Available actions:\n - " + "\n - ".join(names) if names else ""
