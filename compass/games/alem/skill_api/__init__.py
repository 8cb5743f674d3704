"""The skill API of the ALEM family, injected into every ALEM skill.

A skill is ``def name(obs: str) -> int``. It calls ``parse_obs(obs)`` for an :class:`ObsData`
(status, inventory, role, level, what it sees with coordinates, coordination sites, teammates,
legal actions, its own map memory) and returns an action index (0..55) built with the helpers.
Coordinates follow the harness text: ``x`` = column (east +), ``y`` = row (south +).

The helpers live in layers, each importing only the ones above it:

* :mod:`.actions` — atomic actions (``move``, ``place``, ``craft``...), no observation needed;
* :mod:`.knowledge` — geometry, the map as seen and remembered, creatures, team, inventory;
* :mod:`.paths` — path finding, exploring, fleeing, acting on a tile;
* :mod:`.tactics` — sealing a tunnel to sleep in, digging out;
* :mod:`.survival` — the team's night routine (when to shelter, a stable shelter, stone for it),
  a warrior escort, a plant farm by the base, descending;
* :mod:`.progress` — daytime scoring: achievement weights, first crafts worth a trip, a visit to
  the next level;
* :mod:`.below` — below the overworld: chests, potions, the bow, the next level's entry, climbing
  back; on level 1, out of orc mages' lines of fire, fountains, regrouping on the warrior;
* :mod:`.revive` — reviving teammates, second pass: bodies beside a creature, and nights, wait;
* :mod:`.coordination` — the team's conventions for coordination sites;
* :mod:`.structures` — the team's structures: a payer and a completer build a shelter, beacon or
  forge at a construction handover site.
* :mod:`.pairs` — a one-shot pair harvest of a 2-agent sync site.
* :mod:`.handover` — a mining handover on purpose: the pair starts one and completes it.
* :mod:`.mine_sync` — the mining sync sites: the miner mines while teammates Do on the tile.
* :mod:`.evening` — into the night fed and sealed: a sealing stone asked of the team, food and drink
  topped up before dusk, a non-miner's seal placed as a furnace (any role places one at once), sealing
  in short of food or drink with a forager to give.
* :mod:`.fed` — eating and drinking only at water or a ripe plant the agent has a known path to.
* :mod:`.plants` — plants on the way: a sapling placed where the agent stands, ripe plants left to
  the teammates that need them, the forager's body revived first.
* :mod:`.melee` — what one blow does, the creatures an agent cannot hurt alone, keeping away from them.
* :mod:`.frontier` — chores toward unseen ground: among near-equal tiles, the one whose surroundings
  the agent has not seen.
* :mod:`.relay` — the ladder down relayed: a ready agent that knows no ladder signals, a teammate that
  knows one takes the team down.

:data:`EXPORTS` is the one list of names a skill sees; :func:`make_api` builds exactly those for
one call, and the synthesis/repair prompts render their API section from it.
"""

from __future__ import annotations

import random

