"""Episodes: step the environment, share entities, decide skills at decision points, run skills every step.

Decisions happen at the start, every ``decision_interval`` steps and on events (the agent's skill
failed, it sees an enemy it had not seen, an ally died). All agents that must decide in a round
decide concurrently; between decisions each agent's skill runs every step in the sandbox.
"""

from __future__ import annotations

import asyncio
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
from compass.sandbox.executors import pooled_executor, resolve_parts_from
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
    ) -> tuple[list[tuple[int, Decision]], int]:
        """Ask the planner for each due agent's decision; the decisions and how many failed."""
        failed = 0

        async def one(i: int, trigger: str) -> tuple[int, Decision]:
            nonlocal failed
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
                failed += 1
                return i, self._failed_decision(i, s, exc)

        # Started in agent-id order: planners rely on it to order library additions within a round.
        decided = await asyncio.gather(*(one(i, t) for i, t in sorted(due.items())))
        return decided, failed

    def _failed_decision(self, agent: int, state: AgentState, exc: Exception) -> Decision:
        """Keep the agent's skill after its decision raised (the best retrieval if it has none)."""
        error = f"{type(exc).__name__}: {exc}"
        log.warning("agent %d: decision failed (%s); keeping its skill", agent, error)
        skill = state.skill if state.skill in self.library else None
        if skill is None:
            hits = self.library.retrieve(state.subtask or self.task, k=1)
            if not hits:
                raise RuntimeError(f"skill library {self.library.dir} has no usable skills") from exc
            skill = hits[0].skill.name
        record = {"module": "runner", "kind": "decision_error", "error": error[:500], "skill": skill}
        return Decision(skill, state.subtask or self.task, [record])

    async def run_episode(self, episode: int, seed: int, progress: Any = None) -> EpisodeResult:
        ep = _Episode(self, episode, seed, progress)
        # A warm executor from the process's pool (isolated workers start once, not per episode).
        with pooled_executor(
            get_family(self.env.family).skill_api,
            seed,
            self.cfg.isolation,
            self.cfg.sandbox_workers,
            _parts_from(self.cfg),
        ) as executor:
            for t in range(ep.max_steps):
                batch = await ep.prepare(t)
                actions = ep.act(executor.run_batch(batch))
                if self.act_external is not None:
                    try:
                        for u, a in (await self.act_external(episode, t, ep.perceived)).items():
                            actions[u] = int(a)
                    except EpisodeStopped as stop:
                        ep.stop(stop.outcome)
                        break
                if ep.stepped(self.env.step(actions)):
                    break
        return ep.finish()


