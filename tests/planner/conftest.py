"""Fixtures for the VLM planner tests: hand-made combat views, a scratch library, fake VLMs."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from compass.core.family import get_family  # noqa: E402
from compass.core.types import AgentView, Entity, OwnUnit  # noqa: E402
from compass.games.combat.text import CombatObs, render_combat_text  # noqa: E402
from compass.planner.base import DecisionContext  # noqa: E402
from compass.planner.vlm_planner import PlannerSettings, VLMPlanner  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402
from compass.vlm import FakeBackend, VLMClient, VLMConfig, VLMRequest  # noqa: E402
from compass.vlm import tokens as vlm_tokens  # noqa: E402
from tests.fakes.fake_vlm_server import fake_vlm_server  # noqa: E402, F401 - fixture re-export
from tests.planner.scripted import ScriptedVLM  # noqa: E402

SIGHT, SHOOT = 9.0, 6.0


@pytest.fixture(autouse=True)
def _offline_and_keyless(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real keys leak in, and token counting never tries to download BPE files."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(vlm_tokens, "_encoding", lambda name: None)


def _entity(
    eid: int,
    x: float,
    y: float,
    ox: float,
    oy: float,
    team: str = "enemy",
    unit_type: str = "zealot",
    health: float = 1.0,
    visible: bool = True,
) -> Entity:
    e = Entity(
        id=eid,
        team=team,
        unit_type=unit_type,
        x=x,
        y=y,
        rel_x=0,
        rel_y=0,
        distance=0,
        health=health,
        visible=visible,
        source=None if visible else 2,
        hops=0 if visible else 1,
    )
    return e.relative_to(ox, oy, SIGHT, SHOOT)


def make_view(agent_id: int = 0, step: int = 5, enemies: bool = True, relayed: bool = False) -> AgentView:
    """A stalker at (16, 16) of a 32x32 map with two zealots in range and one ally."""
    x, y = 16.0, 16.0
    own = OwnUnit(
        unit_type="stalker",
        x=x,
        y=y,
        health=0.8,
        sight_range=SIGHT,
        attack_range=SHOOT,
        last_action=1,
        map_width=32.0,
        map_height=32.0,
    )
    ents = [_entity(1, 18.0, 16.0, x, y, team="ally", unit_type="stalker")]
    if enemies:
        ents += [_entity(0, 20.0, 17.0, x, y, health=0.6), _entity(3, 19.0, 13.0, x, y)]
    if relayed:
        ents.append(_entity(4, 27.0, 27.0, x, y, visible=False))
    avail = [1, 2, 3, 4, 5] + [6 + e.id for e in ents if e.team == "enemy" and e.can_attack]
    view = AgentView(
        agent_id=agent_id,
        family="combat",
        step=step,
        alive=True,
        own=own,
        entities=tuple(ents),
        avail_actions=tuple(avail),
        text="",
        obs=CombatObs(shield=0.5, weapon_cooldown=0.0),
        text_fn=render_combat_text,
    )
    view.text = render_combat_text(view)

    def render(v: AgentView) -> Any:
        import numpy as np

        return np.full((24, 24, 3), 40 + v.agent_id + v.step, dtype=np.uint8)

    view.render = render
    return view


def make_ctx(view: AgentView | None = None, **overrides: Any) -> DecisionContext:
    view = view or make_view()
    fields: dict[str, Any] = dict(
        agent_id=view.agent_id,
        step=view.step,
        view=view,
        task="Defeat all enemy units",
        trigger="start",
        scenario="smax:protoss_5_vs_5",
    )
    fields.update(overrides)
    return DecisionContext(**fields)


@pytest.fixture
def library(tmp_path: Path) -> SkillLibrary:
    """A scratch copy of the shipped combat library (tests add skills to it)."""
    root = tmp_path / "lib"
    shutil.copytree(
        get_family("combat").seed_skills_dir, root / "combat", ignore=shutil.ignore_patterns("_stats.json")
    )
    return SkillLibrary(root, "combat")


Responder = Callable[[VLMRequest], Any]


@pytest.fixture
def make_planner(library: SkillLibrary) -> Callable[..., tuple[VLMPlanner, FakeBackend]]:
    """``make_planner(responder=ScriptedVLM(), **kwargs)``: a planner over an in-process fake backend."""

    def make(
        responder: Responder | ScriptedVLM | str | None = None,
        settings: PlannerSettings | None = None,
        **kwargs: Any,
    ) -> tuple[VLMPlanner, FakeBackend]:
        if responder is None:
            responder = ScriptedVLM()
        if isinstance(responder, ScriptedVLM):
            script = responder
            responder = lambda req: script(req.prompt)  # noqa: E731
        backend = FakeBackend(responder)
        client = VLMClient(backend, VLMConfig(max_retries=0, backoff_base_s=0.0))
        return VLMPlanner(library, client, settings=settings, **kwargs), backend

    return make
