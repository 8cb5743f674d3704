"""What makes a game family, in one place: the :class:`GameFamily` descriptor and its registry.

The core, the planner, the skill library and the CLI ask a family for what they need (its envs,
skill API, prompts, seed skills, recorded observations, default task, how synthesis works for
it, what its frames show, its scorer, its text parser) instead of branching on its name.

A family is a package that defines ``FAMILY = GameFamily(...)`` and is registered once, as an
entry point in the ``compass.games`` group (``pyproject.toml``)::

    [project.entry-points."compass.games"]
    combat = "compass.games.combat:FAMILY"

Adding a game is therefore a new package plus that one line. Descriptors must be cheap to
import: heavy modules (JAX envs) are imported inside their factories.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol

from compass.core.errors import CompassError
from compass.core.types import AgentView, MultiAgentEnv, StepResult

ENTRY_POINT_GROUP = "compass.games"

#: ``refine``: synthesis rewrites the nested ``score_target``/``control_logic`` helpers of a parent
#: skill (the paper's combat skills). ``whole``: the model writes a complete skill function.
SynthesisMode = Literal["refine", "whole"]


class Scorer(Protocol):
    """A family's run metrics, fed every step (e.g. ALEM's Base/Coord./Total %)."""

    def start(self) -> None: ...

    def on_step(self, episode: int, t: int, res: StepResult) -> None: ...

    def finish(self) -> dict[str, Any]:
        """This episode's metrics (stored on the episode row under the family's name)."""
        ...

    def summary(self) -> dict[str, Any]:
        """The run's metrics over all episodes (stored in ``summary.json`` under the family's name)."""
        ...

    def describe_episode(self, metrics: dict[str, Any]) -> str:
        """One line for the console from :meth:`finish`'s output."""
        ...

    def headline(self, summary: dict[str, Any]) -> str:
        """One line for the console from :meth:`summary`'s output."""
        ...


@dataclass(frozen=True)
class EnvOptions:
    """Options every environment factory receives (each family uses those that apply)."""

    epo: bool = False
    max_steps: int | None = None
    #: the opposing team is driven from outside (``env.step(actions, enemy_actions)``, ``env.enemy_views()``)
    #: instead of the environment's built-in opponent; families without one refuse it
    external_enemy: bool = False


@dataclass(frozen=True)
class GameFamily:
    """Everything the game-independent parts of compass need to know about one game family."""

    name: str
    #: the package holding ``prompts/``, ``skills/`` (seed library) and ``observations.jsonl``
    package: str
    #: ``{"smax": factory}``: env kind (the ``KIND`` of ``KIND:SCENARIO``) -> ``factory(scenario, options)``
    envs: dict[str, Callable[[str, EnvOptions], MultiAgentEnv]]
    #: the module a skill sees (``make_api(view, rng)``, ``default_action(view)``, ``EXPORTS``)
    skill_api: str
    default_task: str
    synthesis: SynthesisMode
    #: what the ego frame shows; the image prompt's legend is this text
    frame_legend: str
    #: rebuilds the view a recorded text observation describes (``skills check``)
    view_from_text: Callable[[str], AgentView]
    #: scenario names per env kind, for help texts and errors
    scenarios: dict[str, tuple[str, ...]] = field(default_factory=dict)
    make_scorer: Callable[[MultiAgentEnv], Scorer] | None = None
    #: the key of the scorer's per-episode metrics that ranks play (ALEM: ``total_pct``); the keep
    #: gate compares skills by it. None: by win rate (then return)
    score_key: str | None = None
    #: what the whole-map minimap image shows; the image prompt's legend for it
    minimap_legend: str = (
        "minimap of the whole map with the units you know of (white = you, blue = allies, "
        "red = enemies, orange = relayed); north is up"
    )
    #: which way the map's ``y`` grows on screen: ``north`` (world coordinates: SMAX, SMACv2) or
    #: ``south`` (grid rows: ALEM), so the minimap is drawn the way the text describes the map
    y_axis: Literal["north", "south"] = "north"
    #: family-specific unit controller kinds (``compass.core.controller``), e.g. ``heuristic``, ``mappo``
    controllers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    #: ``human_keys(view) -> tuple[HumanKey, ...]``: what a person controlling the agent of ``view``
    #: may do this step, with its keys (``compass play``); None: the family cannot be played by hand
    human_keys: Callable[[AgentView], tuple[Any, ...]] | None = None
    #: env kinds whose envs play many episodes in one batched step (:class:`compass.core.types.BatchStep`);
    #: ``compass eval`` batches the episodes of a configuration on them (docs/eval.md)
    batch_envs: tuple[str, ...] = ()
    #: ``action_name(action, agent) -> str`` for recorded trajectories, when the env has no
    #: ``action_name`` method of its own (None: the action's number)
    action_name: Callable[[int, int], str] | None = None

    @property
    def prompts_dir(self) -> Path:
        return Path(str(resources.files(self.package) / "prompts"))

    @property
    def seed_skills_dir(self) -> Path:
        """The shipped seed library of this family (package data; read-only for runs)."""
        return Path(str(resources.files(self.package) / "skills"))

    @property
    def observations_path(self) -> Path:
        """Recorded text observations (JSONL, ``{"text": ...}`` per line) for ``skills check``."""
        return Path(str(resources.files(self.package) / "observations.jsonl"))

    def api_module(self) -> ModuleType:
        return importlib.import_module(self.skill_api)

    def make_env(self, kind: str, scenario: str, options: EnvOptions | None = None) -> MultiAgentEnv:
        return self.envs[kind](scenario, options or EnvOptions())


