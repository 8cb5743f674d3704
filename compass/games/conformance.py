"""The GameFamily contract as checks a game package can run on itself (PettingZoo's ``api_test``
is the model).

``tests/test_family_conformance.py`` runs them on every registered family; a game that lives in
another package runs the same ones from its own tests::

    from compass.core.family import get_family
    from compass.games import conformance

    fam = get_family("mygame")
    conformance.check_family(fam, lambda: make_env("mygame:small", max_steps=20))

Each check raises :class:`ConformanceError` naming what is wrong and where. Synthesis is checked
by :func:`check_synthesis` with a model client the caller provides (the tests use a scripted one).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compass.comm import CommProtocol
from compass.core.family import GameFamily
from compass.core.types import EVENTS, AgentView, Entity, MultiAgentEnv, OwnUnit, StepResult

#: the fewest recorded observations each seed skill must run on
MIN_OBSERVATIONS = 50
#: stand-ins in answer formats for the name the model picks (not calls of an API name)
ANSWER_PLACEHOLDERS = frozenset({"skill_name", "function_name"})
_CALL = re.compile(r"(?<![\w.\[])([A-Za-z_][A-Za-z0-9_]*)\((?!s\))")
_DEF = re.compile(r"\bdef \[?([A-Za-z_]\w*)\]?\(")


class ConformanceError(AssertionError):
    """A family breaks the contract; the message says which check and what it found."""


def _need(ok: object, what: str) -> None:
    if not ok:
        raise ConformanceError(what)


@dataclass
class Played:
    """A few steps of an env with the family's default action (views as perceived, with relays)."""

    family: GameFamily
    env: MultiAgentEnv
    seed: int
    first_texts: list[str]
    perceived: list[list[AgentView]]
    results: list[StepResult]


def play_a_few_steps(family: GameFamily, env: MultiAgentEnv, seed: int = 7, steps: int = 6) -> Played:
    """Reset ``env`` with ``seed`` and step it with the family's default action."""
    api = family.api_module()
    comm = CommProtocol("multihop", seed=0)
    views = env.reset(seed)
    first_texts = [v.text for v in views]
    perceived_all, results = [], []
    for t in range(steps):
        comm.exchange(t, views)
        perceived = []
        for v in views:
            relayed = comm.relayed_for(v.agent_id, v) if v.alive else ()
            perceived.append(v.with_entities(v.entities + tuple(relayed)) if relayed else v)
        perceived_all.append(perceived)
        res = env.step([api.default_action(v) for v in perceived])
        results.append(res)
        views = res.views
        if res.done:
            break
    return Played(family, env, seed, first_texts, perceived_all, results)


def _step_summary(res: StepResult) -> tuple:
    return (res.done, res.outcome, list(res.rewards), [v.text for v in res.views])


def check_batch_step(fam: GameFamily, make_env: Callable[[], MultiAgentEnv], steps: int = 6) -> None:
    """For an env that steps in a batch (``can_batch``: :class:`compass.core.types.BatchStep`):
    three envs stepped together give what each gives stepped alone, and an env left idle in the
    batch (an ended episode) is frozen: it goes on, after two idle steps, as if they never were."""
    envs = [make_env() for _ in range(3)]
    if not getattr(envs[0], "can_batch", False):
        return
    api = fam.api_module()
    seeds = [7, 8, 9]
    idle = {2, 3}  # the steps lane 1 sits out

    def alone(seed: int, skip: set[int]) -> list[tuple]:
        env = make_env()
        views, out = env.reset(seed), []
        for t in range(steps + len(skip)):
            if t in skip:
                continue
            res = env.step([api.default_action(v) for v in views])
            out.append(_step_summary(res))
            views = res.views
            if res.done:
                break
        return out

    expected = [alone(s, idle if b == 1 else set()) for b, s in enumerate(seeds)]
    views = [e.reset(s) for e, s in zip(envs, seeds, strict=True)]
    got: list[list[tuple]] = [[], [], []]
    running = {0, 1, 2}
    for t in range(steps + len(idle)):
        live = [b in running and not (b == 1 and t in idle) and len(got[b]) < steps for b in range(3)]
        inputs = [
            e.step_begin([api.default_action(v) for v in views[b]]) if live[b] else e.step_idle()
            for b, e in enumerate(envs)
        ]
        outs = envs[0].step_batch(inputs)
        for b, e in enumerate(envs):
            if live[b]:
                res = e.step_end(outs[b])
                got[b].append(_step_summary(res))
                views[b] = res.views
                if res.done:
                    running.discard(b)
    for b in range(3):
        _need(
            got[b] == expected[b][:steps],
            f"{fam.name}: env {b} (seed {seeds[b]}) stepped in a batch differs from stepping it alone"
            + (" after sitting out two steps (idle must freeze it)" if b == 1 else ""),
        )


