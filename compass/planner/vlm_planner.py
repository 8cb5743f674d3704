"""``VLMPlanner``: the paper's closed loop for one agent's decision.

Perception (+ Self-Reflection, concurrently) -> Task Reasoning -> retrieval -> Skill Synthesis
(only when nothing in the library fits) -> Actor. A skill error reported by the runner goes to
iterative refinement (Skill Repair) first. Any module that yields no usable answer makes the
planner fall back (keep the current skill, or take the best retrieval), never fail the episode.

Token economy (the paper used ~0.4M tokens per episode) comes from :class:`PlannerSettings`:
skills are listed by signature + docstring, code is shown only to the modules that edit it,
event triggers right after a decision keep the skill, a successful reflection at an interval
decision keeps the skill, a fitting current skill needs no Actor call, and Synthesis runs only when
retrieval finds nothing close. ``PlannerSettings.paper()`` runs every module at every decision.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from compass.config import RunConfig
from compass.core.family import get_family
from compass.core.types import AgentView
from compass.planner.answers import structured_output
from compass.planner.base import Decision, DecisionContext
from compass.planner.memory import AgentMemory, CommitOrder, FrameRecord
from compass.planner.modules import MAX_TOKENS, NONE, ModuleCaller, Recorder, common_values, skill_listing
from compass.planner.observation import ObservationBlock, build_observation, caption
from compass.planner.parsing import (
    ActorChoice,
    NoAnswer,
    Perception,
    Reflection,
    SkillCode,
    TaskPlan,
    first_line,
    parse_actor,
    parse_perception,
    parse_reflection,
    parse_repair,
    parse_synthesis,
    parse_task,
)
from compass.planner.prompts import load_templates
from compass.planner.synthesis import (
    NESTED,
    MergeError,
    apply_fix,
    build_candidate,
    generated_name,
    nested_functions,
    set_docstring,
    try_skill,
    whole_candidate,
)
from compass.planner.usage import PlannerUsage
from compass.sandbox import SkillError
from compass.skills.library import Retrieved, SkillLibrary
from compass.skills.skill import Skill, parse_skill_source, rename_function
from compass.vlm import VLMClient, VLMConfig, VLMFatalError, to_png
from compass.vlm.prompt_log import PromptLog

log = logging.getLogger(__name__)

EVENT_TRIGGERS = ("new_enemy", "ally_died")


@dataclass(frozen=True)
class PlannerSettings:
    """Knobs of the loop; the defaults trade a little reactivity for ~4x fewer tokens."""

    retrieve_k: int = 4
    fit_threshold: float = 0.5  # retrieval cosine at which a library skill "fits" the sub-task
    event_debounce: int = 5  # new_enemy/ally_died within this many steps of a VLM decision: keep skill
    min_reflection_steps: int = 2  # a skill must have run this long to be reflected on
    reflection_frames: int = 2  # screenshots of the last execution shown to Self-Reflection
    continue_on_success: bool = True  # interval decision + successful reflection: keep the skill
    skip_actor_when_fits: bool = True  # Task Reasoning says the current skill fits: no Actor call
    max_syntheses_per_agent: int = 1  # per episode: a synthesis prompt carries a whole skill's code
    max_syntheses_per_episode: int = 3  # all agents together (the library is shared)
    max_tokens: dict[str, int] = field(default_factory=dict)  # per-module completion caps

    @classmethod
    def paper(cls) -> PlannerSettings:
        """Every module at every decision, as in the paper's Algorithm 1."""
        return cls(
            event_debounce=0,
            continue_on_success=False,
            skip_actor_when_fits=False,
            max_syntheses_per_agent=10_000,
            max_syntheses_per_episode=10_000,
            reflection_frames=3,
        )


@dataclass
class _Turn:
    """One decision in progress: context, memory, records and what was built along the way."""

    ctx: DecisionContext
    mem: AgentMemory
    rec: Recorder
    current: Skill | None
    obs: ObservationBlock | None = None

    @property
    def round(self) -> tuple[int, int]:
        return (self.ctx.episode, self.ctx.step)

    @property
    def seed(self) -> int:
        return self.ctx.episode * 1_000_003 + self.ctx.step * 101 + self.ctx.agent_id


