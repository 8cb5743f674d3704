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

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compass.core.family import get_family
from compass.core.types import AgentView
from compass.sandbox.runtime import candidate_executor
from compass.skills.library import SkillLibrary


@dataclass
class CheckRow:
    """One skill's check: how many observations it ran on and one message per failing observation."""

    name: str
    runs: int
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def observations_path(family: str) -> Path:
    """Where the recorded observations of a skill family live."""
    return get_family(family).observations_path


def load_observations(path: str | Path) -> list[str]:
    """Observation texts from a JSONL file (``{"text": ...}`` per line; blank lines skipped)."""
    texts = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                texts.append(json.loads(line)["text"])
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{n}: not an observation record ({e})") from None
    return texts


def check_library(
    lib: SkillLibrary, observations: Sequence[str] | None = None, seed: int = 0, isolation: str = "process"
) -> list[CheckRow]:
    """Run every compiled skill of ``lib`` on recorded observations; one row per skill, by name.

    ``observations`` are texts; by default the family's recorded file. A family without recorded
    observations (or without a text parser) is checked for compilation only (``runs == 0``).
    """
    views = _views(lib.family, observations)
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


def check_compiled(
    compiled, family: str, limit: int | None = None, seed: int = 0, isolation: str = "process"
) -> list[str]:
    """Run one compiled skill on the family's recorded observations (as ``check_library`` does,
    in the candidate executor: a hang or a crash is a reported failure); one message per failure."""
    views = _views(family, None)[:limit]
    if not views:
        return []
    with candidate_executor(get_family(family).skill_api, seed, isolation) as executor:
        results = executor.run_batch([(compiled, view) for view in views])
    return [
        f"observation {k} (step {view.step}, agent {view.agent_id}): [{r.error.kind}] {r.error}"
        for k, (view, r) in enumerate(zip(views, results, strict=True))
        if r.error is not None
    ]


def _views(family: str, observations: Sequence[str] | None) -> list[AgentView]:
    fam = get_family(family)
    if observations is None:
        if not fam.observations_path.exists():
            return []
        observations = load_observations(fam.observations_path)
    return [fam.view_from_text(t) for t in observations]
