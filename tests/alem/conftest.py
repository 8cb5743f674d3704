"""ALEM test fixtures: the overworld env is compiled once per session (JAX cache on disk too)."""

from __future__ import annotations

import pytest
from alem_testlib import HAVE_ALEM, restore_edited, seed0_overworld


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


@pytest.fixture
def downed_teammate(alem_overworld):
    """A factory: seed 0's overworld with agent 2's body ``east`` tiles east of agent 1, on plain
    grass over ``rows`` (offsets from agent 1's row) and columns 0..``east`` + ``beyond`` from it
    (no coordination block in the way); ``fields`` set more of agent 2's state (``player_food=0``).
    Returns the env and the views of one Noop step after the edit (the restored views predate it)."""

    def make(max_steps: int, east: int, rows=(0,), beyond: int = 0, **fields):
        import jax.numpy as jnp
        from alem.alem_coop.constants import BlockType

        env = alem_overworld(max_steps, text=False)
        cp, st, level, row, col, grid = seed0_overworld(env)
        for r in rows:
            for c in range(col, col + east + beyond + 1):
                grid = grid.at[level, row + r, c].set(BlockType.GRASS.value)
        edits = {
            "player_position": st.player_position.at[2].set(jnp.array([row, col + east], jnp.int32)),
            "player_alive": st.player_alive.at[2].set(False),
            "player_health": st.player_health.at[2].set(0.0),
        }
        edits |= {k: getattr(st, k).at[2].set(v) for k, v in fields.items()}
        st = st.replace(map=grid, **edits)
        return env, restore_edited(env, cp, st)

    return make
