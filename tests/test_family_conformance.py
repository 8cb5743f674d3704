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

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from compass.core.family import families, get_family
from compass.games import conformance
from compass.games.conformance import Played
from compass.sandbox.guards import allowed_builtins
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
def played(request) -> Played:
    """A few steps of each env case with the family's default action (views perceived with relays)."""
    fam_name, factory = ENV_CASES[request.param]
    fam = get_family(fam_name)
    return conformance.play_a_few_steps(fam, factory())


# The checks live in compass.games.conformance, so a game in another package can run them too.


@pytest.mark.parametrize("name", FAMILIES)
def test_descriptor_is_complete(name):
    conformance.check_descriptor(get_family(name))


def test_reset_and_step_shapes_and_types(played):
    conformance.check_reset_and_step(played)


def test_text_round_trip(played):
    conformance.check_text_round_trip(played)


@pytest.mark.parametrize("name", FAMILIES)
def test_every_prompt_placeholder_is_filled(name):
    conformance.check_prompt_placeholders(get_family(name))


@pytest.mark.parametrize("name", FAMILIES)
def test_every_api_name_a_prompt_mentions_exists(name):
    conformance.check_prompt_api_names(get_family(name))


def test_prompt_rules_do_not_contradict_the_sandbox():
    builtins = set(allowed_builtins())
    assert {"sorted", "zip", "tuple", "min", "max"} <= builtins and "open" not in builtins
    for name in FAMILIES:
        conformance.check_prompt_rules(get_family(name))


@pytest.mark.parametrize("name", FAMILIES)
def test_skills_check_runs_each_seed_skill_on_recorded_observations(name):
    conformance.check_seed_skills(get_family(name))


@pytest.mark.parametrize("name", FAMILIES)
def test_synthesis_produces_and_validates_a_new_skill(name, tmp_path: Path):
    fam = get_family(name)
    view = conformance.synthesis_view(fam)
    script = ScriptedVLM(synth_agent=view.agent_id)
    with FakeVLMServer(responder=lambda request: script(request.text)) as server:
        client = VLMClient.from_spec(server.spec("openai", "conformance"), VLMConfig(max_retries=0))
        new = conformance.check_synthesis(fam, client, tmp_path, view)
    from compass.skills.library import SkillLibrary

    assert SkillLibrary(tmp_path, name).get(new).meta["model"].startswith("openai:conformance@")


@pytest.mark.parametrize("case", sorted(ENV_CASES))
def test_batched_steps_equal_single_steps(case):
    """Envs that step in a batch (eval's batched episodes) step as they would alone; an idle one
    is frozen. A family's ``batch_envs`` kinds must make such envs."""
    fam_name, factory = ENV_CASES[case]
    fam = get_family(fam_name)
    env = factory()
    kind = case.split("-")[0]  # the env kind of the case (smax, smacv2, alem)
    if kind in fam.batch_envs:
        assert getattr(env, "can_batch", False), (
            f"{fam.name} lists {kind} in batch_envs but its env cannot batch"
        )
    conformance.check_batch_step(fam, factory)


def test_a_broken_batch_step_fails_the_check():
    """Freezing that does not freeze is caught: an idle env that is stepped anyway."""
    from compass.games.combat.smax import SmaxEnv

    class Unfrozen(SmaxEnv):
        def step_idle(self):
            return self, np.full(self.n_agents, 4, dtype=np.int32)  # SMAX stop, but stepped

    fam = get_family("combat")
    with pytest.raises(conformance.ConformanceError, match="idle must freeze it"):
        conformance.check_batch_step(fam, lambda: Unfrozen("protoss_5_vs_5"))


def test_a_broken_family_fails_the_checks(played):
    """The checks can fail: a parser that misreads the text and a descriptor with an unknown
    synthesis kind are each reported, naming the family."""
    from dataclasses import replace

    fam = played.family
    misreads = replace(fam, view_from_text=lambda text: fam.view_from_text(text.replace("1", "2", 1)))
    with pytest.raises(conformance.ConformanceError, match=fam.name):
        conformance.check_text_round_trip(replace(played, family=misreads))
    with pytest.raises(conformance.ConformanceError, match="synthesis must be refine or whole"):
        conformance.check_descriptor(replace(fam, synthesis="guess"))
