"""Who drives which unit: team specs, game-independent controllers and the two-team env wrapper.

A team spec is one line: ``compass`` (every unit), or per unit ranges such as
``0-2 compass, 3-4 mappo:ckpt/``. Kinds:

- ``compass``: the configuration's own planner (``planner: library`` or ``vlm``)
- ``library``: library only (the skill retrieved for the task), no VLM
- ``vlm``: the five-module VLM planner (needs ``vlm:`` in the configuration)
- ``skill:NAME``: one library skill, every step
- ``random``: a uniformly random available action
- family kinds (``GameFamily.controllers``), e.g. combat's ``heuristic`` (SMAX's scripted policy)
  and ``mappo:CKPT_DIR`` (a trained policy, docs/eval.md)

Units driven by ``compass``/``library``/``vlm``/``skill`` on our team go through the episode runner
(decisions, communication, sandboxed skills, trace); the other kinds, and the whole enemy team,
act inside :class:`TeamEnv` each step.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from compass.comm import CommProtocol
from compass.core.controller import ALLY, ENEMY, UnitController
from compass.core.types import AgentView, MultiAgentEnv, StepResult
from compass.planner.base import Decision, DecisionContext, LibraryPlanner, Planner
from compass.sandbox.executors import pooled_executor, resolve_parts_from
from compass.skills.library import SkillLibrary

#: kinds that run skills through the planner machinery (our team: the runner)
SKILL_KINDS = ("compass", "library", "vlm", "skill")
GENERIC_KINDS = (*SKILL_KINDS, "random")
_ITEM = re.compile(
    r"^\s*(?:(?P<units>\d+(?:\s*-\s*\d+)?(?:\s*(?:\+|&)\s*\d+(?:\s*-\s*\d+)?)*)\s+)?(?P<kind>[a-z_]+)(?::(?P<arg>\S+))?\s*$"
)


@dataclass(frozen=True)
class Assignment:
    """``units`` (None: every unit) are driven by ``kind`` (with ``arg`` after the colon)."""

    units: tuple[int, ...] | None
    kind: str
    arg: str | None = None

    def __str__(self) -> str:
        kind = f"{self.kind}:{self.arg}" if self.arg else self.kind
        return kind if self.units is None else f"{_ranges(self.units)} {kind}"


def _ranges(units: tuple[int, ...]) -> str:
    return "+".join(str(u) for u in units)


def _known_kinds() -> set[str]:
    from compass.core.family import families

    return set(GENERIC_KINDS) | {k for f in families().values() for k in f.controllers}


def parse_team(text: str) -> list[Assignment]:
    """Parse ``compass`` or ``0-2 compass, 3-4 mappo:ckpt``; unknown kinds and overlaps are errors."""
    items = [x for x in text.split(",")]
    if not text.strip():
        raise ValueError("empty team spec")
    out: list[Assignment] = []
    seen: set[int] = set()
    known = _known_kinds()
    for item in items:
        m = _ITEM.match(item)
        if not m:
            raise ValueError(
                f"cannot read {item.strip()!r}: write UNITS KIND, e.g. '0-2 compass, 3-4 random'"
            )
        kind, arg = m["kind"], m["arg"]
        if kind not in known:
            raise ValueError(f"unknown controller {kind!r}; valid: {', '.join(sorted(known))}")
        if kind == "skill" and not arg:
            raise ValueError("skill needs a skill name: skill:NAME")
        if kind in ("compass", "library", "vlm", "random") and arg:
            raise ValueError(f"{kind} takes no argument, got {kind}:{arg}")
        units: tuple[int, ...] | None = None
        if m["units"] is not None:
            us: list[int] = []
            for part in re.split(r"\s*[+&]\s*", m["units"]):
                lo, _, hi = part.partition("-")
                a, b = int(lo), int(hi or lo)
                if b < a:
                    raise ValueError(f"unit range {part!r} runs backwards")
                us.extend(range(a, b + 1))
            if seen & set(us):
                raise ValueError(f"unit {min(seen & set(us))} is assigned twice")
            seen |= set(us)
            units = tuple(us)
        elif len(items) > 1:
            raise ValueError(f"{item.strip()!r} needs its units when the team has several controllers")
        out.append(Assignment(units, kind, arg))
    return out


def resolve(assignments: list[Assignment], n_units: int, what: str) -> dict[int, Assignment]:
    """unit -> assignment for a team of ``n_units``; every unit exactly once."""
    out: dict[int, Assignment] = {}
    for a in assignments:
        for u in a.units if a.units is not None else range(n_units):
            if u >= n_units:
                raise ValueError(f"{what}: unit {u} does not exist (units 0-{n_units - 1})")
            out[u] = a
    missing = [u for u in range(n_units) if u not in out]
    if missing:
        raise ValueError(f"{what}: no controller for unit(s) {', '.join(map(str, missing))}")
    return out


# --- game-independent controllers ---------------------------------------------------------------


class RandomController:
    """A uniformly random available action per unit (seeded by episode seed and team)."""

    def __init__(self, team: int, units: tuple[int, ...]) -> None:
        self.team, self.units = team, units

    def reset(self, seed: int) -> None:
        self._rng = np.random.default_rng([seed, self.team, 0x5EED])

    def act(self, env: MultiAgentEnv, views: list[AgentView]) -> dict[int, int]:
        return {u: int(self._rng.choice(views[u].avail_actions)) for u in self.units if views[u].alive}


class SkillController:
    """One library skill run every step in the sandbox, for units of the enemy team."""

    def __init__(
        self,
        team: int,
        units: tuple[int, ...],
        library: SkillLibrary,
        skill: str,
        api: str,
        isolation,
        workers=1,
        parts_from: int | None = None,
    ) -> None:
        if skill not in library:
            raise ValueError(f"skill {skill!r} is not in the library {library.dir}")
        self.team, self.units, self.skill = team, units, library.compiled[skill]
        self.api, self.isolation, self.workers = api, isolation, workers
        self.parts_from = parts_from  # the run's batches-in-parts setting, as our team's executor has it
        self._release: contextlib.ExitStack | None = None

    def reset(self, seed: int) -> None:
        self.close()
        # A warm executor from the process's pool, as the runner uses (isolated workers start once).
        self._release = contextlib.ExitStack()
        self._executor = self._release.enter_context(
            pooled_executor(self.api, seed * 2 + self.team, self.isolation, self.workers, self.parts_from)
        )

    def act(self, env: MultiAgentEnv, views: list[AgentView]) -> dict[int, int]:
        alive = [u for u in self.units if views[u].alive]
        results = self._executor.run_batch([(self.skill, views[u]) for u in alive])
        return {u: r.action for u, r in zip(alive, results, strict=True)}

    def close(self) -> None:
        if self._release is not None:
            self._release.close()
            self._release = None


class FixedSkillPlanner:
    """A planner that always picks one skill (``skill:NAME`` on our team)."""

    def __init__(self, library: SkillLibrary, skill: str) -> None:
        if skill not in library:
            raise ValueError(f"skill {skill!r} is not in the library {library.dir}")
        self.library, self.skill = library, skill

    async def decide(self, ctx: DecisionContext) -> Decision:
        return Decision(self.skill, ctx.subtask or ctx.task, [{"module": "fixed", "skill": self.skill}])

    def observe_step(self, episode: int, step: int, views: list[AgentView], reward: float) -> None:
        """A fixed skill needs no history."""

    def usage_for_episode(self, episode: int) -> None:
        return None

    def usage_summary(self) -> None:
        return None

    async def aclose(self) -> None:
        """Nothing to release."""


class UnitPlanners:
    """Dispatches each agent's decisions to its own planner (a heterogeneous team)."""

    def __init__(self, library: SkillLibrary, by_agent: dict[int, Planner]) -> None:
        self.library, self.by_agent = library, by_agent
        self._distinct = list({id(p): p for p in by_agent.values()}.values())

    async def decide(self, ctx: DecisionContext) -> Decision:
        return await self.by_agent[ctx.agent_id].decide(ctx)

    def observe_step(self, episode: int, step: int, views: list[AgentView], reward: float) -> None:
        for p in self._distinct:
            p.observe_step(episode, step, views, reward)

    @staticmethod
    def _sum(parts: list[dict[str, Any] | None]) -> dict[str, Any] | None:
        total: dict[str, Any] = {}
        for part in parts:
            for k, v in (part or {}).items():
                if isinstance(v, int | float) and not isinstance(v, bool):
                    total[k] = total.get(k, 0) + v
        return total or None

    def usage_for_episode(self, episode: int) -> dict[str, Any] | None:
        return self._sum([p.usage_for_episode(episode) for p in self._distinct])

    def usage_summary(self) -> dict[str, Any] | None:
        return self._sum([p.usage_summary() for p in self._distinct])

    async def aclose(self) -> None:
        for p in self._distinct:
            await p.aclose()


