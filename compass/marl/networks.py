"""Actor (shared by all agents, recurrent) and centralised critic (world state + own observation)."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


class ScannedGRU(nn.Module):
    """A GRU scanned over time whose carry resets where ``dones`` is set (episode boundaries)."""

    @nn.compact
    def __call__(self, carry, xs):
        x, dones = xs
        carry = jnp.where(dones[:, None], jnp.zeros_like(carry), carry)
        carry, y = nn.GRUCell(features=carry.shape[-1])(carry, x)
        return carry, y


def scan_gru():
    return nn.scan(
        ScannedGRU, variable_broadcast="params", in_axes=0, out_axes=0, split_rngs={"params": False}
    )


class Actor(nn.Module):
    """obs (T, B, D), dones (T, B), avail (T, B, A) -> new carry, masked logits (T, B, A)."""

    n_actions: int
    hidden: int = 128

    @nn.compact
    def __call__(self, carry, obs, dones, avail):
        x = nn.relu(nn.Dense(self.hidden, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(obs))
        carry, x = scan_gru()()(carry, (x, dones))
        x = nn.relu(nn.Dense(self.hidden, kernel_init=nn.initializers.orthogonal(2))(x))
        logits = nn.Dense(self.n_actions, kernel_init=nn.initializers.orthogonal(0.01))(x)
        return carry, jnp.where(avail, logits, -1e10)


class Critic(nn.Module):
    """Centralised value: the world state (same for the team) concatenated with the agent's observation."""

    hidden: int = 128

    @nn.compact
    def __call__(self, x):
        for _ in range(2):
            x = nn.relu(nn.Dense(self.hidden, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(x))
        return nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0))(x)[..., 0]


def init_carry(batch: int, hidden: int) -> jax.Array:
    return jnp.zeros((batch, hidden), dtype=jnp.float32)
