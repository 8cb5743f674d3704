"""``compass skills check``: run every skill of a library on recorded observations.

Loading a library already compiles every skill file in the sandbox (files that do not compile are
in ``SkillLibrary.problems``). The check then calls each compiled skill, through the same kind
of executor the runner uses (isolated workers by default), on observations recorded from real
episodes: a skill that raises, runs out of budget or returns an unavailable action on any of them
is reported with the error, so a hand edit is caught before an episode.

Observations are stored as the agents' text (the family's ``observations.jsonl``, one JSON object
with a ``text`` field per line, written by ``benchmarks/record_observations.py``); the family's
``view_from_text`` rebuilds the :class:`~compass.core.types.AgentView` a skill runs on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from compass.core.family import get_family
from compass.sandbox.executors import candidate_executor
from compass.skills.library import SkillLibrary
from compass.skills.observations import load_observations, observations_path, recorded_views

__all__ = ["CheckRow", "check_library", "load_observations", "observations_path"]


@dataclass
class CheckRow:
    """One skill's check: how many observations it ran on and one message per failing observation."""

    name: str
    runs: int
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def check_library(
    lib: SkillLibrary, observations: Sequence[str] | None = None, seed: int = 0, isolation: str = "process"
) -> list[CheckRow]:
    """Run every compiled skill of ``lib`` on recorded observations; one row per skill, by name.

    ``observations`` are texts; by default the family's recorded file. A family without recorded
    observations (or without a text parser) is checked for compilation only (``runs == 0``).
    """
    views = recorded_views(lib.family, observations)
    rows = []
    api = get_family(lib.family).skill_api
    for name in sorted(lib.compiled):
        skill = lib.compiled[name]
        row = CheckRow(name, 0)
        # Reset per skill: namespaces and the seeded random stream do not leak between skills.
        with candidate_executor(api, seed, isolation) as executor:
            results = executor.run_batch([(skill, view) for view in views]) if views else []
        for k, (view, result) in enumerate(zip(views, results, strict=True)):
            row.runs += 1
            if result.error is not None:
                where = f"observation {k} (step {view.step}, agent {view.agent_id}, {view.own.unit_type})"
                row.errors.append(f"{where}: [{result.error.kind}] {result.error}")
        rows.append(row)
    return rows
