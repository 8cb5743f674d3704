"""What the VLM planner remembers per agent, and the ordering of library additions per round."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from compass.planner.local_memory import LocalMemory
from compass.planner.parsing import Perception, Reflection


@dataclass
class FrameRecord:
    """One step of a skill's execution: a caption now, a frame only if someone asks for it."""

    step: int
    caption: str
    render: Callable[[], object] | None = None  # the view's lazy frame()
    png: bytes | None = None  # set when the frame was already encoded (decision points)


@dataclass
class AgentMemory:
    """One agent's planner state within an episode.

    ``local`` (the project's :class:`~compass.planner.local_memory.LocalMemory`) keeps the bounded histories
    (rewards, sub-tasks, reflections, frame records); the fields hold the latest decision.
    """

    local: LocalMemory = field(default_factory=lambda: LocalMemory(capacity=64, frame_capacity=16))
    skill: str | None = None
    subtask: str | None = None
    skill_since: int = -1  # step the current skill was chosen (kept decisions do not move it)
    planned_at: int = -1  # step of the last decision that consulted the VLM
    reasoning: str = ""  # Task Reasoning's reasoning for the current sub-task
    perception: Perception | None = None  # at the last decision (the reflection's "before")
    reflection: Reflection | None = None
    start_frame: FrameRecord | None = None  # the moment the current skill was chosen
    syntheses: int = 0
    broken: set[str] = field(default_factory=set)  # skills that failed and could not be repaired

    def frames_since_decision(self) -> list[FrameRecord]:
        """Recorded steps of the current skill's execution (oldest first), start frame included."""
        recent = [e.value for e in self.local.entries("frame") if e.step > self.skill_since]
        return ([self.start_frame] if self.start_frame else []) + recent

    def reward_since_skill(self) -> float | None:
        """Reward summed since the current skill was chosen (None if no step was observed)."""
        entries = [e for e in self.local.entries("reward") if e.step >= self.skill_since]
        return sum(e.value for e in entries) if entries else None

    def history(self, n: int = 3) -> str:
        """The last ``n`` sub-tasks and reflections, one short line each (the prompts' history)."""
        items = [(e.step, 0, f"sub-task: {e.value}") for e in self.local.entries("subtask", n)]
        items += [(e.step, 1, f"reflection: {e.value}") for e in self.local.entries("reflection", n)]
        return "\n".join(f"step {step}: {text}" for step, _, text in sorted(items)) or "None."


class CommitOrder:
    """Library additions within one decision round happen in agent-id order.

    Agents decide concurrently and their answers arrive in any order; if additions happened in
    arrival order, ``_v2`` suffixes and what retrieval sees would depend on network timing and the
    trace would not be reproducible. Each agent :meth:`enter` s synchronously when its decision
    starts (the runner starts them in id order), :meth:`wait_turn` s before adding a skill, and
    :meth:`release` s after adding one or when its decision ends.
    """

    def __init__(self) -> None:
        self._round: tuple[int, int] | None = None
        self._done: dict[int, asyncio.Event] = {}

    def enter(self, round_key: tuple[int, int], agent: int) -> None:
        if round_key != self._round:
            self._round, self._done = round_key, {}
        self._done[agent] = asyncio.Event()

    async def wait_turn(self, round_key: tuple[int, int], agent: int) -> None:
        if round_key != self._round:
            return
        for other, event in sorted(self._done.items()):
            if other < agent:
                await event.wait()

    def release(self, round_key: tuple[int, int], agent: int) -> None:
        if round_key == self._round and agent in self._done:
            self._done[agent].set()
