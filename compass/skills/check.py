"""``compass skills check``: run every skill of a library on recorded observations.

Loading a library already compiles every skill file in the sandbox (files that do not compile are
in ``SkillLibrary.problems``). The check then calls each compiled skill, through the same
:class:`~compass.sandbox.SkillExecutor` the runner uses, on observations recorded from real
episodes: a skill that raises, runs out of budget or returns an unavailable action on any of them
is reported with the error, so a hand edit is caught before an episode.

Observations are stored as the agents' text (``compass/data/observations/<family>.jsonl``, one
JSON object with a ``text`` field per line, written by ``benchmarks/record_observations.py``);
:func:`view_from_text` rebuilds the :class:`~compass.envs.base.AgentView` a skill runs on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compass.envs.base import AgentView, Entity, OwnUnit
from compass.envs.combat_text import ObsData, parse_combat_text, render_combat_text
from compass.sandbox import SkillExecutor
from compass.skills.library import SkillLibrary

OBSERVATIONS_DIR = Path(__file__).resolve().parents[1] / "data" / "observations"


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
    return OBSERVATIONS_DIR / f"{family}.jsonl"


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


def view_from_text(text: str) -> AgentView:
    """The combat :class:`AgentView` a text observation describes.

    Positions in the text are fractions of the map (own unit) and of the sight range (others),
    so absolute entity coordinates are rebuilt from them; everything a skill reads through
    ``parse_obs`` comes out as it would from the original view (``obs_data_from_view`` of the
    result equals ``parse_combat_text(text)``). The view's text is ``text`` itself.
    """
    d = parse_combat_text(text)
    if not d.available_actions:
        raise ValueError("not a combat observation: no 'Available actions:' line")
    own = _own_unit(d)
    entities: list[Entity] = []
    for team, units in (("enemy", d.enemies), ("ally", d.allies)):
        for u in units:
            rx, ry = u.position
            entities.append(Entity(
                id=u.id, team=team, unit_type=u.unit_type,
                x=own.x + rx * own.sight_range, y=own.y + ry * own.sight_range,
                rel_x=rx, rel_y=ry, distance=u.distance, health=u.health, shield=u.shield,
                can_attack=bool(getattr(u, "can_attack", False)), last_action=u.last_action,
                visible=u.visible, source=u.source, hops=u.hops, age=u.age))
    return AgentView(agent_id=d.agent_id, family="combat", step=d.step, alive=d.alive, own=own,
                     entities=tuple(entities), avail_actions=tuple(d.available_actions), text=text,
                     text_fn=render_combat_text)


def _own_unit(d: ObsData) -> OwnUnit:
    w, h = d.map_size
    return OwnUnit(d.own_unit_type, d.own_position[0] * w, d.own_position[1] * h, d.own_health,
                   d.own_shield, d.own_sight_range, d.own_shoot_range, d.own_weapon_cooldown,
                   d.last_action, w, h)


def check_library(lib: SkillLibrary, observations: Sequence[str] | None = None,
                  seed: int = 0) -> list[CheckRow]:
    """Run every compiled skill of ``lib`` on recorded observations; one row per skill, by name.

    ``observations`` are texts; by default the family's recorded file. A family without recorded
    observations (or without a text parser) is checked for compilation only (``runs == 0``).
    """
    views = _views(lib.family, observations)
    rows = []
    for name in sorted(lib.compiled):
        skill = lib.compiled[name]
        # A fresh executor per skill: namespaces and the seeded random stream do not leak between skills.
        executor = SkillExecutor(lib.family, seed=seed)
        row = CheckRow(name, 0)
        for k, view in enumerate(views):
            result = executor.run(skill, view)
            row.runs += 1
            if result.error is not None:
                where = f"observation {k} (step {view.step}, agent {view.agent_id}, {view.own.unit_type})"
                row.errors.append(f"{where}: [{result.error.kind}] {result.error}")
        rows.append(row)
    return rows


def _views(family: str, observations: Sequence[str] | None) -> list[AgentView]:
    if family != "combat":
        return []  # only combat observations have a text parser
    if observations is None:
        path = observations_path(family)
        if not path.exists():
            return []
        observations = load_observations(path)
    return [view_from_text(t) for t in observations]