class VLMPlanner:
    """The five-module closed-loop planner; one instance serves all agents of a run."""

    def __init__(
        self,
        library: SkillLibrary,
        client: VLMClient,
        *,
        reflection: bool = True,
        images: bool = True,
        max_repairs: int = 2,
        settings: PlannerSettings | None = None,
        isolation: str = "process",
        structured: bool = False,
        max_vlm_errors: int | None = None,
        prompt_log: PromptLog | None = None,
    ) -> None:
        self.library = library
        self.isolation = isolation  # candidates are tried through the run's executor kind
        self.client = client
        self.family = library.family
        self.synthesis = get_family(self.family).synthesis  # refine nested helpers | write whole skills
        self.reflection = reflection
        self.images = images
        self.max_repairs = max_repairs
        self.settings = settings or PlannerSettings()
        self.templates = load_templates(self.family)
        self.usage = PlannerUsage()
        self.structured = structured
        self.modules = ModuleCaller(
            client,
            self.templates,
            self.usage,
            self.settings.max_tokens,
            structured=structured,
            max_errors=max_vlm_errors,
            prompt_log=prompt_log,
        )
        # error signature -> (round it was repaired in, the repaired skill): one repair per signature
        self._repairs: dict[str, tuple[tuple[int, int], str]] = {}
        self.added: list[dict[str, Any]] = []  # skills this planner put in the library
        self._memory: dict[int, AgentMemory] = {}
        self._episode: int | None = None
        self._order = CommitOrder()
        self._born: dict[str, tuple[int, int, int]] = {}  # skill -> (episode, step, agent)
        self._helpers: dict[str, bool] = {}  # code hash -> has score_target/control_logic
        self._syntheses: dict[int, list[int]] = {}  # episode -> steps of synthesis calls
        self._library_lock = threading.Lock()  # retrieval runs in worker threads
        # compass.skills.holdup.KeepGate (``--keep-gate``): new skills are checked on recorded
        # observations and staged (used, not written) until the gate reviews them at episode end
        self.gate: Any = None

    @classmethod
    def from_config(
        cls,
        cfg: RunConfig,
        library: SkillLibrary,
        settings: PlannerSettings | None = None,
        client: VLMClient | None = None,
        run_dir: str | None = None,
    ) -> VLMPlanner:
        """The planner for ``cfg``: client from ``cfg.vlm`` (cache, concurrency) unless one is given
        (the session passes the client it already probed), output mode, ablation switches;
        ``run_dir`` receives the prompt log with ``cfg.log_prompts``."""
        if not cfg.vlm:
            raise ValueError("the VLM planner needs a VLM spec (--vlm)")
        if client is None:
            client = VLMClient.from_spec(cfg.vlm, client_config(cfg))
        if cfg.vlm_max_tokens is not None:
            settings = settings or PlannerSettings()
            caps = {m: min(n, cfg.vlm_max_tokens) for m, n in {**MAX_TOKENS, **settings.max_tokens}.items()}
            settings = replace(settings, max_tokens=caps)
        return cls(
            library,
            client,
            reflection=cfg.reflection,
            images=cfg.image,
            max_repairs=cfg.max_repairs,
            settings=settings,
            isolation=cfg.isolation,
            structured=structured_output(cfg.vlm_output, client.backend),
            max_vlm_errors=cfg.max_vlm_errors,
            prompt_log=PromptLog(run_dir) if cfg.log_prompts and run_dir is not None else None,
        )

    # --- runner hooks -----------------------------------------------------------------------

    async def decide(self, ctx: DecisionContext) -> Decision:
        """Run the loop for one agent; returns a library skill and its sub-task, with records."""
        mem = self._agent(ctx.episode, ctx.agent_id)
        who = f"agent {ctx.agent_id} ep {ctx.episode} t={ctx.step}"
        turn = _Turn(ctx, mem, Recorder([], who), self._skill(ctx.current_skill))
        self._order.enter(turn.round, ctx.agent_id)  # before any await: the runner starts agents in id order
        try:
            decision = await self._decide(turn)
        except VLMFatalError:
            raise  # the model is absent or the replay does not match: the run must stop, not fall back
        except Exception as exc:
            # One agent's failure (a bug, a library that changed under it...) must not end the
            # episode for the others: record it, count it, keep the current skill.
            log.warning("agent %d decision failed: %s: %s", ctx.agent_id, type(exc).__name__, exc)
            turn.rec.add("planner", kind="error", error=f"{type(exc).__name__}: {first_line(str(exc), 300)}")
            self.usage.event(ctx.episode, "decision_errors")
            decision = await self._keep(turn, f"decision failed: {type(exc).__name__}")
        finally:
            self._order.release(turn.round, ctx.agent_id)
        self._remember(turn, decision)
        self.usage.decision(ctx.episode)
        return decision

    def observe_step(self, episode: int, step: int, views: list[AgentView], reward: float) -> None:
        """Called by the runner after every env step: per-agent reward and a lazy frame record."""
        for view in views:
            if not view.alive:
                continue
            mem = self._agent(episode, view.agent_id)
            mem.local.add_reward(step, reward)
            mem.local.add(
                "frame", step, FrameRecord(step, caption(view), view.frame if view.render else None)
            )

    def usage_for_episode(self, episode: int) -> dict[str, Any]:
        """Calls, tokens, cost and latency of one episode, per module, plus planner events."""
        return self.usage.episode(episode)

    def usage_summary(self) -> dict[str, Any]:
        """The whole run's usage (``summary.json``'s ``vlm_usage``)."""
        # "decided_by": the model whose answers chose which modules ran (reflection outcomes,
        # re-planning); token figures from a scripted server say nothing about a real model.
        return {
            "model": self.client.label,
            "decided_by": self.client.label,
            **self.usage.summary(),
            "skills_added": list(self.added),
        }

    async def aclose(self) -> None:
        """Release the client's connections (the session calls this once, in the run's event loop)."""
        await self.client.aclose()

    # --- the loop ---------------------------------------------------------------------------

    async def _decide(self, t: _Turn) -> Decision:
        ctx, mem, s = t.ctx, t.mem, self.settings
        if ctx.trigger == "skill_error" and t.current is not None:
            fixed = await self._repair_path(t)
            if fixed is not None:
                return Decision(fixed, ctx.subtask or ctx.task, t.rec.records)
            mem.broken.add(t.current.name)
            t.current = None
        if (
            ctx.trigger in EVENT_TRIGGERS
            and t.current is not None
            and s.event_debounce
            and ctx.step - mem.planned_at < s.event_debounce
        ):
            self.usage.event(ctx.episode, "debounced")
            return await self._keep(
                t, f"{ctx.trigger} within {s.event_debounce} steps of the last VLM decision"
            )
        mem.planned_at = ctx.step
        t.obs = build_observation(ctx.view, ctx.minimap, images=self.images)
        values = self._values(t)
        reflect = (
            self.reflection
            and t.current is not None
            and t.current.name == mem.skill
            and ctx.step - mem.skill_since >= s.min_reflection_steps
        )
        # Reflection reads the memory as it was when this decision started (perception, running
        # concurrently, updates it; which finishes first must not change the prompt).
        before = mem.perception
        if reflect and s.continue_on_success and ctx.trigger == "interval":
            reflection = await self._reflect(t, values, before, t.rec)
            if isinstance(reflection, Reflection) and reflection.success:
                self.usage.event(ctx.episode, "kept_on_success")
                return await self._keep(t, "self-reflection: the current skill succeeds")
            perception = await self._perceive(t, values, t.rec)
        elif reflect:
            # Concurrent, each into its own records, joined in a fixed order (not completion order).
            rec_p, rec_r = Recorder([], t.rec.who), Recorder([], t.rec.who)
            perception, reflection = await asyncio.gather(
                self._perceive(t, values, rec_p), self._reflect(t, values, before, rec_r)
            )
            t.rec.records.extend(rec_p.records + rec_r.records)
        else:
            perception, reflection = await self._perceive(t, values, t.rec), None
        if isinstance(reflection, Reflection):
            values["previous_self_reflection_reasoning"] = _reflection_text(reflection)
        if not isinstance(perception, Perception):
            return await self._keep(t, f"no perception ({perception.reason})")
        values["game_situation"] = _situation_text(perception)
        plan = await self.modules.run("task_reasoning", values, parse_task, t.rec, ctx.episode)
        if not isinstance(plan, TaskPlan):
            return await self._keep(t, f"no task ({plan.reason})")
        mem.reasoning = first_line(plan.reasoning, 300)
        subtask = plan.subtask or ctx.subtask or ctx.task
        values["task_description"] = subtask
        if plan.skill_fits and t.current is not None and s.skip_actor_when_fits:
            return await self._keep(t, "task reasoning: the current skill fits the sub-task", subtask)
        hits = await self._retrieve(t, subtask)
        fits = any(
            h.score >= s.fit_threshold for h in hits if t.current is None or h.skill.name != t.current.name
        )
        if not fits and self._may_synthesize(t):
            new = await self._synthesize(t, values, subtask, hits)
            if new is not None:
                return Decision(new, subtask, t.rec.records)
        return Decision(await self._act(t, values, hits), subtask, t.rec.records)

    async def _keep(self, t: _Turn, reason: str, subtask: str | None = None) -> Decision:
        """Keep the current skill (or, with none, take the best retrieval for the task)."""
        ctx = t.ctx
        subtask = subtask or ctx.subtask or ctx.task
        if t.current is not None:
            t.rec.add("planner", kind="keep", skill=t.current.name, reason=reason)
            return Decision(t.current.name, subtask, t.rec.records)
        hits = await self._retrieve(t, subtask)
        if not hits:
            raise RuntimeError(f"skill library {self.library.dir} has no usable skills")
        t.rec.add("planner", kind="fallback", skill=hits[0].skill.name, reason=reason)
        self.usage.event(ctx.episode, "fallback")
        log.info("%s: fell back to %s (%s)", t.rec.who, hits[0].skill.name, reason)
        return Decision(hits[0].skill.name, subtask, t.rec.records)

    # --- modules ----------------------------------------------------------------------------

    async def _perceive(self, t: _Turn, values: dict[str, str], rec: Recorder) -> Perception | NoAnswer:
        images = t.obs.images if t.obs else ()
        if t.obs is not None:
            values = {**values, "ego_minimap": t.obs.minimap_for_perception()}
        result = await self.modules.run("perception", values, parse_perception, rec, t.ctx.episode, images)
        if isinstance(result, Perception):
            t.mem.perception = result
        return result

    async def _reflect(
        self, t: _Turn, base: dict[str, str], before: Perception | None, rec: Recorder
    ) -> Reflection | NoAnswer:
        ctx, mem = t.ctx, t.mem
        frames = _pick(mem.frames_since_decision() + [self._now_frame(t)], self.settings.reflection_frames)
        pngs, lines = [], []
        for f in frames:
            png = _png(f) if self.images else None
            if png is not None:
                pngs.append(png)
                lines.append(f"Screenshot {len(pngs)}: {f.caption}")
            else:
                lines.append(f"(no screenshot) {f.caption}")
        reward = mem.reward_since_skill()
        values = dict(base)
        values.update(
            {
                "task_description": mem.subtask or ctx.task,
                "event_count": str(len(pngs)),
                "image_introduction": "\n".join(lines),
                "cumulative_reward": f"{ctx.reward_since_decision if reward is None else reward:.3f}",
                "game_situation": _situation_text(before) if before else NONE,
            }
        )
        result = await self.modules.run("reflection", values, parse_reflection, rec, ctx.episode, tuple(pngs))
        if isinstance(result, Reflection):
            mem.reflection = result
            mem.local.add_reflection(ctx.step, _reflection_text(result, 200))
        return result

    async def _act(self, t: _Turn, values: dict[str, str], hits: list[Retrieved]) -> str:
        candidates = [h.skill for h in hits]
        if t.current is not None and t.current.name not in {c.name for c in candidates}:
            candidates.append(t.current)
        if not candidates:
            return (await self._keep(t, "nothing retrieved")).skill
        names = [c.name for c in candidates]
        v = {**values, "skill_library": skill_listing(candidates, self._best(t))}
        result = await self.modules.run(
            "actor", v, lambda text: parse_actor(text, names), t.rec, t.ctx.episode, choices=names
        )
        if isinstance(result, ActorChoice) and result.skill in names:
            return result.skill
        if isinstance(result, ActorChoice):
            t.rec.add("actor", kind="rejected", skill=result.skill, reason="not among the retrieved skills")
            self.usage.event(t.ctx.episode, "actor_rejected")
        best = names[0]
        t.rec.add("actor", kind="fallback", skill=best, reason="best retrieval")
        return best

    # --- synthesis and repair ---------------------------------------------------------------

    def _may_synthesize(self, t: _Turn) -> bool:
        if t.mem.syntheses >= self.settings.max_syntheses_per_agent:
            t.rec.add("skill_synthesis", kind="skipped", reason="synthesis budget of this agent used up")
            return False
        # Only earlier rounds count: within a round, who asks first depends on answer timing.
        earlier = sum(1 for step in self._syntheses.get(t.ctx.episode, []) if step < t.ctx.step)
        if earlier >= self.settings.max_syntheses_per_episode:
            t.rec.add("skill_synthesis", kind="skipped", reason="synthesis budget of this episode used up")
            return False
        # Refining targeting needs a target (the refine prompt's own rule); whole skills need none.
        if self.synthesis == "refine" and not any(e.team == "enemy" for e in t.ctx.view.entities):
            t.rec.add("skill_synthesis", kind="skipped", reason="no enemy known")
            return False
        return "skill_synthesis" in self.templates

    def _parent(self, t: _Turn, hits: list[Retrieved]) -> Skill | None:
        """``refine``: the skill whose structure a new helper goes into (current, else retrieved,
        else any with helpers). ``whole``: the skill shown as the example to improve on (current,
        else the best retrieval, else None)."""
        pool = ([t.current] if t.current else []) + [h.skill for h in hits]
        if self.synthesis == "whole":
            return next((s for s in pool if not self._hidden(t, s.name)), None)
        pool += [self.library.skills[n] for n in self.library.names()]
        for skill in pool:
            if not self._hidden(t, skill.name) and self._has_helpers(skill):
                return skill
        return None

    def _has_helpers(self, skill: Skill) -> bool:
        if skill.code_hash not in self._helpers:
            self._helpers[skill.code_hash] = bool(nested_functions(skill.code, skill.name) & set(NESTED))
        return self._helpers[skill.code_hash]

    async def _synthesize(
        self, t: _Turn, values: dict[str, str], subtask: str, hits: list[Retrieved]
    ) -> str | None:
        ctx, rec = t.ctx, t.rec
        parent = self._parent(t, hits)
        if parent is None and self.synthesis == "refine":
            rec.add(
                "skill_synthesis", kind="skipped", reason="no skill with score_target/control_logic to refine"
            )
            return None
        t.mem.syntheses += 1
        self._syntheses.setdefault(ctx.episode, []).append(ctx.step)
        v = {
            **values,
            "previous_action": f"{parent.name}(obs='current')" if parent else NONE,
            "action_code": parent.code if parent else NONE,
            "skill_library": skill_listing([h.skill for h in hits], self._best(t)),
            "image_introduction": self._text_intro(t),
        }
        result = await self.modules.run("skill_synthesis", v, parse_synthesis, rec, ctx.episode)
        if not isinstance(result, SkillCode) or result.code is None:
            return None
        try:
            if self.synthesis == "whole":
                candidate = whole_candidate(result.code, subtask)
            else:
                assert parent is not None
                candidate = build_candidate(
                    result.code, parent, generated_name(parent.name, subtask), subtask
                )
        except MergeError as exc:
            rec.add("skill_synthesis", kind="rejected", cause=exc.cause, reason=str(exc))
            self.usage.event(ctx.episode, "synthesis_rejected")
            return None
        code, name = candidate.code, candidate.name
        error = try_skill(code, name, self.family, ctx.view, t.seed, self.isolation)
        if error is not None:
            rec.add("skill_synthesis", kind="test_failed", skill=name, error=_error_text(error))
            code = await self._repair_loop(t, name, code, error)
            if code is None:
                self.usage.event(ctx.episode, "synthesis_rejected")
                return None
        meta = {
            "provenance": "generated",
            "parent": parent.name if parent else "-",
            "model": self.client.label,
            "subtask": first_line(subtask, 200),
            "replaced": candidate.replaced,
        }
        stored, new = await self._add(t, name, code, meta, module="skill_synthesis")
        if new:
            self.usage.event(ctx.episode, "synthesized")
            rec.add(
                "skill_synthesis",
                kind="added",
                skill=stored,
                parent=meta["parent"],
                replaced=candidate.replaced,
            )
        return stored

    async def _repair_path(self, t: _Turn) -> str | None:
        """The runner reported that the current skill raised: repair it into a new version.

        One error signature (the skill's code and the error, numbers aside) is repaired once per
        run: later agents hitting it take the earlier repair (or skip a repair that failed)."""
        ctx, broken = t.ctx, t.current
        assert broken is not None
        error = ctx.last_error
        if error is None or self.max_repairs <= 0 or "skill_repair" not in self.templates:
            t.rec.add(
                "skill_repair",
                kind="skipped",
                skill=broken.name,
                reason="repairs disabled" if self.max_repairs <= 0 else "no error or no repair template",
            )
            return None
        signature = error_signature(broken, error)
        prior = self._repairs.get(signature)
        if prior is not None and prior[0] < t.round:  # same-round repairs are settled at commit
            fixed = prior[1]
            if fixed is not None and fixed in self.library:
                t.rec.add("skill_repair", kind="reused", skill=fixed, parent=broken.name)
                self.usage.event(ctx.episode, "repair_reused")
                return fixed
            t.rec.add(
                "skill_repair", kind="skipped", skill=broken.name, reason="this error was not repairable"
            )
            return None
        name = _version_base(broken.name)
        code = await self._repair_loop(t, name, rename_function(broken.code, broken.name, name), error)
        if code is None:
            self._repairs.setdefault(signature, (t.round, None))
            self.usage.event(ctx.episode, "repair_failed")
            return None
        if broken.description:
            code = set_docstring(code, name, broken.description)  # the child keeps its parent's docstring
        meta = {
            "provenance": "generated",
            "parent": broken.name,
            "model": self.client.label,
            "subtask": broken.meta.get("subtask", first_line(ctx.subtask or ctx.task, 200)),
            "replaced": "repair",
        }
        stored, new = await self._add(t, name, code, meta, module="skill_repair", signature=signature)
        if new:
            self.usage.event(ctx.episode, "repaired")
            t.rec.add("skill_repair", kind="added", skill=stored, parent=broken.name)
        return stored

    async def _repair_loop(self, t: _Turn, name: str, code: str, error: SkillError) -> str | None:
        """Up to ``max_repairs`` VLM fixes of ``code`` (named ``name``), each compiled and run."""
        ctx = t.ctx
        for attempt in range(1, self.max_repairs + 1):
            values = self._values(t)
            values.update(
                {
                    "previous_action": f"{name}(obs='current')",
                    "action_code": code,
                    "error_report": _error_text(error),
                    "image_introduction": self._text_intro(t),
                    "task_description": t.mem.subtask or ctx.subtask or ctx.task,
                }
            )
            result = await self.modules.run("skill_repair", values, parse_repair, t.rec, ctx.episode)
            if not isinstance(result, SkillCode) or result.code is None:
                continue
            try:
                fixed = apply_fix(result.code, code, name)
            except MergeError as exc:
                t.rec.add(
                    "skill_repair", kind="attempt", attempt=attempt, ok=False, cause=exc.cause, error=str(exc)
                )
                continue
            new_error = try_skill(fixed, name, self.family, ctx.view, t.seed, self.isolation)
            t.rec.add(
                "skill_repair",
                kind="attempt",
                attempt=attempt,
                ok=new_error is None,
                error=_error_text(new_error) if new_error else None,
            )
            if new_error is None:
                return fixed
            code, error = fixed, new_error
        return None

    async def _add(
        self,
        t: _Turn,
        name: str,
        code: str,
        meta: dict[str, str],
        module: str,
        signature: str | None = None,
    ) -> tuple[str | None, bool]:
        """Add a validated skill, in agent order within the round (see :class:`CommitOrder`).

        Returns ``(skill to use, whether it is new)``. Nothing is added when the library already
        has a skill with the same normalised code (that one is used), when this error signature
        was repaired by an agent before in the round (its repair is used), or when the episode's
        synthesis budget is used up: all three are decided here, in agent order, so concurrent
        agents cannot all add the same skill and the outcome does not depend on answer timing.
        """
        ctx, rec = t.ctx, t.rec
        if self.gate is not None:
            refused = await self._precheck(t, name, code, meta, module)
            if refused:
                return None, False
        await self._order.wait_turn(t.round, ctx.agent_id)
        try:
            if signature is not None and self._repairs.get(signature, (None, None))[1] in self.library:
                fixed = self._repairs[signature][1]
                rec.add(module, kind="reused", skill=fixed, parent=meta["parent"])
                return fixed, False
            if (
                module == "skill_synthesis"
                and self._committed(ctx.episode) >= self.settings.max_syntheses_per_episode
            ):
                rec.add(module, kind="skipped", skill=name, reason="synthesis budget of this episode used up")
                return None, False
            skill = parse_skill_source(code, self.family, name=name)
            skill.meta = dict(meta)
            with self._library_lock:
                duplicate = self.library.find_duplicate(skill)
                if duplicate is None:
                    stored = self.library.stage(skill) if self.gate else self.library.add(skill)
                    self._born[stored.name] = (ctx.episode, ctx.step, ctx.agent_id)
                    if self.gate is not None:  # role-aware judging plays it for its author only
                        self.gate.authors[stored.name] = ctx.agent_id
        except (SkillError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            rec.add("library", kind="add_failed", skill=name, error=f"{type(exc).__name__}: {exc}")
            return None, False
        finally:
            self._order.release(t.round, ctx.agent_id)
        if duplicate is not None:
            rec.add(module, kind="duplicate", skill=name, duplicate_of=duplicate)
            self.usage.event(ctx.episode, "duplicate")
            if signature is not None:
                self._repairs[signature] = (t.round, duplicate)
            return duplicate, False
        if signature is not None:
            self._repairs[signature] = (t.round, stored.name)
        self.added.append(
            {
                "skill": stored.name,
                "parent": meta["parent"],
                "episode": ctx.episode,
                "step": ctx.step,
                "agent": ctx.agent_id,
                "kind": meta.get("replaced", ""),
            }
        )
        return stored.name, True

    async def _precheck(self, t: _Turn, name: str, code: str, meta: dict[str, str], module: str) -> bool:
        """The keep gate's check on the family's recorded observations; True when it refused."""
        try:
            skill = parse_skill_source(code, self.family, name=name)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False  # _add reports it
        skill.meta = dict(meta)
        # In the event loop's thread, not a worker thread: compiling parses an AST, and CPython 3.11's
        # AST constructor is not safe against another thread parsing at the same time (SystemError).
        problem = self.gate.precheck(skill)
        if problem is None:
            return False
        t.rec.add(module, kind="refused", skill=name, gate="check", reason=problem[:500])
        self.usage.event(t.ctx.episode, "gate_refused")
        self.gate.refused(t.ctx.episode, name, problem, model=self.client.label)
        return True

    def _committed(self, episode: int) -> int:
        """Skills synthesized (not repaired) and added in ``episode`` so far."""
        return sum(1 for a in self.added if a["episode"] == episode and a["kind"] != "repair")

    # --- helpers ----------------------------------------------------------------------------

    def _agent(self, episode: int, agent: int) -> AgentMemory:
        if episode != self._episode:
            self._episode, self._memory = episode, {}
        return self._memory.setdefault(agent, AgentMemory())

    def _skill(self, name: str | None) -> Skill | None:
        return self.library.skills.get(name) if name else None

    async def _retrieve(self, t: _Turn, query: str) -> list[Retrieved]:
        """Top-k skills for ``query``, without broken ones and without skills other agents added
        in this same round (their presence would depend on answer timing).

        Embedding a new query takes ~0.1 s of CPU; it runs in a worker thread so the event loop
        keeps serving the other agents' VLM calls meanwhile.
        """
        hits = await asyncio.to_thread(self._retrieve_locked, t, query)
        t.rec.add(
            "retrieval", kind="retrieval", query=query, hits=[[h.skill.name, round(h.score, 4)] for h in hits]
        )
        return hits

    def _best(self, t: _Turn) -> str | None:
        """The library's recorded best for the overall task (``_best.json``: the keep gate measured
        it), unless it is broken for this agent."""
        best = self.library.best_for(t.ctx.task)
        return best if best is not None and not self._hidden(t, best) else None

    def _retrieve_locked(self, t: _Turn, query: str) -> list[Retrieved]:
        with self._library_lock:  # library.add (event loop thread) must not change it meanwhile
            k = self.settings.retrieve_k
            best = self._best(t)
            extra = sum(1 for n in self.library.skills if self._hidden(t, n))
            # The recorded best comes first (with its own retrieval score), so the actor sees it
            # at the top of the listing and every fallback plays it: the gate measured it.
            hits = self.library.retrieve(query, k=len(self.library.skills) if best else k + extra)
            first = [h for h in hits if h.skill.name == best]
            rest = [h for h in hits if h.skill.name != best and not self._hidden(t, h.skill.name)]
            return (first + rest)[:k]

    def _hidden(self, t: _Turn, name: str) -> bool:
        """Broken for this agent, or added by another agent in this same round."""
        born = self._born.get(name)
        same_round = born is not None and born[:2] == t.round and born[2] != t.ctx.agent_id
        return same_round or name in t.mem.broken

    def _values(self, t: _Turn) -> dict[str, str]:
        ctx, mem = t.ctx, t.mem
        obs = t.obs or build_observation(ctx.view, ctx.minimap, images=False)
        t.obs = obs
        last = (
            f"At step {mem.skill_since} you chose {mem.skill} for: {first_line(mem.subtask or '', 200)}"
            if mem.skill
            else ""
        )
        values = common_values(
            unit_type=ctx.view.own.unit_type,
            unit_id=ctx.agent_id,
            scenario=_scenario(ctx.scenario),
            task=ctx.subtask or ctx.task,
            overall_task=ctx.task,
            obs=obs,
            ally_tasks=ctx.ally_tasks,
            reward=ctx.reward_since_decision,
            history=mem.history(),
            last_reasoning=last,
            situation=_situation_text(mem.perception) if mem.perception else "",
            reflection=_reflection_text(mem.reflection) if mem.reflection else "",
            current=t.current,
        )
        values["previous_reasoning"] = mem.reasoning or NONE
        return values

    def _text_intro(self, t: _Turn) -> str:
        obs = t.obs or build_observation(t.ctx.view, t.ctx.minimap, images=False)
        return replace(obs, images=(), image_names=()).introduction()

    def _now_frame(self, t: _Turn) -> FrameRecord:
        png = t.obs.ego_png if t.obs else None
        return FrameRecord(t.ctx.step, caption(t.ctx.view), None if png else t.ctx.view.frame, png)

    def _remember(self, t: _Turn, decision: Decision) -> None:
        mem, ctx = t.mem, t.ctx
        if decision.skill != mem.skill:
            mem.skill_since = ctx.step
            mem.start_frame = self._now_frame(t)
        if decision.subtask != mem.subtask:
            mem.local.add_subtask(ctx.step, first_line(decision.subtask, 200))
        mem.skill, mem.subtask = decision.skill, decision.subtask


# --- small pure helpers ---------------------------------------------------------------------


def _scenario(spec: str) -> str:
    return spec.split(":", 1)[1] if ":" in spec else spec


def _situation_text(p: Perception) -> str:
    text = p.situation.strip()
    if p.region_of_interest:
        text += f"\nRegion of interest: {p.region_of_interest}"
    return text


def _reflection_text(r: Reflection, limit: int = 400) -> str:
    return f"Success: {r.success}. {first_line(r.critique, limit)}".strip()


def _error_text(error: SkillError) -> str:
    """Message and skill-frame traceback, with file paths cut to file names (tokens; reproducibility)."""
    tb = getattr(error, "traceback", "") or ""
    text = f"{error}\n{tb}".strip() if tb else str(error)
    return "".join(_file_name(part) for part in _PATH_SPLIT.split(text))


# Split into path-like words; a regex matching whole paths backtracked for minutes on "a/a/a/...".
_PATH_SPLIT = re.compile(r"([\s\"':]+)")


def _file_name(word: str) -> str:
    """``/some/dir/skill.py`` (possibly followed by text) becomes ``skill.py...``."""
    cut = word.rfind("/")
    if cut < 0 or word.find(".py", cut + 2) < 0:
        return word
    return word[cut + 1 :]


def error_signature(skill: Skill, error: SkillError) -> str:
    """What makes two skill errors "the same": the skill's code and the error, numbers aside."""
    message = re.sub(r"\d+(\.\d+)?", "N", f"{getattr(error, 'kind', '')}: {error}")
    return f"{skill.code_hash}|{message}"


def client_config(cfg: RunConfig) -> VLMConfig:
    """The VLM client settings a run asks for."""
    return VLMConfig(cache_dir=cfg.vlm_cache, concurrency=cfg.vlm_concurrency)


def _version_base(name: str) -> str:
    return re.sub(r"_v\d+$", "", name)


def _pick(frames: list[FrameRecord], n: int) -> list[FrameRecord]:
    """``n`` frames evenly spread over ``frames``, first and last included."""
    if n <= 0 or not frames:
        return []
    if len(frames) <= n:
        return frames
    if n == 1:
        return [frames[-1]]
    idx = sorted({round(i * (len(frames) - 1) / (n - 1)) for i in range(n)})
    return [frames[i] for i in idx]


def _png(frame: FrameRecord) -> bytes | None:
    if frame.png is not None:
        return frame.png
    if frame.render is None:
        return None
    try:
        frame.png = to_png(frame.render())
    except RuntimeError as exc:  # e.g. an env that renders only the current step
        log.debug("frame of step %d unavailable: %s", frame.step, exc)
        return None
    return frame.png


__all__ = ["PlannerSettings", "VLMPlanner", "client_config", "error_signature"]