from compass.core.types import CURRENT_OBS, AgentView
from compass.games.alem.names import (
    ACTION_LABELS,
    BUILD_COSTS,
    DESCEND,
    DO,
    GIVE,
    NOOP,
    REST,
    SLEEP,
    action_index,
    action_name,
    give_action,
)
from compass.games.alem.obs import CoordSite, Handover, Mob, ObsData, Seen, Teammate, parse_alem_text
from compass.games.alem.skill_api.actions import (
    ASCEND,
    action,
    ascend,
    build,
    craft,
    descend,
    do,
    face,
    move,
    noop,
    place,
    request,
    rest,
    sleep,
)
from compass.games.alem.skill_api.below import (
    POTION_COLOURS,
    arrow_step,
    below_step,
    body_in_danger,
    bow_step,
    bow_target,
    chest_step,
    cleared_level_step,
    climb_back_step,
    dodge_fire_step,
    drink_potion,
    eat_new_creature_step,
    fire_lines,
    fountain_step,
    held_potions,
    in_fire_line,
    leave_cleared_step,
    mage_approach_step,
    next_entry_step,
    potion_step,
    regroup_step,
    resupply_step,
    safe_revive_step,
    shoot_arrow,
    short_of_supplies,
)
from compass.games.alem.skill_api.coordination import (
    CALL_REQUEST,
    agents_adjacent,
    call_step,
    caller,
    cohesion_step,
    construction_action,
    coordination_rewards,
    coordination_target,
    elite_to_call,
    free_adjacent_tiles,
    help_near,
    hunt_step,
    hunt_target,
    in_view_of,
    large_passive_target,
    lead_step,
    leader_position,
    mine_unlock,
    nearest_on_leash,
    opening_site,
    opening_stands,
    opening_step,
    rally_site,
    rally_step,
    shared_site,
    site_rewards_for,
    team_site,
    within_leash,
)
from compass.games.alem.skill_api.evening import (
    evening_topup_step,
    fed_by_give,
    furnace_exit_step,
    furnace_seal,
    shelter_stone_step,
    stone_for_shelter,
)
from compass.games.alem.skill_api.fed import detour_step, fed_step, reach_step, supply_step, walk_wasted
from compass.games.alem.skill_api.frontier import (
    nearest_frontier,
    unseen_around,
    unseen_grid,
    wide_frontier,
)
from compass.games.alem.skill_api.handover import handover_plan, handover_sites, handover_step
from compass.games.alem.skill_api.knowledge import (
    GROUND,
    RESOURCE_BLOCK,
    RESOURCE_BLOCKS,
    RESOURCE_TOOL,
    STEP_DIRS,
    Point,
    adjacent,
    block_at,
    can_build_here,
    can_mine,
    direction_to,
    distance,
    facing,
    facing_free_ground,
    has_materials,
    hostile_mobs,
    is_dusk_or_night,
    leader_id,
    near,
    nearest,
    nearest_seen,
    obs_data_from_view,
    passive_mobs,
    team_alive,
    team_center,
    teammate_ahead,
    walkable,
)
from compass.games.alem.skill_api.melee import (
    SWORD_DAMAGE,
    can_hurt,
    hitters,
    keep_away_step,
    melee_damage,
    strikes_to_kill,
    untouchable,
)
from compass.games.alem.skill_api.mine_sync import (
    mine_sync_helpers,
    mine_sync_need,
    mine_sync_site,
    mine_sync_step,
)
from compass.games.alem.skill_api.pairs import (
    harvest_pair,
    pair_harvest_site,
    pair_harvest_step,
    pair_site_pays,
    pair_sites,
)
from compass.games.alem.skill_api.paths import (
    act_on,
    explore,
    face_free_tile,
    flee,
    greedy_step,
    path_to,
    tunnel_step,
)
from compass.games.alem.skill_api.plants import first_body, plant_step, revive_first_step, ripe_step
from compass.games.alem.skill_api.progress import (
    FIRST_CRAFTS,
    achievement_weight,
    armed_for_descent,
    craft_trip,
    descent_step,
    finish_descent_step,
    free_ladder,
    missing_weight,
    seek_ladder_step,
    visit_next_level_step,
)
from compass.games.alem.skill_api.relay import (
    READY_REQUEST,
    ready_mates,
    ready_signal_step,
    relay_descent_step,
)
from compass.games.alem.skill_api.revive import body_threatened, careful_revive_step, night_out
from compass.games.alem.skill_api.structures import (
    build_sites,
    built_structures,
    help_build_step,
    material_request,
    pay_step,
    pool_ready,
    spare_wood,
    structure_to_pay,
    wood_reserve,
)
from compass.games.alem.skill_api.survival import (
    base_anchor,
    bunker_step,
    descend_step,
    downed_teammates,
    escort_step,
    farm_step,
    feed_step,
    place_at,
    refuel_step,
    rest_step,
    revive_step,
    ring_room,
    ring_room_step,
    ring_room_stones,
    shelter_plan,
    shelter_time,
    sow_step,
    standing_on,
    stone_needed,
    team_bunker_step,
    team_room,
    time_of_day,
)
from compass.games.alem.skill_api.tactics import dig_out, dig_spot, enclosed, shelter_step, sleep_spot

#: What ``parse_obs`` returns, then the records it holds (the prompts list their fields).
OBSERVATION_TYPES = (ObsData, Seen, Mob, Teammate, CoordSite, Handover)

