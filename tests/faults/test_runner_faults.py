"""The runner contains whatever escapes one agent's decision: the others and the episode go on,
the failure is counted in the episode result and recorded in the trace."""

from __future__ import annotations

import asyncio

from compass.config import RunConfig
from compass.episode.runner import EpisodeRunner
from compass.episode.trace import RunWriter, read_trace
from compass.planner.base import Decision, DecisionContext, LibraryPlanner
from compass.skills.library import SkillLibrary


class FlakyPlanner(LibraryPlanner):
    """Agent 2 raises at every decision; agent 3 names a skill that does not exist."""

    async def decide(self, ctx: DecisionContext) -> Decision:
        if ctx.agent_id == 2:
            raise ZeroDivisionError("agent 2's planner broke")
        if ctx.agent_id == 3 and ctx.step > 0:
            return Decision("no_such_skill", "x")
        return await super().decide(ctx)


def test_one_agent_failing_does_not_end_the_episode(tmp_path, smax_protoss, monkeypatch):
    monkeypatch.setattr(smax_protoss, "max_steps", 10)
    planner = FlakyPlanner(SkillLibrary(None, "combat"))
    writer = RunWriter(tmp_path / "run")
    cfg = RunConfig(decision_interval=4)
    result = asyncio.run(EpisodeRunner(smax_protoss, planner, cfg, writer).run_episode(0, 0))
    writer.close()
    assert result.steps == 10
    trace = read_trace(tmp_path / "run")
    decisions = [r for r in trace if r["kind"] == "decision"]
    failed = [d for d in decisions if any(rec.get("kind") == "decision_error" for rec in d["records"])]
    assert {d["agent"] for d in failed} == {2, 3}
    assert result.decision_errors == len(failed) >= 4  # agent 2 at steps 0, 4, 8; agent 3 at 4, 8
    # Agent 2 still plays (the best retrieval for the task), agent 3 keeps its skill.
    steps = [r for r in trace if r["kind"] == "step"]
    assert steps[0]["skills"][2] is not None and steps[0]["skills"][3] is not None
    assert all(d["skill"] in planner.library for d in decisions)
    error = next(rec for d in failed if d["agent"] == 2 for rec in d["records"])
    assert error["error"] == "ZeroDivisionError: agent 2's planner broke"
    end = next(r for r in trace if r["kind"] == "episode_end")
    assert end["decision_errors"] == result.decision_errors
