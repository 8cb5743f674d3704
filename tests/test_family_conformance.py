"""Every registered game family honours the GameFamily contract (PettingZoo's ``api_test`` is the model).

Parametrised over ``compass.core.family.families()``, so a third game gets these checks by being
registered: reset/step shapes and types, the text round trip (``view_from_text(view.text)`` agrees
with the view on what skills read), every prompt placeholder filled, every API name a prompt
mentions exported, ``skills check`` running each seed skill on at least 50 recorded observations,
and synthesis producing and validating a new skill with a scripted VLM server.

Env cases: combat on SMAX and on SMACv2 (through the smacv2 stand-in ``tests/smacv2/fake_sc2.py``),
ALEM on ``alem:overworld``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compass.comm import CommProtocol
from compass.core.family import GameFamily, families, get_family
from compass.core.types import EVENTS, AgentView, Entity, OwnUnit, StepResult
from compass.planner.base import DecisionContext
from compass.planner.modules import common_values, skill_listing
from compass.planner.observation import build_observation
from compass.planner.prompts import REQUIRED, STATIC_PLACEHOLDERS, load_templates
from compass.planner.synthesis import NESTED, try_skill
from compass.planner.vlm_planner import VLMPlanner
from compass.sandbox.guards import ALLOWED_MODULES, allowed_builtins
from compass.skills.check import check_library, load_observations
from compass.skills.library import SkillLibrary
from compass.vlm import VLMClient, VLMConfig
from tests.fakes.fake_vlm_server import FakeVLMServer
from tests.planner.scripted import ScriptedVLM

FAMILIES = sorted(families())


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real keys leak in, and token counting never tries to download BPE files."""
    from compass.vlm import tokens as vlm_tokens

    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(vlm_tokens, "_encoding", lambda name: None)


MIN_OBSERVATIONS = 50
HAVE_ALEM = importlib.util.find_spec("alem") is not None


# --- env cases ---------------------------------------------------------------------------------


def _smax() -> Any:
    from compass.core.family import make_env

    return make_env("smax:protoss_5_vs_5", max_steps=20)


def _smacv2() -> Any:
    from compass.games.combat.smacv2.env import make_smacv2
    from tests.smacv2.fake_sc2 import StarCraftCapabilityEnvWrapper

    return make_smacv2("protoss_5_vs_5", env_factory=lambda kwargs: StarCraftCapabilityEnvWrapper(**kwargs))


def _alem() -> Any:
    if not HAVE_ALEM:
        pytest.skip("alem-env is not installed")
    from compass.core.family import make_env

    return make_env("alem:overworld", max_steps=20)


ENV_CASES: dict[str, tuple[str, Callable[[], Any]]] = {
    "smax": ("combat", _smax),
    "smacv2-fake": ("combat", _smacv2),
    "alem-overworld": ("alem", _alem),
}


def test_every_registered_family_has_an_env_case():
    assert {fam for fam, _ in ENV_CASES.values()} == set(FAMILIES)


@pytest.fixture(scope="module", params=sorted(ENV_CASES))
def played(request) -> tuple[GameFamily, Any, list[str], list[list[AgentView]], list[StepResult]]:
    """A few steps of each env case with the family's default action (views perceived with relays)."""
    fam_name, factory = ENV_CASES[request.param]
    fam = get_family(fam_name)
    env = factory()
    api = fam.api_module()
    comm = CommProtocol("multihop", seed=0)
    views = env.reset(7)
    first_texts = [v.text for v in views]
    perceived_all, results = [], []
    for t in range(6):
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
    return fam, env, first_texts, perceived_all, results


# --- the descriptor ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_descriptor_is_complete(name):
    fam = get_family(name)
    assert fam.name == name and fam.envs and fam.default_task.strip() and fam.frame_legend.strip()
    assert fam.synthesis in ("refine", "whole")
    assert set(REQUIRED) <= set(load_templates(name))
    assert sorted(p.stem for p in fam.seed_skills_dir.glob("*.py")), "no seed skills"
    assert fam.observations_path.is_file()
    api = fam.api_module()
    built = api.make_api(None, random.Random(0))
    assert list(built) == list(api.EXPORTS)  # ONE list of exported names: make_api builds exactly it
    assert len(set(api.EXPORTS)) == len(api.EXPORTS) and "parse_obs" in api.EXPORTS
    assert callable(api.default_action)