#: Every name an ALEM skill sees, in the order the prompts list them.
EXPORTS: tuple[str, ...] = (
    "parse_obs",
    # atomic actions
    "noop",
    "do",
    "sleep",
    "rest",
    "descend",
    "ascend",
    "move",
    "face",
    "place",
    "craft",
    "build",
    "request",
    "give",
    "action",
    "action_name",
    "legal",
    # geometry and knowledge
    "distance",
    "direction_to",
    "block_at",
    "walkable",
    "nearest",
    "nearest_seen",
    "nearest_frontier",
    "unseen_around",
    "unseen_grid",
    "wide_frontier",
    "adjacent",
    "facing",
    "near",
    "hostile_mobs",
    "passive_mobs",
    "team_alive",
    "team_center",
    "leader_id",
    "has_materials",
    "can_mine",
    "can_build_here",
    "facing_free_ground",
    "teammate_ahead",
    "is_dusk_or_night",
    # movement
    "path_to",
    "tunnel_step",
    "greedy_step",
    "act_on",
    "explore",
    "flee",
    "face_free_tile",
    # night shelter
    "enclosed",
    "sleep_spot",
    "dig_spot",
    "dig_out",
    "shelter_step",
    # the team's survival routine
    "time_of_day",
    "shelter_time",
    "base_anchor",
    "shelter_plan",
    "bunker_step",
    "rest_step",
    "stone_needed",
    "escort_step",
    "farm_step",
    "sow_step",
    "team_room",
    "team_bunker_step",
    "ring_room",
    "ring_room_step",
    "ring_room_stones",
    "place_at",
    "descend_step",
    # into the night fed and sealed (a stone asked for, food and drink topped up before dusk, sealed in fed by Give)
    "stone_for_shelter",
    "shelter_stone_step",
    "evening_topup_step",
    "fed_by_give",
    "furnace_seal",
    "furnace_exit_step",
    # fight or keep away (a hard elite takes no damage from one agent)
    "melee_damage",
    "hitters",
    "can_hurt",
    "strikes_to_kill",
    "untouchable",
    "keep_away_step",
    "SWORD_DAMAGE",
    # reviving a downed teammate (alem: Do facing its body)
    "downed_teammates",
    "revive_step",
    # feeding the revived (a body comes back with the food and drink it died with)
    "refuel_step",
    "feed_step",
    # the team fed: eat and drink only at what this agent has a path to
    "reach_step",
    "supply_step",
    "fed_step",
    "detour_step",
    "walk_wasted",
    # plants on the way: food that does not depend on the forager's Gives
    "plant_step",
    "ripe_step",
    "first_body",
    "revive_first_step",
    # daytime scoring: what the team can still unlock, cheaply
    "achievement_weight",
    "missing_weight",
    "craft_trip",
    "armed_for_descent",
    "descent_step",
    "finish_descent_step",
    "free_ladder",
    "READY_REQUEST",
    "ready_mates",
    "ready_signal_step",
    "relay_descent_step",
    "seek_ladder_step",
    "visit_next_level_step",
    "standing_on",
    "FIRST_CRAFTS",
    # below the overworld: chests, potions, the bow, the next level, the way back up
    "drink_potion",
    "shoot_arrow",
    "held_potions",
    "chest_step",
    "potion_step",
    "bow_target",
    "bow_step",
    "arrow_step",
    "eat_new_creature_step",
    "next_entry_step",
    "climb_back_step",
    "below_step",
    "POTION_COLOURS",
    # level 1 as a team: out of the mages' lines of fire, fountains, together
    "in_fire_line",
    "dodge_fire_step",
    "fountain_step",
    "regroup_step",
    "fire_lines",
    "mage_approach_step",
    "cleared_level_step",
    # level 2: leaving a cleared level (round bodies and snails, exploring for the ladder down),
    # and no revival into a fight a body cannot win
    "leave_cleared_step",
    "body_in_danger",
    "safe_revive_step",
    # water and food for the team below: up the ladder when parched or starving
    "short_of_supplies",
    "resupply_step",
    # reviving, second pass: bodies beside a creature, and nights, wait
    "night_out",
    "body_threatened",
    "careful_revive_step",
    # coordination
    "free_adjacent_tiles",
    "agents_adjacent",
    "coordination_target",
    "coordination_rewards",
    "site_rewards_for",
    "construction_action",
    "large_passive_target",
    "hunt_target",
    "hunt_step",
    "elite_to_call",
    "caller",
    "help_near",
    "lead_step",
    "call_step",
    "CALL_REQUEST",
    "leader_position",
    "team_site",
    "shared_site",
    "cohesion_step",
    "within_leash",
    "nearest_on_leash",
    "in_view_of",
    "opening_site",
    "opening_stands",
    "opening_step",
    "rally_site",
    "rally_step",
    # structures (a payer starts a construction handover, a teammate completes it)
    "built_structures",
    "structure_to_pay",
    "material_request",
    "build_sites",
    "pay_step",
    "help_build_step",
    "wood_reserve",
    "spare_wood",
    "pool_ready",
    # a one-shot pair harvest of a 2-agent site
    "harvest_pair",
    "pair_sites",
    "pair_site_pays",
    "pair_harvest_site",
    "pair_harvest_step",
    # a mining handover on purpose: the pair starts one and completes it
    "handover_sites",
    "handover_plan",
    "handover_step",
    # the mining sync sites: the miner mines while teammates Do on the tile
    "mine_sync_need",
    "mine_unlock",
    "mine_sync_helpers",
    "mine_sync_site",
    "mine_sync_step",
    "default_action",
    # constants
    "NOOP",
    "DO",
    "SLEEP",
    "REST",
    "DESCEND",
    "GIVE",
    "ACTION_LABELS",
    "RESOURCE_BLOCKS",
    "BUILD_COSTS",
)


