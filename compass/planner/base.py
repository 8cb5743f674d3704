"""The planner interface the runner calls at each agent's decision points."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from compass.core.types import AgentView
from compass.sandbox import SkillError
from compass.skills.library import SkillLibrary


@dataclass
class DecisionContext:
    """What an agent knows when it decides (the runner fills it)."""

    agent_id: int
    step: int
    view: AgentView  # includes entities relayed by teammates
    task: str  # the overall goal
    trigger: str  # start | interval | skill_error | new_enemy | ally_died
    current_skill: str | None = None
    subtask: str | None = None
    last_error: SkillError | None = None
    reward_since_decision: float = 0.0
    ally_tasks: dict[int, str] = field(default_factory=dict)
    minimap: str = ""
    memory: Any = None  # compass.planner.local_memory.LocalMemory when available
    scenario: str = ""
    episode: int = 0  # index within the run (planners keep per-episode memory and usage)


@dataclass
class Decision:
    """The chosen skill (by library name), the sub-task it serves, and trace records of how."""

    skill: str
    subtask: str
    records: list[dict[str, Any]] = field(default_factory=list)


class Planner(Protocol):
    """Anything that picks skills.

    Call order within a run: for each episode, ``decide`` for the agents due at a step (all due
    agents concurrently), then ``observe_step`` once after the joint env step; after each episode
    ``usage_for_episode``; after the last, ``usage_summary`` and finally ``aclose`` (always, also
    when the run fails).
    """

    library: SkillLibrary

    async def decide(self, ctx: DecisionContext) -> Decision: ...

    def observe_step(self, episode: int, step: int, views: list[AgentView], reward: float) -> None:
        """What each agent perceived and the team earned this step (reflection reads it)."""
        ...

    def usage_for_episode(self, episode: int) -> dict[str, Any] | None:
        """Model usage of one episode (calls, tokens, cost), or None for a planner without a model."""
        ...

    def usage_summary(self) -> dict[str, Any] | None:
        """Model usage of the whole run, or None for a planner without a model."""
        ...

    async def aclose(self) -> None:
        """Release connections and workers."""
        ...


class LibraryPlanner:
    """The paper's "initialized skill library only" mode, no VLM.

    By default each agent runs the skill the library records as best for its task (the keep gate's
    measurement, ``SkillLibrary.best_for``), else the one retrieved for it ("retrieval from the task").
    With ``skill`` every agent runs that named skill and nothing is retrieved ("named skill").
    """

    def __init__(self, library: SkillLibrary, skill: str | None = None) -> None:
        self.library = library
        self.skill = skill
        if skill is not None and skill not in library:
            names = ", ".join(library.names()) or "none"
            raise ValueError(f"--skill {skill}: no such skill in {library.dir} (skills: {names})")
        self._cache: dict[str, tuple[str, float]] = {}

    async def decide(self, ctx: DecisionContext) -> Decision:
        query = ctx.subtask or ctx.task
        if self.skill is not None:
            return Decision(self.skill, query, [{"module": "named_skill", "skill": self.skill}])
        best = self.library.best_for(query)  # measured best for this task (compass.skills.holdup)
        if best is not None:
            return Decision(best, query, [{"module": "best_for_task", "skill": best}])
        if query not in self._cache:
            hits = self.library.retrieve(query, k=1)
            if not hits:
                raise RuntimeError(f"skill library {self.library.dir} has no loadable skills")
            self._cache[query] = (hits[0].skill.name, hits[0].score)
        name, score = self._cache[query]
        return Decision(
            name, query, [{"module": "retrieval", "query": query, "skill": name, "score": round(score, 4)}]
        )

    def observe_step(self, episode: int, step: int, views: list[AgentView], reward: float) -> None:
        """Retrieval needs no history."""

    def usage_for_episode(self, episode: int) -> None:
        return None

    def usage_summary(self) -> None:
        return None

    async def aclose(self) -> None:
        """Nothing to release."""
