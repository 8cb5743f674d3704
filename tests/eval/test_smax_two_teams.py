"""SMAX with the enemy team driven from outside: its views are in its own frame and its attacks hit
the agent they name."""

from __future__ import annotations

import numpy as np
import pytest

from compass.games.combat.smax import SmaxEnv
from compass.games.combat.text import ATTACK_OFFSET, MOVE_WEST, STOP

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env() -> SmaxEnv:
    return SmaxEnv("protoss_5_vs_5", enemy="external")


def test_enemy_views_are_in_the_enemy_frame(env):
    env.reset(4)
    s = env.snap
    views = env.enemy_views()
    assert len(views) == env.n_enemies
    for j, v in enumerate(views):
        assert (v.own.x, v.own.y) == (s.pos[env.n_agents + j, 0], s.pos[env.n_agents + j, 1])
        for e in v.entities:
            u = e.id if e.team == "enemy" else env.n_agents + e.id  # its enemies are our agents
            assert (e.x, e.y) == (s.pos[u, 0], s.pos[u, 1])


def test_enemy_attacks_hit_the_named_agent_only(env):
    env.reset(4)
    n = env.n_agents
    target = 0  # not the middle unit: SMAX numbers the enemy's targets in reverse (0 <-> 4)
    hit = False
    for _ in range(120):
        s = env.snap
        before = s.health[:n].copy()
        # out of range, the attack order walks towards the target (as on our side)
        enemy_actions = [ATTACK_OFFSET + target if v.alive else 0 for v in env.enemy_views()]
        res = env.step([STOP] * n, enemy_actions)
        lost = before - env.snap.health[:n]
        assert np.all(lost[np.arange(n) != target] <= 1e-9), "an agent nobody attacked lost health"
        hit |= lost[target] > 0
        if res.done or not env.snap.alive[target]:
            break
    assert hit, "the named agent was never hit"


def test_native_actions_map_to_the_team_frame(env):
    env.reset(0)
    k = 1
    assert env.native_to_smacv2(0, 5 + k) == ATTACK_OFFSET + k
    assert env.native_to_smacv2(1, 5 + k) == ATTACK_OFFSET + env.n_agents - 1 - k  # SMAX counts in reverse
    assert env.native_to_smacv2(1, 3) == MOVE_WEST
    obs, avail = env.native_obs(1)
    assert obs.shape[0] == env.n_enemies and avail.shape == (env.n_enemies, 5 + env.n_agents)


def test_enemy_actions_only_with_an_external_enemy(smax_protoss, env):
    smax_protoss.reset(0)
    with pytest.raises(ValueError, match="enemy_actions are given exactly when"):
        smax_protoss.step([STOP] * 5, [STOP] * 5)
    env.reset(0)
    with pytest.raises(ValueError, match="enemy_actions are given exactly when"):
        env.step([STOP] * 5)
