"""A trained MAPPO actor as a plain policy: SMAX's own observations in, native actions out.

This is the interface per-unit controllers use (``compass eval``'s ``mappo:DIR``, see
docs/eval.md) and that :class:`compass.demos.policies.MappoPolicy` wraps for recording.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


class GreedyPolicy:
    """Argmax over legal actions of a checkpoint's recurrent actor; GRU state kept per episode."""

    def __init__(self, checkpoint: str | Path, env_spec: str | None = None) -> None:
        import jax

        from compass.marl.checkpoint import load_actor
        from compass.marl.networks import Actor

        self.params, self.meta = load_actor(checkpoint, env_spec)
        actor = Actor(self.meta["n_actions"], self.meta["hidden"])

        def act(params, h, obs, avail):
            h, logits = actor.apply(params, h, obs[None], np.zeros((1, obs.shape[0]), bool), avail[None])
            return h, logits[0].argmax(-1)

        self._act = jax.jit(act)
        self._h: Any = None

    def reset(self, n_agents: int) -> None:
        """Start an episode for ``n_agents`` units (the GRU state is per unit)."""
        self._h = np.zeros((n_agents, self.meta["hidden"]), np.float32)

    def act(self, obs: np.ndarray, avail: np.ndarray) -> np.ndarray:
        """Native SMAX actions for ``obs[n, obs_dim]`` and legal-action masks ``avail[n, n_actions]``."""
        if obs.shape[-1] != self.meta["obs_dim"] or avail.shape[-1] != self.meta["n_actions"]:
            raise ValueError(
                f"checkpoint expects obs {self.meta['obs_dim']} / {self.meta['n_actions']} actions, "
                f"the env gives {obs.shape[-1]} / {avail.shape[-1]}"
            )
        if self._h is None or self._h.shape[0] != obs.shape[0]:
            self.reset(obs.shape[0])
        self._h, native = self._act(self.params, self._h, obs, avail.astype(bool))
        return np.asarray(native)


def load_policy(checkpoint: str | Path, env_spec: str | None = None) -> GreedyPolicy:
    """The greedy policy of a checkpoint directory (``meta.json`` + ``actor.msgpack``)."""
    return GreedyPolicy(checkpoint, env_spec)
