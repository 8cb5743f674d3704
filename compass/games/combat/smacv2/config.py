"""SMACv2's race scenarios as ``StarCraftCapabilityEnvWrapper`` keyword arguments, and its unit tables.

The values follow smacv2's own ``sc2_gen_<race>.yaml`` configs (the paper's Table 3 runs them at 5v5
and 5v6): unit types drawn per episode by ``weighted_teams`` with race weights, start positions by
``surrounded_and_reflect``, unit-specific sight and shoot ranges, and ``prob_obs_enemy``/``action_mask``
for (extended) partial observability.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compass.games.combat.scenarios import CombatScenario


@dataclass(frozen=True)
class RaceTeams:
    """One race's unit pool as smacv2's ``weighted_teams`` distribution takes it."""

    unit_types: tuple[str, ...]
    weights: tuple[float, ...]
    # Types that may not make up a whole team (a team of only medivacs cannot fight).
    exceptions: tuple[str, ...] = ()


SMACV2_RACES: dict[str, RaceTeams] = {
    "protoss": RaceTeams(("stalker", "zealot", "colossus"), (0.45, 0.45, 0.1)),
    "terran": RaceTeams(("marine", "marauder", "medivac"), (0.45, 0.45, 0.1), ("medivac",)),
    "zerg": RaceTeams(("zergling", "baneling", "hydralisk"), (0.45, 0.1, 0.45), ("baneling",)),
}

# StarCraft II's own unit type ids (pysc2.lib.units), which smacv2 gives enemy units; ally units are
# the map's RL copies, whose ids smacv2 keeps in ``ally_unit_map`` / ``<name>_id``.
SC2_UNIT_TYPE_IDS: dict[str, int] = {
    "colossus": 4,
    "baneling": 9,
    "marine": 48,
    "marauder": 51,
    "medivac": 54,
    "zealot": 73,
    "stalker": 74,
    "zergling": 105,
    "hydralisk": 107,
}
SMACV2_UNIT_NAMES = tuple(sorted(SC2_UNIT_TYPE_IDS))

# smacv2's ranges with use_unit_ranges=True (min_attack_range=2 lifts melee ranges to 2). The adapter
# asks the env for its agents' ranges; these only fill in enemies' rings in frames.
SIGHT_RANGE = {
    "stalker": 10,
    "zealot": 9,
    "colossus": 10,
    "zergling": 8,
    "baneling": 8,
    "hydralisk": 9,
    "marine": 9,
    "marauder": 10,
    "medivac": 11,
}
SHOOT_RANGE = {
    "stalker": 6,
    "zealot": 0.1,
    "colossus": 7,
    "zergling": 0.1,
    "baneling": 0.25,
    "hydralisk": 5,
    "marine": 5,
    "marauder": 6,
    "medivac": 4,
}
MIN_ATTACK_RANGE = 2
MAP_SIZE = 32


def shoot_range(unit_type: str) -> float:
    """A unit type's shoot range as smacv2 applies it (never below ``MIN_ATTACK_RANGE``)."""
    return float(max(SHOOT_RANGE.get(unit_type, 6), MIN_ATTACK_RANGE))


def capability_config(spec: CombatScenario) -> dict[str, Any]:
    """The ``capability_config`` of one race scenario (a fresh dict: smacv2 edits it in place)."""
    race = SMACV2_RACES[spec.race]
    team_gen: dict[str, Any] = {
        "dist_type": "weighted_teams",
        "unit_types": list(race.unit_types),
        "weights": list(race.weights),
        "observe": True,
    }
    if race.exceptions:
        team_gen["exception_unit_types"] = list(race.exceptions)
    return {
        "n_units": spec.n_allies,
        "n_enemies": spec.n_enemies,
        "team_gen": team_gen,
        "start_positions": {
            "dist_type": "surrounded_and_reflect",
            "p": 0.5,
            "map_x": MAP_SIZE,
            "map_y": MAP_SIZE,
        },
    }


def env_kwargs(
    spec: CombatScenario,
    *,
    prob_obs_enemy: float,
    action_mask: bool,
    seed: int | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Keyword arguments for ``StarCraftCapabilityEnvWrapper`` (= ``StarCraft2Env``) for a scenario."""
    kwargs: dict[str, Any] = {
        "map_name": f"10gen_{spec.race}",
        "capability_config": capability_config(spec),
        "use_unit_ranges": True,
        "min_attack_range": MIN_ATTACK_RANGE,
        "obs_own_pos": True,
        "conic_fov": False,
        "fully_observable": False,
        "prob_obs_enemy": float(prob_obs_enemy),
        "action_mask": bool(action_mask),
        "step_mul": 8,
        "move_amount": 2,
        "difficulty": "7",
        "seed": seed,
    }
    kwargs.update(overrides)
    return kwargs
