"""ALEM scenarios by name (cheap to import: no JAX)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    """An ALEM environment name and coordination difficulty (alpha: easy 0.3, medium 0.6, hard 0.9)."""

    env_name: str
    difficulty: str
    num_levels: int = 9


SCENARIOS: dict[str, Scenario] = {
    "easy": Scenario("Alem-Coop-Symbolic", "easy"),
    "medium": Scenario("Alem-Coop-Symbolic", "medium"),
    "hard": Scenario("Alem-Coop-Symbolic", "hard"),
    # ALEM-LITE: the overworld only (the paper's MARL sweeps used this Debug variant at hard).
    "overworld": Scenario("Alem-Coop-Symbolic-Debug", "hard", num_levels=1),
}