def check_descriptor(fam: GameFamily) -> None:
    """The descriptor names envs, a task, legends, prompts, seed skills, observations and an API
    whose ``make_api`` builds exactly ``EXPORTS``."""
    from compass.planner.prompts import REQUIRED, load_templates

    _need(
        fam.envs and fam.default_task.strip() and fam.frame_legend.strip(),
        f"{fam.name}: incomplete descriptor",
    )
    _need(fam.synthesis in ("refine", "whole"), f"{fam.name}: synthesis must be refine or whole")
    missing = set(REQUIRED) - set(load_templates(fam.name))
    _need(not missing, f"{fam.name}: prompts missing: {sorted(missing)}")
    _need(sorted(fam.seed_skills_dir.glob("*.py")), f"{fam.name}: no seed skills in {fam.seed_skills_dir}")
    _need(fam.observations_path.is_file(), f"{fam.name}: no recorded observations at {fam.observations_path}")
    api = fam.api_module()
    built = api.make_api(None, random.Random(0))
    _need(list(built) == list(api.EXPORTS), f"{fam.name}: make_api must build exactly EXPORTS, in order")
    _need(len(set(api.EXPORTS)) == len(api.EXPORTS), f"{fam.name}: EXPORTS has duplicates")
    _need("parse_obs" in api.EXPORTS, f"{fam.name}: EXPORTS lacks parse_obs")
    _need(callable(api.default_action), f"{fam.name}: the skill API has no default_action")


def check_reset_and_step(played: Played) -> None:
    """Views, rewards, outcomes and events have the contract's shapes and types; the same seed
    gives the same first observation."""
    fam, env = played.family, played.env
    _need(played.results, f"{fam.name}: no step was taken")
    n = env.n_agents
    for views in played.perceived:
        _need([v.agent_id for v in views] == list(range(n)), f"{fam.name}: views not in agent order")
        for v in views:
            where = f"{fam.name}: agent {v.agent_id} step {v.step}"
            _need(
                isinstance(v, AgentView) and v.family == fam.name, f"{where}: not an AgentView of the family"
            )
            _need(isinstance(v.own, OwnUnit), f"{where}: own is not an OwnUnit")
            _need(all(isinstance(e, Entity) for e in v.entities), f"{where}: an entity is not an Entity")
            _need(isinstance(v.text, str) and v.text.strip(), f"{where}: empty text")
            _need(isinstance(v.avail_actions, tuple) and v.avail_actions, f"{where}: no available actions")
            _need(
                all(isinstance(a, int) and 0 <= a < env.n_actions for a in v.avail_actions),
                f"{where}: an available action is out of range",
            )
            _need(isinstance(v.alive, bool) and isinstance(v.step, int), f"{where}: alive/step types")
    for k, res in enumerate(played.results):
        where = f"{fam.name}: step {k}"
        _need(
            isinstance(res, StepResult) and len(res.views) == n and len(res.rewards) == n,
            f"{where}: result shape",
        )
        _need(all(isinstance(r, float) for r in res.rewards), f"{where}: rewards must be floats")
        _need(isinstance(res.done, bool) and isinstance(res.info, dict), f"{where}: done/info types")
        _need(res.outcome in ("win", "loss", "timeout", "running"), f"{where}: outcome {res.outcome!r}")
        _need((res.outcome == "running") == (not res.done), f"{where}: outcome and done disagree")
        for ev in res.info.get(EVENTS, []):  # what the runner traces and the viewer jumps to
            _need(isinstance(ev.get("kind"), str) and ev["kind"], f"{where}: event without a kind: {ev}")
            _need(isinstance(ev.get("text"), str), f"{where}: event without text: {ev}")
            _need(ev.get("agent") is None or 0 <= ev["agent"] < n, f"{where}: event agent out of range: {ev}")
            json.dumps(ev)
    again = [v.text for v in env.reset(played.seed)]
    _need(again == played.first_texts, f"{fam.name}: reset({played.seed}) twice gives different observations")


def _entity_key(e: Entity) -> tuple:
    return (e.team, e.unit_type, e.visible, e.source if not e.visible else None)


