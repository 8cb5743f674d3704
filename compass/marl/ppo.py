"""The maths of PPO, as plain functions: GAE and the clipped losses (tested on hand-computed numbers)."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def gae(rewards, values, dones, last_value, gamma: float, lam: float):
    """Generalised advantage estimation over time (axis 0).

    ``dones[t]`` is true when the episode ended with step ``t`` (no bootstrap past it).
    Returns ``(advantages, targets)`` with ``targets = advantages + values``.
    """

    def step(carry, x):
        next_adv, next_value = carry
        r, v, d = x
        not_done = 1.0 - d.astype(jnp.float32)
        delta = r + gamma * next_value * not_done - v
        adv = delta + gamma * lam * not_done * next_adv
        return (adv, v), adv

    _, adv = jax.lax.scan(
        step, (jnp.zeros_like(last_value), last_value), (rewards, values, dones), reverse=True
    )
    return adv, adv + values


def clipped_policy_loss(logp, old_logp, adv, clip_eps: float):
    """PPO's clipped surrogate, to be minimised (advantages already normalised by the caller)."""
    ratio = jnp.exp(logp - old_logp)
    return -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - clip_eps, 1 + clip_eps) * adv).mean()


def clipped_value_loss(value, old_value, targets, clip_eps: float):
    """The larger of the plain and the clipped squared error, halved (as in MAPPO)."""
    clipped = old_value + jnp.clip(value - old_value, -clip_eps, clip_eps)
    return 0.5 * jnp.maximum((value - targets) ** 2, (clipped - targets) ** 2).mean()


def masked_log_softmax(logits):
    return jax.nn.log_softmax(logits, axis=-1)


def entropy(logits):
    logp = jax.nn.log_softmax(logits, axis=-1)
    p = jnp.exp(logp)
    return -(jnp.where(p > 0, p * logp, 0.0)).sum(-1)