_REGISTRY: dict[str, GameFamily] = {}


class UnknownFamilyError(CompassError, ValueError):
    """A family or env kind that no registered family provides."""


def register(family: GameFamily) -> GameFamily:
    """Add ``family`` (also used by tests and plugins that are not installed as entry points)."""
    _REGISTRY[family.name] = family
    return family


@cache
def _load_entry_points() -> None:
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        fam = ep.load()
        if not isinstance(fam, GameFamily):
            raise TypeError(f"entry point {ep.name} = {ep.value} is not a GameFamily")
        _REGISTRY.setdefault(fam.name, fam)


def families() -> dict[str, GameFamily]:
    """Every registered family by name."""
    _load_entry_points()
    if not _REGISTRY:
        raise UnknownFamilyError(
            f"no game family registered (is compass installed? entry point group "
            f"{ENTRY_POINT_GROUP!r} is empty)"
        )
    return dict(_REGISTRY)


def get_family(name: str) -> GameFamily:
    """The family called ``name``; an unknown name lists the valid ones."""
    fams = families()
    if name not in fams:
        raise UnknownFamilyError(f"unknown game family {name!r}; valid: {', '.join(sorted(fams))}")
    return fams[name]


def env_kinds() -> dict[str, GameFamily]:
    """Env kind (``smax``, ``smacv2``, ``alem``...) -> the family that provides it."""
    return {kind: fam for fam in families().values() for kind in fam.envs}


def family_for_env(env_spec: str) -> GameFamily:
    """The family of a ``KIND:SCENARIO`` spec; an unknown kind lists the valid ones."""
    kind = env_spec.split(":", 1)[0]
    kinds = env_kinds()
    if kind not in kinds:
        raise UnknownFamilyError(
            f"unknown environment {kind!r} in {env_spec!r}; valid: {', '.join(sorted(kinds))}"
        )
    return kinds[kind]


def make_env(
    env_spec: str, *, epo: bool = False, max_steps: int | None = None, external_enemy: bool = False
) -> MultiAgentEnv:
    """Build an adapter from ``smax:protoss_5_vs_5``, ``smacv2:terran_5_vs_6``, ``alem:hard``..."""
    kind, _, scenario = env_spec.partition(":")
    options = EnvOptions(epo=epo, max_steps=max_steps, external_enemy=external_enemy)
    return family_for_env(env_spec).make_env(kind, scenario, options)