def check_text_round_trip(played: Played) -> None:
    """``view_from_text(view.text)`` agrees with the view on what skills read."""
    fam = played.family
    checked = 0
    for views in played.perceived:
        for v in views:
            where = f"{fam.name}: agent {v.agent_id} step {v.step}"
            back = fam.view_from_text(v.text)
            _need(isinstance(back, AgentView) and back.family == fam.name, f"{where}: not an AgentView")
            _need(
                (back.agent_id, back.step, back.alive) == (v.agent_id, v.step, v.alive),
                f"{where}: id/step/alive",
            )
            _need(back.avail_actions == v.avail_actions, f"{where}: available actions differ")
            _need(back.text == v.text, f"{where}: text differs")
            if not v.alive:
                continue
            _need(abs(back.own.x - v.own.x) < 0.02 * max(v.own.map_width, 1), f"{where}: own x")
            _need(abs(back.own.y - v.own.y) < 0.02 * max(v.own.map_height, 1), f"{where}: own y")
            _need(
                sorted(map(_entity_key, back.entities)) == sorted(map(_entity_key, v.entities)),
                f"{where}: entities differ",
            )
            pairs = zip(
                sorted(back.entities, key=lambda e: (_entity_key(e), e.rel_x, e.rel_y)),
                sorted(v.entities, key=lambda e: (_entity_key(e), e.rel_x, e.rel_y)),
                strict=True,
            )
            for b, e in pairs:
                _need(
                    abs(b.rel_x - e.rel_x) < 0.011 and abs(b.rel_y - e.rel_y) < 0.011, f"{where}: {b} vs {e}"
                )
            checked += 1
    _need(checked, f"{fam.name}: no living agent to check")


def recorded_views(fam: GameFamily, n: int | None = None) -> list[AgentView]:
    """The family's recorded observations as views."""
    from compass.skills.observations import load_observations

    return [fam.view_from_text(t) for t in load_observations(fam.observations_path)[:n]]


def check_prompt_placeholders(fam: GameFamily) -> None:
    """Every placeholder of every prompt is filled; synthesis and repair state the API and the rules."""
    from compass.planner.modules import common_values, skill_listing
    from compass.planner.observation import build_observation
    from compass.planner.prompts import STATIC_PLACEHOLDERS, load_templates
    from compass.skills.library import SkillLibrary

    templates = load_templates(fam.name)
    view = next(v for v in recorded_views(fam) if v.alive)
    lib = SkillLibrary(None, fam.name)
    current = lib.get(lib.names()[0])
    values = common_values(
        unit_type=view.own.unit_type,
        unit_id=view.agent_id,
        scenario="conformance",
        task="a task",
        overall_task="the team's goal",
        obs=build_observation(view, images=False),
        ally_tasks={},
        reward=0.0,
        history="None.",
        last_reasoning="",
        situation="",
        reflection="",
        current=current,
    )
    values["skill_library"] = skill_listing([current])
    for module, template in templates.items():
        for slot in STATIC_PLACEHOLDERS:
            _need(f"<<<{slot}>>>" not in template.text, f"{fam.name}/{module}: static slot {slot} left")
        prompt = template.fill(values)
        _need(
            "<<<" not in prompt and ">>>" not in prompt, f"{fam.name}/{module}: a placeholder is not filled"
        )
    for module in ("skill_synthesis", "skill_repair"):
        if module in templates:
            text = templates[module].text
            _need(
                "Skill API (globals of every skill" in text and "Sandbox rules" in text,
                f"{fam.name}/{module}: must state the skill API and the sandbox rules",
            )


def check_prompt_api_names(fam: GameFamily) -> None:
    """Identifiers a prompt calls are exported helpers, sandbox builtins or modules, the nested
    helpers refine-synthesis edits, or functions the prompt itself defines; the synthesis prompt
    lists every exported name."""
    from compass.planner.prompts import load_templates
    from compass.planner.synthesis import NESTED
    from compass.sandbox.guards import ALLOWED_MODULES, allowed_builtins

    exports = set(fam.api_module().EXPORTS)
    known = exports | set(allowed_builtins()) | set(ALLOWED_MODULES) | set(NESTED) | ANSWER_PLACEHOLDERS
    templates = load_templates(fam.name)
    for module, template in templates.items():
        called = set(_CALL.findall(template.text)) - set(_DEF.findall(template.text)) - known
        _need(not called, f"{fam.name}/{module} mentions {sorted(called)}, which no skill can call")
    text = templates["skill_synthesis"].text
    unlisted = [n for n in sorted(exports) if not re.search(rf"\b{re.escape(n)}\b", text)]
    _need(not unlisted, f"{fam.name}/skill_synthesis does not list {unlisted}")


