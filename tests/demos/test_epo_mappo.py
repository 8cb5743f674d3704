"""MAPPO under extended partial observability (EPO): the observations a MAPPO agent gets under
``epo`` are SMACv2's (an enemy seen only by the agent that spotted it first, attacks masked by
life, not range), in ``compass eval`` (the adapter's native observations) and in training
(``compass demos train --epo``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from compass.games.combat.smax import epo_native

CKPT = Path(__file__).resolve().parents[2] / "demos" / "protoss_5_vs_5" / "checkpoint"


def test_epo_native_masks_unobserved_enemies_and_unmasks_attacks_by_range():
    n_a, n_e, feat = 2, 2, 3
    # agent rows: [ally block (1 x 3) | enemy 0 (3) | enemy 1 (3) | own (2)]
    obs = np.arange(2 * 11, dtype=float).reshape(2, 11) + 1
    avail = np.zeros((2, 5 + n_e), dtype=np.uint8)
    avail[:, :5] = 1
    avail[0, 5] = 1  # agent 0 has enemy 0 in attack range
    observed = np.array([[True, False], [False, False]])  # enemy 0 spotted by agent 0; enemy 1 by nobody
    own_alive, enemy_alive = np.array([True, False]), np.array([True, True])
    got, mask = epo_native(np, obs, avail, observed, own_alive, enemy_alive, n_a, n_e, feat)
    assert np.array_equal(got[0, :6], obs[0, :6]) and not got[0, 6:9].any()  # agent 0 sees enemy 0 only
    assert np.array_equal(got[1, :3], obs[1, :3]) and not got[1, 3:9].any()  # agent 1 sees no enemy
    assert np.array_equal(got[:, 9:], obs[:, 9:])  # allies and own features untouched
    # attack any living enemy (a range mask would reveal unseen enemies); a dead agent attacks nothing
    assert mask[0, 5:].tolist() == [1, 1] and mask[1, 5:].tolist() == [0, 0]
    assert np.array_equal(mask[:, :5], avail[:, :5])


def _enemy_blocks(env, obs):
    feat = len(env._c.env._env.unit_features)
    start = (env.n_agents - 1) * feat
    return obs[:, start : start + env.n_enemies * feat].reshape(env.n_agents, env.n_enemies, feat)


def test_adapter_native_obs_under_epo_hides_what_only_a_teammate_spotted():
    from compass.games.combat.smax import SmaxEnv

    runs = {}
    for epo in (False, True):
        env = SmaxEnv("protoss_5_vs_5", epo=epo)
        env.reset(4)
        seen = []
        for _ in range(40):
            obs, _ = env.native_obs(0)
            seen.append((_enemy_blocks(env, obs) != 0).any(axis=2))  # (agent, enemy) features shown
            env.step([2] * env.n_agents)  # everyone walks north into the fight
        runs[epo] = np.array(seen)
    full, epo = runs[False], runs[True]
    assert full.sum() > 0, "the armies meet within 40 steps"
    assert (epo.sum(axis=1) <= 1).all(), "under EPO each enemy is shown to at most one agent"
    assert epo.sum() < full.sum(), "enemies in sight of several agents are hidden from all but one"


def test_mappo_team_in_compass_eval_receives_epo_observations(monkeypatch):
    """compass eval's ``mappo:`` team under ``epo: true`` is fed the masked observations."""
    from compass.eval.episode import play_episode
    from compass.eval.spec import ConfigSpec, Job
    from compass.marl.policy import GreedyPolicy

    fed: dict[bool, list] = {}
    act = GreedyPolicy.act

    def spy(self, obs, avail):
        fed[current].append((np.array(obs), np.array(avail)))
        return act(self, obs, avail)

    monkeypatch.setattr(GreedyPolicy, "act", spy)
    rows = {}
    for current in (False, True):
        fed[current] = []
        spec = ConfigSpec(team=f"mappo:{CKPT}", epo=current, comm="none")
        rows[current] = play_episode(Job("m", "smax:protoss_5_vs_5", 4, spec.fields(), 60))
    n = min(len(fed[False]), len(fed[True]))
    assert n > 10
    shown = {epo: sum(int((o != 0).sum()) for o, _ in fed[epo][:n]) for epo in fed}
    assert shown[True] < shown[False]
    # and it plays differently: the same seed does not give the same actions or outcome
    assert rows[True] != rows[False] or any(
        not np.array_equal(a[0], b[0]) for a, b in zip(fed[True][:n], fed[False][:n], strict=True)
    )


@pytest.mark.slow
def test_training_env_under_epo_gives_each_enemy_to_one_agent_and_keeps_the_shapes():
    import jax
    import jax.numpy as jnp

    from compass.marl.envs import make_marl_env

    plain = make_marl_env("smax:protoss_5_vs_5", 100)
    env = make_marl_env("smax:protoss_5_vs_5", 100, epo=True)
    assert (env.obs_dim, env.world_dim, env.n_actions) == (plain.obs_dim, plain.world_dim, plain.n_actions)
    with pytest.raises(ValueError, match="SMAX setting"):
        make_marl_env("alem:overworld", 10, epo=True)
    step = jax.jit(env.step)
    obs, st = jax.jit(env.reset)(jax.random.PRNGKey(0))
    key = jax.random.PRNGKey(1)
    spotted_ever = False
    for _ in range(40):
        key, k = jax.random.split(key)
        north = jnp.full((env.n_agents,), 2)  # SMAX native: 2 = south; the teams meet either way
        obs, st, *_ = step(k, st, jnp.where(obs.avail[:, 2], north, 4))
        observed = np.asarray(st.observed)
        assert (observed.sum(axis=1) <= 1).all()
        spotted_ever |= bool(observed.any())
    assert spotted_ever


@pytest.mark.slow
def test_demos_train_epo_writes_an_epo_checkpoint(tmp_path):
    from typer.testing import CliRunner

    from compass.cli import app

    cfg = tmp_path / "tiny.yaml"
    cfg.write_text("num_envs: 2\nnum_steps: 8\nhidden: 8\nmax_episode_steps: 20\neval_episodes: 2\n")
    out = tmp_path / "run"
    args = ["demos", "train", "--epo", "--steps", "16", "--config", str(cfg), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "checkpoint" / "meta.json").read_text())
    assert meta["epo"] is True and meta["env"] == "smax:protoss_5_vs_5"
    from compass.demos.policies import MappoPolicy

    assert "EPO-trained" in MappoPolicy(out / "checkpoint", "smax:protoss_5_vs_5").label
