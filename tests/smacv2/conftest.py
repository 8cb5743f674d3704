"""Fixtures for the SMACv2 adapter: the adapter over the smacv2 stand-in (no game, no JAX)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# No __init__.py here on purpose: a package named ``smacv2`` under tests/ would shadow the real one.
# Import the stand-in through the repo root instead.
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from compass.games.combat.smacv2.env import Smacv2Env, make_smacv2  # noqa: E402
from tests.smacv2.fake_sc2 import StarCraftCapabilityEnvWrapper  # noqa: E402


def fake_factory(kwargs: dict) -> StarCraftCapabilityEnvWrapper:
    """Build the stand-in exactly as the adapter builds smacv2's wrapper: from keyword arguments."""
    return StarCraftCapabilityEnvWrapper(**kwargs)


@pytest.fixture
def make_env() -> Callable[..., Smacv2Env]:
    """``make_env(scenario, config=placed(...), **make_smacv2 kwargs)`` over the stand-in."""

    def build(scenario: str = "protoss_5_vs_5", config: dict | None = None, **kwargs) -> Smacv2Env:
        env = make_smacv2(scenario, env_factory=fake_factory, **kwargs)
        if config is not None:
            env.env.forced_config = config
        return env

    return build
