"""Policies that act at the action level (no skills) in a compass env: MAPPO checkpoints and SMAX's heuristic.

Each has ``label``, ``checksum``, ``reset(env, seed)`` and ``act(env, views) -> (actions, skills)``
(``skills`` is None per agent: these policies do not run skills). Actions are the env's own
(SMACv2 indices for combat); the network and the heuristic act in SMAX's native indices, mapped
back with :func:`compass.games.combat.smax.from_smax`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from compass.core.types import AgentView


class MappoPolicy:
    """A trained MAPPO actor, greedy (argmax over legal actions), GRU state kept per episode."""

    def __init__(self, checkpoint: str | Path, env_spec: str) -> None:
        from compass.marl.policy import load_policy

        self.policy = load_policy(checkpoint, env_spec)
        self.meta = self.policy.meta
        trained = ", EPO-trained" if self.meta.get("epo") else ""
        self.label = f"MAPPO ({self.meta['steps']:,} steps{trained})"
        self.checksum = f"sha256:{self.meta['actor_sha256']}"

    def reset(self, env: Any, seed: int) -> None:
        self.policy.reset(self.meta["n_agents"])

    def act(self, env: Any, views: list[AgentView]) -> tuple[list[int], list[str | None]]:
        from compass.games.combat.smax import from_smax

        obs, avail = env.native_observation()
        native = self.policy.act(obs, avail)
        return [from_smax(int(a)) if v.alive else 0 for a, v in zip(native, views, strict=True)], [
            None
        ] * len(views)


class HeuristicPolicy:
    """SMAX's scripted heuristic (the enemy's own AI: attack the closest unit) playing the allies."""

    label = "SMAX heuristic (closest)"
    checksum = "heuristic:jaxmarl-0.2.0:closest"

    def __init__(self) -> None:
        self._fn = None
        self._state = None

    def reset(self, env: Any, seed: int) -> None:
        import jax
        import jax.numpy as jnp

        from compass.util.quiet import import_quietly

        import_quietly("jaxmarl.environments")  # its import prints on stdout
        from jaxmarl.environments.smax.heuristic_enemy import (
            create_heuristic_policy,
            get_heuristic_policy_initial_state,
        )

        smax = env.native_env
        if self._fn is None:
            policy = create_heuristic_policy(smax, 0, shoot=True, attack_mode="closest")
            agents = [f"ally_{i}" for i in range(env.n_agents)]

            def act(key, pstate, state):
                obs = smax.get_obs_unit_list(state.state)
                obs = jnp.stack([obs[a] for a in agents])
                return jax.vmap(policy)(jax.random.split(key, len(agents)), pstate, obs)

            self._fn = jax.jit(act)
            self._init = lambda n: jax.tree.map(
                lambda *xs: jnp.stack(xs), *([get_heuristic_policy_initial_state()] * n)
            )
        self._state = self._init(env.n_agents)
        self._key = jax.random.PRNGKey(seed)

    def act(self, env: Any, views: list[AgentView]) -> tuple[list[int], list[str | None]]:
        import jax

        from compass.games.combat.smax import from_smax

        self._key, k = jax.random.split(self._key)
        native, self._state = self._fn(k, self._state, env.native_state)
        native = np.asarray(native)
        return [from_smax(int(a)) if v.alive else 0 for a, v in zip(native, views, strict=True)], [
            None
        ] * len(views)


def library_checksum(lib: Any) -> str:
    """SHA-256 over the library's skill names and code hashes (what a library policy is)."""
    h = hashlib.sha256()
    for name in sorted(lib.compiled):
        h.update(f"{name}:{lib.compiled[name].code_hash}\n".encode())
    return f"sha256:{h.hexdigest()}"
