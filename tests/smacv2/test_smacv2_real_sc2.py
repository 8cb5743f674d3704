"""The adapter on the real smacv2 and StarCraft II: runs only where both are installed."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from compass.games.combat.smacv2.install import find_sc2
from compass.games.combat.text import obs_data_from_view, parse_combat_text


def _smacv2_and_game() -> bool:
    spec = importlib.util.find_spec("smacv2")
    return spec is not None and spec.origin not in (None, "namespace") and find_sc2()[0] is not None


pytestmark = [
    pytest.mark.sc2,
    pytest.mark.skipif(not _smacv2_and_game(), reason="needs smacv2, StarCraft II and the SMACv2 maps"),
]


@pytest.mark.parametrize("scenario,epo", [("protoss_5_vs_5", False), ("terran_5_vs_6", True)])
def test_real_episode_steps_with_views_from_the_game(scenario, epo):
    from compass.games.combat.smacv2.env import make_smacv2

    env = make_smacv2(scenario, epo=epo, max_steps=30)
    try:
        views = env.reset(0)
        assert len(views) == env.n_agents and env.n_actions == 6 + env.n_enemies
        rng = np.random.default_rng(0)
        for _ in range(30):
            for v in views:
                assert parse_combat_text(v.text).available_actions == obs_data_from_view(v).available_actions
            res = env.step([int(rng.choice(v.avail_actions)) for v in views])
            assert res.info["replaced_actions"] == 0  # the env's own legal actions go through unchanged
            views = res.views
            if res.done:
                assert res.outcome in ("win", "loss", "timeout")
                break
        assert env.render_global().shape[2] == 3
    finally:
        env.close()
