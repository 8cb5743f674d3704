"""GAE and PPO's clipped losses on numbers worked out by hand."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from compass.marl.ppo import clipped_policy_loss, clipped_value_loss, entropy, gae


def test_gae_by_hand():
    # gamma 0.9, lambda 0.8; the episode ends with step 2, so last_value (10) must not leak in.
    r = jnp.array([1.0, 0.0, 2.0])
    v = jnp.array([0.5, 0.4, 0.3])
    d = jnp.array([False, False, True])
    adv, targets = gae(r, v, d, jnp.array(10.0), 0.9, 0.8)
    # t2: 2 - 0.3 = 1.7; t1: 0.9*0.3 - 0.4 + 0.72*1.7 = 1.094; t0: 1 + 0.36 - 0.5 + 0.72*1.094 = 1.64768
    np.testing.assert_allclose(adv, [1.64768, 1.094, 1.7], rtol=1e-5)
    np.testing.assert_allclose(targets, [2.14768, 1.494, 2.0], rtol=1e-5)


def test_gae_stops_at_episode_boundary_and_bootstraps_the_last_value():
    r = jnp.array([1.0, 0.0, 2.0])
    v = jnp.array([0.5, 0.4, 0.3])
    d = jnp.array([True, False, False])
    adv, _ = gae(r, v, d, jnp.array(1.0), 0.9, 0.8)
    # t2: 2 + 0.9*1 - 0.3 = 2.6; t1: -0.13 + 0.72*2.6 = 1.742; t0 ended: 1 - 0.5 = 0.5
    np.testing.assert_allclose(adv, [0.5, 1.742, 2.6], rtol=1e-5)


def test_gae_vectorised_over_agents_matches_per_agent():
    rng = np.random.default_rng(0)
    r, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    d = rng.random((5, 3)) < 0.3
    last = rng.normal(size=3)
    adv, _ = gae(jnp.array(r), jnp.array(v), jnp.array(d), jnp.array(last), 0.99, 0.95)
    for k in range(3):
        one, _ = gae(
            jnp.array(r[:, k]), jnp.array(v[:, k]), jnp.array(d[:, k]), jnp.array(last[k]), 0.99, 0.95
        )
        np.testing.assert_allclose(adv[:, k], one, rtol=1e-5)


def test_clipped_policy_loss_by_hand():
    old = jnp.zeros(3)
    logp = jnp.log(jnp.array([1.5, 0.5, 1.5]))  # ratios 1.5, 0.5, 1.5
    adv = jnp.array([1.0, 1.0, -1.0])
    # min(1.5, 1.2) = 1.2; min(0.5, 0.8) = 0.5; min(-1.5, -1.2) = -1.5  -> -(1.2 + 0.5 - 1.5) / 3
    assert float(clipped_policy_loss(logp, old, adv, 0.2)) == pytest.approx(-0.2 / 3, rel=1e-5)


def test_clipped_value_loss_by_hand():
    # plain (2-3)^2 = 1; clipped value 1.2 -> (1.2-3)^2 = 3.24; the larger, halved
    loss = clipped_value_loss(jnp.array([2.0]), jnp.array([1.0]), jnp.array([3.0]), 0.2)
    assert float(loss) == pytest.approx(1.62, rel=1e-5)


def test_entropy_ignores_masked_actions():
    logits = jnp.array([[0.0, 0.0, -1e10]])  # two legal actions, equally likely
    assert float(entropy(logits)[0]) == pytest.approx(np.log(2), rel=1e-5)
