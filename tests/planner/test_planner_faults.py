"""One agent's bad reply or failure never ends the decision loop: it is a recorded rejection."""

from __future__ import annotations

import pytest

from compass.planner.vlm_planner import PlannerSettings
from tests.planner.conftest import make_ctx
from tests.planner.scripted import ScriptedVLM


class PoisonSynthesis(ScriptedVLM):
    """Asks for a new skill, then answers Skill Synthesis with ``poison``."""

    def __init__(self, poison: str) -> None:
        super().__init__(synth_agent=0)
        self.poison = poison

    def skill_synthesis(self, prompt: str) -> str:
        return f"##Skill_generation##:\n```python\ndef score_target(unit):\n    return {self.poison}\n```"


@pytest.mark.parametrize(
    ("poison", "cause"),
    [
        ("'\ud800'", "encoding"),
        ("+".join(["1"] * 20_000), "recursion"),
        ("'unterminated", "syntax"),
    ],
)
async def test_poisoned_synthesis_is_a_recorded_rejection(make_planner, library, poison, cause):
    planner, _ = make_planner(PoisonSynthesis(poison))
    before = set(library.names())
    decision = await planner.decide(make_ctx())
    assert decision.skill in library  # the agent still got a skill
    rejected = [r for r in decision.records if r.get("kind") == "rejected"]
    assert rejected and rejected[0]["module"] == "skill_synthesis" and rejected[0]["cause"] == cause
    assert planner.usage_for_episode(0)["events"]["synthesis_rejected"] == 1
    assert set(library.names()) == before  # nothing half-made reached the library


async def test_a_failing_decision_keeps_the_skill_and_is_counted(make_planner, library, monkeypatch):
    planner, _ = make_planner(
        ScriptedVLM(synth_agent=None),
        settings=PlannerSettings(continue_on_success=False, skip_actor_when_fits=False),
    )
    calls = {"n": 0}
    real = library.retrieve

    def flaky(query, k=5):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("index file vanished")
        return real(query, k)

    monkeypatch.setattr(library, "retrieve", flaky)
    ctx = make_ctx(current_skill="focus_fire", trigger="interval", step=8)
    decision = await planner.decide(ctx)
    assert decision.skill == "focus_fire"
    errors = [r for r in decision.records if r.get("kind") == "error"]
    assert errors and "OSError: index file vanished" in errors[0]["error"]
    assert planner.usage_for_episode(0)["events"]["decision_errors"] == 1
