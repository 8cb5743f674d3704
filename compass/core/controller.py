"""Unit controllers: what drives units that no compass planner drives (either team).

A controller owns some units of one team and returns one action per owned, living unit each step,
in the family's action vocabulary and in that team's own frame (for combat: SMACv2 indices where
attack ``6 + j`` targets the team's enemy ``j``). Families provide their game-specific kinds
(SMAX's heuristic, MAPPO checkpoints) through ``GameFamily.controllers``; game-independent kinds
(random, a fixed skill, the library) live in ``compass.eval.controllers``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from compass.core.types import AgentView, MultiAgentEnv

#: team 0 is the side compass plays (agents 0..n-1); team 1 is the opposing team
ALLY, ENEMY = 0, 1


class UnitController(Protocol):
    """Drives ``units`` of ``team``; ``act`` is called once per env step with that team's views."""

    units: tuple[int, ...]

    def reset(self, seed: int) -> None:
        """Start an episode (controllers are a pure function of the seed and what they observe)."""
        ...

    def act(self, env: MultiAgentEnv, views: list[AgentView]) -> dict[int, int]:
        """``{unit: action}`` for every owned unit that is alive."""
        ...


#: ``factory(env, team, units, arg) -> UnitController``; ``arg`` is what follows ``kind:`` in a spec
ControllerFactory = Callable[[MultiAgentEnv, int, tuple[int, ...], str | None], Any]


class EpisodeStopped(Exception):
    """Raised by an external action source (the runner's ``act_external``) to end the episode now,
    recorded with ``outcome`` (a person who closed the tab: ``abandoned``)."""

    def __init__(self, outcome: str, reason: str = "") -> None:
        super().__init__(reason or outcome)
        self.outcome, self.reason = outcome, reason


@dataclass(frozen=True)
class HumanKey:
    """One action a person can take this step: the key that sends it (``KeyboardEvent.key``; empty:
    click only) and what the page shows for it. Families list them (``GameFamily.human_keys``)."""

    key: str
    action: int
    label: str
