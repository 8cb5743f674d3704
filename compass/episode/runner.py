"""Episodes: step the environment, share entities, decide skills at decision points, run skills every step.

Decisions happen at the start, every ``decision_interval`` steps and on events (the agent's skill
failed, it sees an enemy it had not seen, an ally died). All agents that must decide in a round
decide concurrently; between decisions each agent's skill runs every step in the sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compass.config import RunConfig, default_task
from compass.core.controller import EpisodeStopped
from compass.core.family import get_family
from compass.core.types import EVENTS, AgentView, MultiAgentEnv
from compass.episode.trace import TraceSink
from compass.planner.base import Decision, DecisionContext, Planner
from compass.sandbox.executors import pooled_executor
from compass.vlm.errors import VLMFatalError

log = logging.getLogger(__name__)


@dataclass
class AgentState:
    """What the runner tracks per agent between steps."""

    skill: str | None = None
    subtask: str | None = None
    last_decision: int = -1
    reward_since: float = 0.0
    seen_enemies: set[int] = field(default_factory=set)
    pending_error: Any = None


@dataclass
class EpisodeResult:
    episode: int
    seed: int
    outcome: str
    ret: float
    steps: int
    skill_errors: int
    decisions: int
    skills_used: dict[str, int]
    extra: dict[str, Any] = field(default_factory=dict)
    decision_errors: int = 0  # decisions that failed and kept the agent's skill (see the trace)

    def as_dict(self) -> dict[str, Any]:
        return {
            "episode": self.episode,
            "seed": self.seed,
            "outcome": self.outcome,
            "return": round(self.ret, 6),
            "steps": self.steps,
            "skill_errors": self.skill_errors,
            "decisions": self.decisions,
            "decision_errors": self.decision_errors,
            "skills_used": self.skills_used,
            **self.extra,
        }


class EpisodeRunner:
    """Plays episodes of one environment with one planner, writing to one run directory."""

    def __init__(
        self,
        env: MultiAgentEnv,
        planner: Planner,
        cfg: RunConfig,
        writer: TraceSink,
        comm: Any = None,
        on_step: Any = None,
        external: frozenset[int] = frozenset(),
        recorder: Any = None,
        act_external: Any = None,
    ) -> None:
        self.env = env
        self.planner = planner
        self.library = planner.library
        self.cfg = cfg
        self.writer = writer
        self.comm = comm
        self.on_step = on_step
        # Agents whose actions come from elsewhere (compass.eval.controllers.TeamEnv): no decisions, no skills.
        self.external = external
        # recorder(episode, seed) -> compass.episode.recording.EpisodeRecorder: video/trajectory streamed per step
        self.recorder = recorder
        # act_external(episode, t, views) -> {agent: action}: awaited each step for external agents
        # (a person in `compass play`); its actions are the ones traced. It may raise EpisodeStopped.
        self.act_external = act_external
        self.last_recording: dict[str, Any] | None = None
        self.task = cfg.task or default_task(env.family)

    def _trace_vlm_calls(self, episode: int, t: int, agent: int, decision: Decision) -> None:
        """One top-level ``kind: "vlm"`` line per VLM call of a decision, so ``--vlm replay:RUN_DIR``
        can answer from this trace (the full records stay in the decision line)."""
        for r in decision.records:
            if r.get("kind") == "vlm":
                line = {
                    "kind": "vlm",
                    "episode": episode,
                    "t": t,
                    "agent": agent,
                    "module": r.get("module"),
                    "tag": r.get("tag"),
                    "key_prompt": r["key_prompt"],
                    "response": r["response"],
                    "prompt_tokens": r.get("prompt_tokens"),
                    "completion_tokens": r.get("completion_tokens"),
                }
                if "files" in r:  # --log-prompts: prompt, images and response under the run dir
                    line["files"] = r["files"]
                self.writer.trace(line)

    def _perceived(self, views: list[AgentView], step: int) -> list[AgentView]:
        """Each agent's view plus the entities teammates relayed to it."""
        if self.comm is None:
            return views
        self.comm.exchange(step, views)
        out = []
        for v in views:
            relayed = self.comm.relayed_for(v.agent_id, v) if v.alive else ()
            out.append(v.with_entities(v.entities + tuple(relayed)) if relayed else v)
        return out

    def _triggers(
        self, views: list[AgentView], states: list[AgentState], step: int, deaths: set[int]
    ) -> dict[int, str]:
        due: dict[int, str] = {}
        for v, s in zip(views, states, strict=True):
            if not v.alive or v.agent_id in self.external:
                continue
            new = {e.id for e in v.enemies} - s.seen_enemies
            s.seen_enemies |= new
            if s.skill is None:
                due[v.agent_id] = "start"
            elif s.pending_error is not None:
                due[v.agent_id] = "skill_error"
            elif step % self.cfg.decision_interval == 0 and step > s.last_decision:
                # On a global grid, not per agent: interval decisions of all agents share a round
                # and run concurrently even after event-triggered decisions desynchronised them.
                due[v.agent_id] = "interval"
            elif new:
                due[v.agent_id] = "new_enemy"
            elif deaths:
                due[v.agent_id] = "ally_died"
        return due

    async def _decide(
        self,
        views: list[AgentView],
        states: list[AgentState],
        due: dict[int, str],
        step: int,
        episode: int = 0,
    ) -> list[tuple[int, Decision]]:
        async def one(i: int, trigger: str) -> tuple[int, Decision]:
            s = states[i]
            ctx = DecisionContext(
                agent_id=i,
                step=step,
                view=views[i],
                task=self.task,
                trigger=trigger,
                current_skill=s.skill,
                subtask=s.subtask,
                last_error=s.pending_error,
                reward_since_decision=s.reward_since,
                scenario=self.cfg.env,
                ally_tasks=self.comm.ally_tasks_for(i) if self.comm is not None else {},
                episode=episode,
            )
            try:
                decision = await self.planner.decide(ctx)
                if decision.skill not in self.library:
                    raise LookupError(f"planner chose unknown skill {decision.skill!r}")
                return i, decision
            except VLMFatalError:
                raise  # the model is absent or a replay does not match: the run stops (exit 1)
            except Exception as exc:  # one agent's failure: the others and the episode go on
                return i, self._failed_decision(i, s, exc)

        # Started in agent-id order: planners rely on it to order library additions within a round.
        return await asyncio.gather(*(one(i, t) for i, t in sorted(due.items())))

    def _failed_decision(self, agent: int, state: AgentState, exc: Exception) -> Decision:
        """Keep the agent's skill after its decision raised (the best retrieval if it has none)."""
        error = f"{type(exc).__name__}: {exc}"
        log.warning("agent %d: decision failed (%s); keeping its skill", agent, error)
        self._decision_errors += 1
        skill = state.skill if state.skill in self.library else None
        if skill is None:
            hits = self.library.retrieve(state.subtask or self.task, k=1)
            if not hits:
                raise RuntimeError(f"skill library {self.library.dir} has no usable skills") from exc
            skill = hits[0].skill.name
        record = {"module": "runner", "kind": "decision_error", "error": error[:500], "skill": skill}
        return Decision(skill, state.subtask or self.task, [record])

    async def run_episode(self, episode: int, seed: int, progress: Any = None) -> EpisodeResult:
        env, lib = self.env, self.library
        views = env.reset(seed)
        # A warm executor from the process's pool (isolated workers start once, not per episode).
        release = contextlib.ExitStack()
        executor = release.enter_context(
            pooled_executor(
                get_family(env.family).skill_api, seed, self.cfg.isolation, self.cfg.sandbox_workers
            )
        )
        states = [AgentState() for _ in views]
        self._decision_errors = 0
        max_steps = getattr(env, "max_steps", self.cfg.max_steps or 200)
        ret, errors, decisions = 0.0, 0, 0
        used: dict[str, int] = {}
        outcome, info = "timeout", {}
        alive_before = {v.agent_id for v in views if v.alive}
        deaths: set[int] = set()
        rec = self.recorder(episode, seed) if self.recorder is not None else None
        t, stopped = 0, False
        for t in range(max_steps):
            perceived = self._perceived(views, t)
            due = self._triggers(perceived, states, t, deaths)
            if due:
                t0 = time.perf_counter()
                for i, decision in await self._decide(perceived, states, due, t, episode):
                    s = states[i]
                    if decision.skill != s.skill:
                        s.reward_since = 0.0  # reflection judges a skill's whole execution
                    s.skill, s.subtask, s.last_decision = decision.skill, decision.subtask, t
                    s.pending_error = None
                    decisions += 1
                    if self.comm is not None:
                        self.comm.post_intent(i, t, decision.subtask, decision.skill)
                    self._trace_vlm_calls(episode, t, i, decision)
                    self.writer.trace(
                        {
                            "kind": "decision",
                            "episode": episode,
                            "t": t,
                            "agent": i,
                            "trigger": due[i],
                            "skill": decision.skill,
                            "code_hash": lib.compiled[decision.skill].code_hash,
                            "subtask": decision.subtask,
                            "records": decision.records,
                        }
                    )
                self.writer.timing(
                    {
                        "kind": "decision_round",
                        "episode": episode,
                        "t": t,
                        "agents": len(due),
                        "seconds": round(time.perf_counter() - t0, 6),
                    }
                )
            actions, step_errors, skills = [], [], []
            # All living agents' skill calls of this step in one batch (one round trip when isolated).
            batch = [
                (lib.compiled[s.skill], v)
                for v, s in zip(perceived, states, strict=True)
                if v.alive and v.agent_id not in self.external
            ]
            batch_results = iter(executor.run_batch(batch))
            for v, s in zip(perceived, states, strict=True):
                if not v.alive or v.agent_id in self.external:
                    actions.append(0)
                    skills.append(None)
                    continue
                result = next(batch_results)
                actions.append(result.action)
                skills.append(s.skill)
                used[s.skill] = used.get(s.skill, 0) + 1
                if result.error is not None:
                    errors += 1
                    s.pending_error = result.error
                    lib.record_use(s.skill, errors=1)
                    step_errors.append(
                        {
                            "agent": v.agent_id,
                            "skill": s.skill,
                            "kind": result.error.kind,
                            "message": str(result.error),
                            "traceback": result.error.traceback,
                        }
                    )
            if self.act_external is not None:
                try:
                    for u, a in (await self.act_external(episode, t, perceived)).items():
                        actions[u] = int(a)
                except EpisodeStopped as stop:
                    outcome, stopped = stop.outcome, True
                    break
            res = env.step(actions)
            reward = float(np.mean(res.rewards)) if res.rewards else 0.0
            ret += reward
            for s in states:
                s.reward_since += reward
            self.planner.observe_step(episode, t, perceived, reward)
            record = {
                "kind": "step",
                "episode": episode,
                "t": t,
                "actions": actions,
                "skills": skills,
                "reward": round(reward, 6),
            }
            if step_errors:
                record["errors"] = step_errors
            if res.info.get(EVENTS):  # kills and the like, as the family reports them (viewer jump targets)
                record["events"] = list(res.info[EVENTS])
            self.writer.trace(record)
            if self.on_step is not None:
                self.on_step(episode, t, res)
            views = res.views
            alive_now = {v.agent_id for v in views if v.alive}
            deaths = alive_before - alive_now
            alive_before = alive_now
            if rec is not None:
                rec.step(t, perceived, actions, skills, res)
            if progress is not None:
                progress()
            if res.done:
                outcome, info = res.outcome, res.info
                break
        release.close()
        if rec is not None:
            self.last_recording = rec.finish(outcome)
        steps = t if stopped else t + 1  # a stopped step was not played
        for name, n in used.items():
            lib.record_use(name, uses=n)
        extra = {k: v for k, v in info.items() if isinstance(v, (int, float, bool, str))}
        if self.comm is not None:
            extra["comm"] = self.comm.stats()
        result = EpisodeResult(
            episode,
            seed,
            outcome,
            ret,
            steps,
            errors,
            decisions,
            dict(sorted(used.items())),
            extra,
            self._decision_errors,
        )
        self.writer.trace({"kind": "episode_end", **result.as_dict()})
        self.writer.flush()
        return result