class TeamEnv:
    """The environment as the runner sees it, with some of our units and the enemy team driven by
    controllers. Everything else is delegated to the wrapped environment."""

    def __init__(
        self,
        env: MultiAgentEnv,
        ally: list[UnitController],
        enemy: list[UnitController] | None = None,
        enemy_comm: CommProtocol | None = None,
    ) -> None:
        self.env, self.ally, self.enemy, self.enemy_comm = env, ally, enemy, enemy_comm
        self.external_agents = frozenset(u for c in ally for u in c.units)
        self._views: list[AgentView] = []
        #: our team's actions of the last step as played, the controllers' filled in (the runner
        #: traces these for its external agents instead of its placeholder 0)
        self.played_actions: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def reset(self, seed: int) -> list[AgentView]:
        self._views = self.env.reset(seed)
        for c in (*self.ally, *(self.enemy or ())):
            c.reset(seed)
        if self.enemy_comm is not None:
            self.enemy_comm.reset(seed)
        return self._views

    def _enemy_views(self) -> list[AgentView]:
        views = self.env.enemy_views()
        if self.enemy_comm is None:
            return views
        self.enemy_comm.exchange(self.env.t, views)
        out = []
        for v in views:
            relayed = self.enemy_comm.relayed_for(v.agent_id, v) if v.alive else ()
            out.append(v.with_entities(v.entities + tuple(relayed)) if relayed else v)
        return out

    def _team_actions(self, actions: list[int]) -> list[int]:
        """``actions`` with our controlled units' actions filled in (kept as ``played_actions``)."""
        actions = list(actions)
        for c in self.ally:
            for u, a in c.act(self.env, self._views).items():
                actions[u] = int(a)
        self.played_actions = actions
        return actions

    def step(self, actions: list[int]) -> StepResult:
        actions = self._team_actions(actions)
        if self.enemy is None:
            res = self.env.step(actions)
        else:
            views = self._enemy_views()
            enemy_actions = [0] * len(views)
            for c in self.enemy:
                for u, a in c.act(self.env, views).items():
                    enemy_actions[u] = a
            res = self.env.step(actions, enemy_actions)
        self._views = res.views
        return res

    # Batched episodes (compass.core.types.BatchStep): our controlled units act in step_begin;
    # step_batch, step_idle and batch_key are the wrapped env's (through __getattr__).
    @property
    def can_batch(self) -> bool:
        """Only with the env's own enemy: an enemy team driven from here steps one by one."""
        return self.enemy is None and bool(getattr(self.env, "can_batch", False))

    def step_begin(self, actions: list[int]) -> Any:
        return self.env.step_begin(self._team_actions(actions))

    def step_end(self, out: Any) -> StepResult:
        res = self.env.step_end(out)
        self._views = res.views
        return res

    def close(self) -> None:
        for c in (*self.ally, *(self.enemy or ())):
            if hasattr(c, "close"):
                c.close()


