"""Combat scenarios in the spirit of SMACv2's race maps, and their unit-type sampler.

SMACv2 draws each team's unit types per episode with race-specific weights and mirrors the ally
team's types on the enemy side (extra enemies drawn from the same weights). SMAX has two unit
types per race (no colossus, medivac or baneling), so each race draws from its two with equal
weight.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SMAX_UNIT_TYPES = ("marine", "marauder", "stalker", "zealot", "zergling", "hydralisk")

RACE_UNIT_TYPES: dict[str, tuple[str, ...]] = {
    "protoss": ("stalker", "zealot"),
    "terran": ("marine", "marauder"),
    "zerg": ("zergling", "hydralisk"),
}


@dataclass(frozen=True)
class CombatScenario:
    """A race matchup: ``n_allies`` agents against ``n_enemies`` enemies of the same race."""

    name: str
    race: str
    n_allies: int
    n_enemies: int

    def sample_unit_types(self, rng: np.random.Generator) -> tuple[list[str], list[str]]:
        """Draw ally types, mirror them on the enemy team, draw extra enemies independently."""
        pool = RACE_UNIT_TYPES[self.race]
        allies = [pool[i] for i in rng.integers(0, len(pool), size=self.n_allies)]
        extra = [pool[i] for i in rng.integers(0, len(pool), size=max(0, self.n_enemies - self.n_allies))]
        enemies = (allies + extra)[: self.n_enemies]
        return allies, enemies


SCENARIOS: dict[str, CombatScenario] = {
    f"{race}_{a}_vs_{e}": CombatScenario(f"{race}_{a}_vs_{e}", race, a, e)
    for race in RACE_UNIT_TYPES
    for a, e in ((5, 5), (5, 6), (10, 10), (10, 11))
}


def get_scenario(name: str) -> CombatScenario:
    """Look a scenario up by name; an unknown name lists the valid ones."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"unknown combat scenario {name!r}; valid: {', '.join(sorted(SCENARIOS))}") from None