def default_action(view: AgentView) -> int:
    """A safe legal action: hit an adjacent hostile creature we face, else Noop."""
    if not view.alive or NOOP not in view.avail_actions:
        return NOOP if NOOP in view.avail_actions or not view.avail_actions else view.avail_actions[0]
    d = obs_data_from_view(view)
    for m in d.mobs:
        if m.hostile and facing(d, (m.x, m.y)) and DO in d.legal_indices:
            return DO
    return NOOP


def make_api(view: AgentView, rng: random.Random) -> dict[str, object]:
    """Exactly the :data:`EXPORTS` names, for one call on ``view``.

    Nothing here reads ``view`` before a helper is called: the prompts' API reference is rendered
    from ``make_api(None, rng)``.
    """
    cached: list[ObsData] = []

    def parse_obs(obs: str) -> ObsData:
        """Structured observation; the agent's own text is served from its view without re-parsing."""
        if obs == CURRENT_OBS or obs is view.text or obs == view.text:  # text read last: it may be lazy
            if not cached:
                cached.append(obs_data_from_view(view))
            return cached[0]
        return parse_alem_text(obs)

    def safe_do() -> int:
        """Do on the faced tile (chop/mine, attack, drink, eat...), or Noop when a living teammate stands there."""
        return NOOP if teammate_ahead(obs_data_from_view(view)) else DO

    def give(target: int) -> int:
        """Give one unit of what teammate ``target`` requests (legal only while it has a request)."""
        return give_action(view.agent_id, int(target))

    def action_of(name: str) -> int:
        """Index of a harness action label (``"Make Wood Pickaxe"``, ``"Give to Agent 2"``) for this agent."""
        return action_index(name, view.agent_id)

    def name_of(index: int) -> str:
        """Harness label of an action index for this agent."""
        return action_name(int(index), view.agent_id)

    def legal(index: int) -> bool:
        """Whether an action index is legal now."""
        return int(index) in view.avail_actions

    def explore_here(d: ObsData, near: str | None = None, wide: float = 0.0) -> int:
        return explore(d, rng, near, wide)

    explore_here.__doc__ = explore.__doc__

    def default(obs: str | None = None) -> int:
        """A safe legal action: hit an adjacent hostile creature the agent faces, else Noop."""
        return default_action(view)

    bound: dict[str, object] = {
        "parse_obs": parse_obs,
        "do": safe_do,
        "give": give,
        "action": action_of,
        "action_name": name_of,
        "legal": legal,
        "explore": explore_here,
        "default_action": default,
    }
    return {name: bound[name] if name in bound else _PLAIN[name] for name in EXPORTS}


_PLAIN: dict[str, object] = {
    name: value for name, value in globals().items() if name in EXPORTS and not name.startswith("_")
}