# --- reset / step ------------------------------------------------------------------------------


def test_reset_and_step_shapes_and_types(played):
    fam, env, first_texts, perceived, results = played
    assert results, "no step was taken"
    n = env.n_agents
    for views in perceived:
        assert [v.agent_id for v in views] == list(range(n))
        for v in views:
            assert isinstance(v, AgentView) and v.family == fam.name
            assert isinstance(v.own, OwnUnit) and all(isinstance(e, Entity) for e in v.entities)
            assert isinstance(v.text, str) and v.text.strip()
            assert isinstance(v.avail_actions, tuple) and v.avail_actions
            assert all(isinstance(a, int) and 0 <= a < env.n_actions for a in v.avail_actions)
            assert isinstance(v.alive, bool) and isinstance(v.step, int)
    for res in results:
        assert isinstance(res, StepResult) and len(res.views) == n and len(res.rewards) == n
        assert all(isinstance(r, float) for r in res.rewards)
        assert isinstance(res.done, bool) and isinstance(res.info, dict)
        assert res.outcome in ("win", "loss", "timeout", "running")
        assert (res.outcome == "running") == (not res.done)
        for ev in res.info.get(EVENTS, []):  # what the runner traces and the viewer jumps to
            assert isinstance(ev["kind"], str) and ev["kind"] and isinstance(ev["text"], str)
            assert ev.get("agent") is None or 0 <= ev["agent"] < n
            json.dumps(ev)
    # Same seed, same first observation.
    assert [v.text for v in env.reset(7)] == first_texts


def _entity_key(e: Entity) -> tuple:
    return (e.team, e.unit_type, e.visible, e.source if not e.visible else None)


def test_text_round_trip(played):
    fam, _, _, perceived, _ = played
    checked = relayed = 0
    for views in perceived:
        for v in views:
            back = fam.view_from_text(v.text)
            assert isinstance(back, AgentView) and back.family == fam.name
            assert (back.agent_id, back.step, back.alive) == (v.agent_id, v.step, v.alive)
            assert back.avail_actions == v.avail_actions
            assert back.text == v.text
            if not v.alive:
                continue
            assert abs(back.own.x - v.own.x) < 0.02 * max(v.own.map_width, 1)
            assert abs(back.own.y - v.own.y) < 0.02 * max(v.own.map_height, 1)
            assert sorted(map(_entity_key, back.entities)) == sorted(map(_entity_key, v.entities))
            pairs = zip(
                sorted(back.entities, key=lambda e: (_entity_key(e), e.rel_x, e.rel_y)),
                sorted(v.entities, key=lambda e: (_entity_key(e), e.rel_x, e.rel_y)),
                strict=True,
            )
            for b, e in pairs:
                assert abs(b.rel_x - e.rel_x) < 0.011 and abs(b.rel_y - e.rel_y) < 0.011, (b, e)
            relayed += any(not e.visible for e in v.entities)
            checked += 1
    assert checked


# --- prompts -----------------------------------------------------------------------------------


def _recorded_views(name: str, n: int | None = None) -> list[AgentView]:
    fam = get_family(name)
    texts = load_observations(fam.observations_path)
    return [fam.view_from_text(t) for t in texts[:n]]


@pytest.mark.parametrize("name", FAMILIES)
def test_every_prompt_placeholder_is_filled(name):
    templates = load_templates(name)
    view = next(v for v in _recorded_views(name) if v.alive)
    lib = SkillLibrary(None, name)
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
            assert f"<<<{slot}>>>" not in template.text, (module, slot)
        prompt = template.fill(values)
        assert "<<<" not in prompt and ">>>" not in prompt, module
    for module in ("skill_synthesis", "skill_repair"):
        if module in templates:
            text = templates[module].text
            assert "Skill API (globals of every skill" in text and "Sandbox rules" in text, module


