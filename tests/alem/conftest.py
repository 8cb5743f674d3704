"""ALEM test fixtures: the overworld env is compiled once per session (JAX cache on disk too)."""

from __future__ import annotations

import pytest
from alem_testlib import HAVE_ALEM


@pytest.fixture(scope="session")
def alem_overworld():
    """A factory of overworld AlemEnv instances sharing one compiled env (compiles on first use)."""
    if not HAVE_ALEM:
        pytest.skip("alem-env is not installed")
    from compass.games.alem.env import make_alem

    make_alem("overworld", max_steps=50)  # compile once for the session

    def make(max_steps: int = 300, text: bool = True):
        return make_alem("overworld", max_steps=max_steps, text=text)

    return make


@pytest.fixture(scope="session")
def overworld_views(alem_overworld):
    """Views of 40 random-legal steps on seed 3 (shared, read-only)."""
    import random

    env = alem_overworld(200)
    rng = random.Random(0)
    views = [env.reset(3)]
    for _ in range(40):
        res = env.step([rng.choice(v.avail_actions) for v in views[-1]])
        views.append(res.views)
    return views