def check_prompt_rules(fam: GameFamily) -> None:
    """No prompt forbids what the sandbox allows (``sorted``, ``zip``, modules beyond math/random)."""
    from compass.planner.prompts import load_templates

    for module, template in load_templates(fam.name).items():
        _need(
            not re.search(r"no sorted|sorted, zip and tuple are not", template.text),
            f"{fam.name}/{module}: forbids builtins the sandbox allows",
        )
        _need("other than math and random" not in template.text, f"{fam.name}/{module}: wrong module rule")


def check_seed_skills(fam: GameFamily, min_observations: int = MIN_OBSERVATIONS) -> None:
    """Every seed skill loads and runs without error on at least ``min_observations`` recorded ones."""
    from compass.skills.check import check_library
    from compass.skills.library import SkillLibrary

    lib = SkillLibrary(None, fam.name)
    _need(not lib.problems, f"{fam.name}: seed library problems: {[str(p) for p in lib.problems]}")
    rows = check_library(lib)
    _need(
        [r.name for r in rows] == sorted(lib.compiled) == sorted(lib.names()),
        f"{fam.name}: not every skill checked",
    )
    for row in rows:
        _need(
            row.runs >= min_observations,
            f"{fam.name}/{row.name}: ran on {row.runs} < {min_observations} observations",
        )
        _need(row.errors == [], f"{fam.name}/{row.name}: {row.errors[:3]}")


def check_synthesis(fam: GameFamily, client: Any, workdir: Path, agent_view: AgentView | None = None) -> str:
    """Synthesis with ``client`` (a :class:`~compass.vlm.VLMClient` whose model writes a new skill
    for the view's agent) produces a generated skill that runs on that view and is stored; its name."""
    from compass.planner.base import DecisionContext
    from compass.planner.synthesis import try_skill
    from compass.planner.vlm_planner import VLMPlanner
    from compass.skills.library import SkillLibrary

    shutil.copytree(fam.seed_skills_dir, workdir / fam.name, ignore=shutil.ignore_patterns("_stats.json"))
    lib = SkillLibrary(workdir, fam.name)
    before = set(lib.names())
    view = agent_view or synthesis_view(fam)
    planner = VLMPlanner(lib, client, images=False)
    ctx = DecisionContext(
        agent_id=view.agent_id,
        step=view.step,
        view=view,
        task=fam.default_task,
        trigger="start",
        scenario=f"{fam.name}:conformance",
    )

    async def decide():
        try:
            return await planner.decide(ctx)
        finally:
            await planner.aclose()

    decision = asyncio.run(decide())
    records = [r for r in decision.records if r.get("module") == "skill_synthesis"]
    added = [r for r in records if r.get("kind") == "added"]
    _need(added, f"{fam.name}: synthesis added no skill: {records}")
    new = added[0]["skill"]
    _need(
        decision.skill == new and new not in before and new in lib.compiled,
        f"{fam.name}: {new} not chosen/compiled",
    )
    skill = lib.get(new)
    _need(skill.provenance == "generated", f"{fam.name}/{new}: provenance {skill.provenance!r}")
    _need(
        skill.meta["replaced"] == ("skill" if fam.synthesis == "whole" else "score_target"),
        f"{fam.name}/{new}: replaced {skill.meta.get('replaced')!r}",
    )
    problem = try_skill(skill.code, new, fam.name, view)
    _need(problem is None, f"{fam.name}/{new}: fails on the observation it was made for: {problem}")
    _need(new in SkillLibrary(workdir, fam.name).compiled, f"{fam.name}/{new}: not stored on disk")
    return new


def synthesis_view(fam: GameFamily) -> AgentView:
    """A living agent that knows an enemy (refine synthesis edits targeting, so it needs a target)."""
    return next(v for v in recorded_views(fam) if v.alive and v.enemies)


def check_family(fam: GameFamily, make_env: Callable[[], MultiAgentEnv]) -> None:
    """Every check but synthesis (which needs a model): the descriptor, a few steps of
    ``make_env()``, the text round trip, the prompts and the seed skills."""
    check_descriptor(fam)
    played = play_a_few_steps(fam, make_env())
    check_reset_and_step(played)
    check_text_round_trip(played)
    check_batch_step(fam, make_env)
    check_prompt_placeholders(fam)
    check_prompt_api_names(fam)
    check_prompt_rules(fam)
    check_seed_skills(fam)
