"""A family's recorded observations and running one compiled skill on them.

Below :mod:`compass.skills.library` (which checks an edited skill here) and
:mod:`compass.skills.check` (which checks a whole library), so neither imports the other back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from compass.core.family import get_family
from compass.core.types import AgentView
from compass.sandbox.executors import candidate_executor


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


def check_compiled(
    compiled, family: str, limit: int | None = None, seed: int = 0, isolation: str = "process"
) -> list[str]:
    """Run one compiled skill on the family's recorded observations (as ``check_library`` does,
    in the candidate executor: a hang or a crash is a reported failure); one message per failure."""
    views = recorded_views(family)[:limit]
    if not views:
        return []
    with candidate_executor(get_family(family).skill_api, seed, isolation) as executor:
        results = executor.run_batch([(compiled, view) for view in views])
    return [
        f"observation {k} (step {view.step}, agent {view.agent_id}): [{r.error.kind}] {r.error}"
        for k, (view, r) in enumerate(zip(views, results, strict=True))
        if r.error is not None
    ]


def recorded_views(family: str, observations: Sequence[str] | None = None) -> list[AgentView]:
    """``observations`` (texts; default: the family's recorded file) as the views skills run on."""
    fam = get_family(family)
    if observations is None:
        if not fam.observations_path.exists():
            return []
        observations = load_observations(fam.observations_path)
    return [fam.view_from_text(t) for t in observations]