def build_controller(
    a: Assignment,
    units: tuple[int, ...],
    team: int,
    env: MultiAgentEnv,
    family,
    library_for,
    api,
    isolation,
    task,
    workers: int = 1,
    parts_from: int | None = None,
) -> UnitController:
    """A controller for ``units`` of ``team`` (not for our team's skill kinds: those are planners)."""
    if a.kind == "random":
        return RandomController(team, units)
    if a.kind in ("skill", "library"):
        lib = library_for()
        name = a.arg if a.kind == "skill" else _retrieved(lib, task)
        return SkillController(team, units, lib, name, api, isolation, workers, parts_from)
    if a.kind in ("compass", "vlm"):
        raise ValueError(
            f"{a.kind} cannot drive the enemy team (yet); use library, skill:NAME or a scripted kind"
        )
    if a.kind not in family.controllers:
        raise ValueError(
            f"{family.name} has no {a.kind!r} controller; its kinds: "
            f"{', '.join(sorted([*GENERIC_KINDS, *family.controllers]))}"
        )
    return family.controllers[a.kind](env, team, units, a.arg)


def split_team(
    team: dict[int, Assignment], cfg: Any, library: SkillLibrary, run_dir: Any = None
) -> tuple[dict[int, Planner], dict[Assignment, list[int]]]:
    """Our team's units as (planners for the skill kinds, units grouped by the other kinds).

    Units with the same skill kind and argument share one planner (``compass`` is the run's
    ``cfg.planner``); the groups are for :func:`side_controllers`.
    """
    planners: dict[str, Planner] = {}

    def planner_for(kind: str, arg: str | None) -> Planner:
        key = f"{kind}:{arg}"
        if key not in planners:
            if kind == "library":
                planners[key] = LibraryPlanner(library)
            elif kind == "vlm":
                from compass.planner.factory import make_planner

                planners[key] = make_planner(
                    cfg.model_copy(update={"planner": "vlm"}), library, run_dir=run_dir
                )
            else:
                planners[key] = FixedSkillPlanner(library, arg)
        return planners[key]

    by_agent: dict[int, Planner] = {}
    groups: dict[Assignment, list[int]] = {}
    for u, a in team.items():
        if a.kind in SKILL_KINDS:
            by_agent[u] = planner_for(cfg.planner if a.kind == "compass" else a.kind, a.arg)
        else:
            groups.setdefault(a, []).append(u)
    return by_agent, groups


def side_controllers(
    groups: dict[Assignment, list[int]],
    side: int,
    env: MultiAgentEnv,
    family,
    library: SkillLibrary,
    cfg: Any,
) -> list[UnitController]:
    """One controller per group of ``side``'s units (:func:`build_controller`)."""
    return [
        build_controller(
            a,
            tuple(us),
            side,
            env,
            family,
            lambda: library,
            family.skill_api,
            cfg.isolation,
            cfg.task,
            cfg.sandbox_workers,
            resolve_parts_from(cfg.sandbox_parts_from, players=1),
        )
        for a, us in groups.items()
    ]


def _retrieved(lib: SkillLibrary, task: str) -> str:
    hits = lib.retrieve(task, k=1)
    if not hits:
        raise RuntimeError(f"skill library {lib.dir} has no loadable skills")
    return hits[0].skill.name


__all__ = [
    "ALLY",
    "ENEMY",
    "Assignment",
    "FixedSkillPlanner",
    "RandomController",
    "SkillController",
    "TeamEnv",
    "UnitPlanners",
    "build_controller",
    "parse_team",
    "resolve",
]