__all__ = [
    "ACTION_LABELS",
    "ASCEND",
    "BUILD_COSTS",
    "DESCEND",
    "DO",
    "EXPORTS",
    "FIRST_CRAFTS",
    "GIVE",
    "GROUND",
    "NOOP",
    "OBSERVATION_TYPES",
    "POTION_COLOURS",
    "Point",
    "RESOURCE_BLOCK",
    "RESOURCE_BLOCKS",
    "RESOURCE_TOOL",
    "REST",
    "SLEEP",
    "STEP_DIRS",
    "SWORD_DAMAGE",
    "achievement_weight",
    "can_hurt",
    "hitters",
    "keep_away_step",
    "melee_damage",
    "strikes_to_kill",
    "untouchable",
    "unseen_around",
    "unseen_grid",
    "wide_frontier",
    "act_on",
    "action",
    "adjacent",
    "agents_adjacent",
    "armed_for_descent",
    "arrow_step",
    "ascend",
    "base_anchor",
    "below_step",
    "block_at",
    "bow_step",
    "bow_target",
    "build",
    "build_sites",
    "built_structures",
    "bunker_step",
    "can_build_here",
    "can_mine",
    "chest_step",
    "climb_back_step",
    "cohesion_step",
    "construction_action",
    "coordination_rewards",
    "coordination_target",
    "craft",
    "craft_trip",
    "default_action",
    "descend",
    "descend_step",
    "descent_step",
    "detour_step",
    "dig_out",
    "dig_spot",
    "direction_to",
    "distance",
    "do",
    "downed_teammates",
    "drink_potion",
    "eat_new_creature_step",
    "enclosed",
    "escort_step",
    "explore",
    "face",
    "face_free_tile",
    "facing",
    "facing_free_ground",
    "farm_step",
    "feed_step",
    "fed_by_give",
    "fed_step",
    "finish_descent_step",
    "first_body",
    "evening_topup_step",
    "flee",
    "free_adjacent_tiles",
    "furnace_exit_step",
    "furnace_seal",
    "free_ladder",
    "READY_REQUEST",
    "ready_mates",
    "ready_signal_step",
    "relay_descent_step",
    "greedy_step",
    "has_materials",
    "held_potions",
    "help_build_step",
    "hostile_mobs",
    "is_dusk_or_night",
    "large_passive_target",
    "hunt_target",
    "hunt_step",
    "elite_to_call",
    "caller",
    "help_near",
    "lead_step",
    "call_step",
    "CALL_REQUEST",
    "leader_id",
    "leader_position",
    "make_api",
    "material_request",
    "missing_weight",
    "move",
    "near",
    "nearest",
    "nearest_on_leash",
    "nearest_seen",
    "nearest_frontier",
    "next_entry_step",
    "noop",
    "obs_data_from_view",
    "passive_mobs",
    "path_to",
    "pay_step",
    "place",
    "place_at",
    "plant_step",
    "potion_step",
    "reach_step",
    "refuel_step",
    "request",
    "rest",
    "rest_step",
    "revive_first_step",
    "revive_step",
    "ripe_step",
    "ring_room",
    "ring_room_step",
    "ring_room_stones",
    "seek_ladder_step",
    "shared_site",
    "shelter_plan",
    "shelter_stone_step",
    "shelter_step",
    "shelter_time",
    "shoot_arrow",
    "site_rewards_for",
    "sleep",
    "sleep_spot",
    "sow_step",
    "standing_on",
    "stone_for_shelter",
    "stone_needed",
    "structure_to_pay",
    "supply_step",
    "team_alive",
    "team_bunker_step",
    "team_center",
    "team_room",
    "team_site",
    "teammate_ahead",
    "time_of_day",
    "tunnel_step",
    "visit_next_level_step",
    "walk_wasted",
    "walkable",
    "within_leash",
    "dodge_fire_step",
    "fountain_step",
    "in_fire_line",
    "regroup_step",
    "fire_lines",
    "mage_approach_step",
    "cleared_level_step",
    "leave_cleared_step",
    "body_in_danger",
    "safe_revive_step",
    "short_of_supplies",
    "resupply_step",
    "night_out",
    "body_threatened",
    "careful_revive_step",
    "pool_ready",
    "spare_wood",
    "wood_reserve",
    "harvest_pair",
    "pair_sites",
    "pair_site_pays",
    "pair_harvest_site",
    "pair_harvest_step",
    "handover_sites",
    "handover_plan",
    "handover_step",
    "in_view_of",
    "opening_site",
    "opening_stands",
    "opening_step",
    "rally_site",
    "rally_step",
    "mine_sync_need",
    "mine_unlock",
    "mine_sync_helpers",
    "mine_sync_site",
    "mine_sync_step",
]