class _Episode:
    """One episode's state between steps, split at the two points a batch of episodes shares:
    the sandbox batch (:meth:`prepare` gives its items, :meth:`act` takes their results) and the
    env step (:meth:`stepped` takes its result). :meth:`EpisodeRunner.run_episode` plays one;
    :func:`run_batched` plays several in lockstep, with one sandbox batch and one env step for all."""

    def __init__(self, runner: EpisodeRunner, episode: int, seed: int, progress: Any = None) -> None:
        self.r, self.episode, self.seed, self.progress = runner, episode, seed, progress
        env = runner.env
        self.views = env.reset(seed)
        self.states = [AgentState() for _ in self.views]
        self.decision_errors = 0
        self.max_steps = getattr(env, "max_steps", runner.cfg.max_steps or 200)
        self.ret, self.errors, self.decisions = 0.0, 0, 0
        self.used: dict[str, int] = {}
        self.outcome, self.info = "timeout", {}
        self.alive_before = {v.agent_id for v in self.views if v.alive}
        self.deaths: set[int] = set()
        self.rec = runner.recorder(episode, seed) if runner.recorder is not None else None
        self.t, self.stopped = 0, False
        self.perceived: list[AgentView] = []
        self.step_errors: list[dict] = []
        self.skills: list[str | None] = []

    async def prepare(self, t: int) -> list[tuple[Any, AgentView]]:
        """Step ``t``'s perception and decisions; the sandbox items (skill, view) of its living agents."""
        r, states, lib, episode = self.r, self.states, self.r.library, self.episode
        self.t = t
        perceived = self.perceived = r._perceived(self.views, t)
        due = r._triggers(perceived, states, t, self.deaths)
        if due:
            t0 = time.perf_counter()
            decided, failed = await r._decide(perceived, states, due, t, episode)
            self.decision_errors += failed
            for i, decision in decided:
                s = states[i]
                if decision.skill != s.skill:
                    s.reward_since = 0.0  # reflection judges a skill's whole execution
                s.skill, s.subtask, s.last_decision = decision.skill, decision.subtask, t
                s.pending_error = None
                self.decisions += 1
                if r.comm is not None:
                    r.comm.post_intent(i, t, decision.subtask, decision.skill)
                r._trace_vlm_calls(episode, t, i, decision)
                r.writer.trace(
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
            r.writer.timing(
                {
                    "kind": "decision_round",
                    "episode": episode,
                    "t": t,
                    "agents": len(due),
                    "seconds": round(time.perf_counter() - t0, 6),
                }
            )
        # All living agents' skill calls of this step in one batch (one round trip when isolated).
        return [
            (lib.compiled[s.skill], v)
            for v, s in zip(perceived, states, strict=True)
            if v.alive and v.agent_id not in r.external
        ]

    def act(self, batch_results: list[Any]) -> list[int]:
        """The step's actions from the results of :meth:`prepare`'s items (in their order)."""
        r, lib, used = self.r, self.r.library, self.used
        actions: list[int] = []
        self.step_errors, self.skills = [], []
        results = iter(batch_results)
        for v, s in zip(self.perceived, self.states, strict=True):
            if not v.alive or v.agent_id in r.external:
                actions.append(0)
                self.skills.append(None)
                continue
            result = next(results)
            actions.append(result.action)
            self.skills.append(s.skill)
            used[s.skill] = used.get(s.skill, 0) + 1
            if result.error is not None:
                self.errors += 1
                s.pending_error = result.error
                lib.record_use(s.skill, errors=1)
                self.step_errors.append(
                    {
                        "agent": v.agent_id,
                        "skill": s.skill,
                        "kind": result.error.kind,
                        "message": str(result.error),
                        "traceback": result.error.traceback,
                    }
                )
        self.actions = actions
        return actions

    def stop(self, outcome: str) -> None:
        """A person ended the episode before this step was played."""
        self.outcome, self.stopped = outcome, True

    def stepped(self, res: Any) -> bool:
        """Take the env's result of this step (with :meth:`act`'s actions); True when the episode ended."""
        r, t, actions = self.r, self.t, self.actions
        played = getattr(r.env, "played_actions", None) if r.external else None
        if played:  # external agents' actions as a team wrapper (TeamEnv) played them, not 0
            for u in r.external:
                actions[u] = played[u]
        reward = float(np.mean(res.rewards)) if res.rewards else 0.0
        self.ret += reward
        for s in self.states:
            s.reward_since += reward
        r.planner.observe_step(self.episode, t, self.perceived, reward)
        record = {
            "kind": "step",
            "episode": self.episode,
            "t": t,
            "actions": actions,
            "skills": self.skills,
            "reward": round(reward, 6),
        }
        if self.step_errors:
            record["errors"] = self.step_errors
        if res.info.get(EVENTS):  # kills and the like, as the family reports them (viewer jump targets)
            record["events"] = list(res.info[EVENTS])
        r.writer.trace(record)
        if r.on_step is not None:
            r.on_step(self.episode, t, res)
        self.views = res.views
        alive_now = {v.agent_id for v in self.views if v.alive}
        self.deaths = self.alive_before - alive_now
        self.alive_before = alive_now
        if self.rec is not None:
            self.rec.step(t, self.perceived, actions, self.skills, res)
        if self.progress is not None:
            self.progress()
        if res.done:
            self.outcome, self.info = res.outcome, res.info
            return True
        return False

    def finish(self) -> EpisodeResult:
        """The episode's result (traced as its ``episode_end``)."""
        r, lib, t = self.r, self.r.library, self.t
        if self.rec is not None:
            r.last_recording = self.rec.finish(self.outcome)
        steps = t if self.stopped else t + 1  # a stopped step was not played
        for name, n in self.used.items():
            lib.record_use(name, uses=n)
        extra = {k: v for k, v in self.info.items() if isinstance(v, (int, float, bool, str))}
        if r.comm is not None:
            extra["comm"] = r.comm.stats()
        result = EpisodeResult(
            self.episode,
            self.seed,
            self.outcome,
            self.ret,
            steps,
            self.errors,
            self.decisions,
            dict(sorted(self.used.items())),
            extra,
            self.decision_errors,
        )
        r.writer.trace({"kind": "episode_end", **result.as_dict()})
        r.writer.flush()
        return result


def _parts_from(cfg: Any) -> int | None:
    """The sandbox's ``parts_from`` for ``cfg``: ``auto`` as for one process playing episodes (a
    run; ``compass eval`` settles ``auto`` itself, knowing how many processes it plays on)."""
    return resolve_parts_from(cfg.sandbox_parts_from, players=1)


def can_batch(env: Any) -> bool:
    """Whether ``env`` steps in a batch (:class:`compass.core.types.BatchStep`)."""
    return bool(getattr(env, "can_batch", False))


async def run_batched(lanes: list[tuple[EpisodeRunner, int, int]]) -> list[EpisodeResult]:
    """Play ``(runner, episode, seed)`` lanes in lockstep: per step, every running episode's skill
    calls in one sandbox batch (one lane per episode: its own namespaces and ``random``) and one
    batched env step (:class:`compass.core.types.BatchStep`); an ended episode is frozen (its env
    gives ``step_idle()``: the batched step keeps its state) until all end. Each lane's trace
    and result are those :meth:`EpisodeRunner.run_episode` gives it alone.

    The runners' envs must share a ``batch_key`` and their configurations the sandbox settings;
    external actions (``act_external``, a person) are not batched.
    """
    first = lanes[0][0]
    if any(r.act_external is not None for r, _, _ in lanes):
        raise ValueError("episodes with external actions (a person playing) cannot be batched")
    if len({r.env.batch_key for r, _, _ in lanes}) != 1 or not all(can_batch(r.env) for r, _, _ in lanes):
        raise ValueError("batched episodes need envs that step in one batch (the same batch_key)")
    eps = [_Episode(r, episode, seed) for r, episode, seed in lanes]
    seeds = [seed for _, _, seed in lanes]
    running = list(range(len(eps)))
    cfg = first.cfg
    with pooled_executor(
        get_family(first.env.family).skill_api, seeds[0], cfg.isolation, cfg.sandbox_workers, _parts_from(cfg)
    ) as executor:
        executor.reset_lanes(seeds)
        t = 0
        while running:
            items: list[tuple[Any, AgentView]] = []
            item_lanes: list[int] = []
            counts = []
            for i in running:
                batch = await eps[i].prepare(t)
                items += batch
                item_lanes += [i] * len(batch)
                counts.append(len(batch))
            results = executor.run_batch(items, item_lanes)
            k = 0
            inputs: list[Any] = [None] * len(eps)
            for i, n in zip(running, counts, strict=True):
                inputs[i] = eps[i].r.env.step_begin(eps[i].act(results[k : k + n]))
                k += n
            for i, ep in enumerate(eps):
                if inputs[i] is None:
                    inputs[i] = ep.r.env.step_idle()
            outs = first.env.step_batch(inputs)
            still = []
            for i in running:
                ended = eps[i].stepped(eps[i].r.env.step_end(outs[i]))
                if not ended and t + 1 < eps[i].max_steps:
                    still.append(i)
            running = still
            t += 1
    return [ep.finish() for ep in eps]