# Stand-ins in answer formats for the name the model picks (not calls of an API name).
ANSWER_PLACEHOLDERS = frozenset({"skill_name", "function_name"})
_CALL = re.compile(r"(?<![\w.\[])([A-Za-z_][A-Za-z0-9_]*)\((?!s\))")
_DEF = re.compile(r"\bdef \[?([A-Za-z_]\w*)\]?\(")


@pytest.mark.parametrize("name", FAMILIES)
def test_every_api_name_a_prompt_mentions_exists(name):
    """Identifiers a prompt calls (``name(``) are exported helpers, sandbox builtins or modules, the
    nested helpers refine-synthesis edits, or functions the prompt itself defines."""
    exports = set(get_family(name).api_module().EXPORTS)
    known = exports | set(allowed_builtins()) | set(ALLOWED_MODULES) | set(NESTED) | ANSWER_PLACEHOLDERS
    for module, template in load_templates(name).items():
        defined = set(_DEF.findall(template.text))
        called = set(_CALL.findall(template.text)) - defined - known
        assert not called, f"{name}/{module} mentions {sorted(called)}, which no skill can call"
    # And the synthesis prompt lists every exported name (it is rendered from EXPORTS).
    text = load_templates(name)["skill_synthesis"].text
    assert all(re.search(rf"\b{re.escape(n)}\b", text) for n in exports)


def test_prompt_rules_do_not_contradict_the_sandbox():
    builtins = set(allowed_builtins())
    assert {"sorted", "zip", "tuple", "min", "max"} <= builtins and "open" not in builtins
    for name in FAMILIES:
        for module, template in load_templates(name).items():
            assert not re.search(r"no sorted|sorted, zip and tuple are not", template.text), (name, module)
            assert "other than math and random" not in template.text, (name, module)


# --- skills check --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_skills_check_runs_each_seed_skill_on_recorded_observations(name):
    lib = SkillLibrary(None, name)
    assert not lib.problems
    rows = check_library(lib)
    assert [r.name for r in rows] == sorted(lib.compiled) == sorted(lib.names())
    for row in rows:
        assert row.runs >= MIN_OBSERVATIONS, (row.name, row.runs)
        assert row.errors == [], (row.name, row.errors[:3])


# --- synthesis ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_synthesis_produces_and_validates_a_new_skill(name, tmp_path: Path):
    fam = get_family(name)
    shutil.copytree(fam.seed_skills_dir, tmp_path / name, ignore=shutil.ignore_patterns("_stats.json"))
    lib = SkillLibrary(tmp_path, name)
    before = set(lib.names())
    # A live agent that knows an enemy (refine synthesis edits targeting, so it needs a target).
    view = next(v for v in _recorded_views(name) if v.alive and v.enemies)
    script = ScriptedVLM(synth_agent=view.agent_id)
    with FakeVLMServer(responder=lambda request: script(request.text)) as server:
        client = VLMClient.from_spec(server.spec("openai", "conformance"), VLMConfig(max_retries=0))
        planner = VLMPlanner(lib, client, images=False)
        ctx = DecisionContext(
            agent_id=view.agent_id,
            step=view.step,
            view=view,
            task=fam.default_task,
            trigger="start",
            scenario=f"{name}:conformance",
        )

        async def decide():
            try:
                return await planner.decide(ctx)
            finally:
                await planner.aclose()

        decision = asyncio.run(decide())
    records = [r for r in decision.records if r.get("module") == "skill_synthesis"]
    added = [r for r in records if r.get("kind") == "added"]
    assert added, records
    new = added[0]["skill"]
    assert decision.skill == new and new not in before and new in lib.compiled
    skill = lib.get(new)
    assert skill.provenance == "generated" and skill.meta["model"].startswith("openai:conformance@")
    assert skill.meta["replaced"] == ("skill" if fam.synthesis == "whole" else "score_target")
    assert try_skill(skill.code, new, name, view) is None  # it runs on the observation it was made for
    reloaded = SkillLibrary(tmp_path, name)
    assert new in reloaded.compiled  # written to disk, compiles again
