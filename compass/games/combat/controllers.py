"""Combat unit controllers that read SMAX's own observation vectors: SMAX's heuristic and MAPPO.

Both act in SMAX's native action space on ``SmaxEnv.native_obs(team)``; their actions are mapped
to SMACv2 indices in the team's frame (``SmaxEnv.native_to_smacv2``), and a move the adapter
does not offer (into the map edge) becomes stop, as in ``benchmarks/bench_combat.py``.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

import numpy as np

from compass.core.types import AgentView
from compass.games.combat.text import NOOP, STOP

#: the module the ``mappo:CKPT_DIR`` controller loads policies from (docs/eval.md: the interface)
POLICY_MODULE = "compass.marl.policy"


def _smax_env(env):
    if not hasattr(env, "native_obs"):
        raise ValueError(f"{type(env).__name__} has no SMAX observation vectors; heuristic/mappo need smax:")
    return env


def _to_actions(env, team: int, units: tuple[int, ...], native: np.ndarray, views: list[AgentView]) -> dict:
    out = {}
    for u in units:
        v = views[u]
        if not v.alive:
            continue
        a = env.native_to_smacv2(team, int(native[u]))
        out[u] = a if a in v.avail_actions else (STOP if STOP in v.avail_actions else NOOP)
    return out


@cache
def _heuristic_fn(n_allies: int, n_enemies: int, team: int):
    import jax

    from compass.util.quiet import import_quietly

    import_quietly("jaxmarl.environments")  # its import prints on stdout
    from jaxmarl.environments.smax.heuristic_enemy import (
        create_heuristic_policy,
        get_heuristic_policy_initial_state,
    )

    from compass.games.combat.smax import _compiled

    smax = _compiled(n_allies, n_enemies).env._env
    policy = create_heuristic_policy(smax, team, shoot=True, attack_mode="closest")
    return jax.jit(jax.vmap(policy)), get_heuristic_policy_initial_state


class HeuristicController:
    """SMAX's scripted policy (the one that drives its built-in enemy), for any units of either team."""

    def __init__(self, env, team: int, units: tuple[int, ...], arg: str | None = None) -> None:
        if arg:
            raise ValueError(f"heuristic takes no argument, got heuristic:{arg}")
        self.env, self.team, self.units = _smax_env(env), team, units
        n = env.n_agents if team == 0 else env.n_enemies
        self._act, self._init = _heuristic_fn(env.n_agents, env.n_enemies, team)
        self._n = n

    def reset(self, seed: int) -> None:
        import jax
        import jax.numpy as jnp

        self._key = jax.random.PRNGKey(seed * 2 + self.team + 1_000_003)
        self._state = jax.tree.map(lambda *xs: jnp.stack(xs), *([self._init()] * self._n))

    def act(self, env, views: list[AgentView]) -> dict[int, int]:
        import jax

        obs, _ = env.native_obs(self.team)
        self._key, k = jax.random.split(self._key)
        native, self._state = self._act(jax.random.split(k, self._n), self._state, obs)
        return _to_actions(env, self.team, self.units, np.asarray(native), views)


class PolicyController:
    """A trained policy loaded with ``compass.marl.policy.load_policy(CKPT_DIR)`` (MAPPO).

    The loaded object must have ``reset(n_agents)`` and ``act(obs[n, obs_dim], avail[n, n_actions])
    -> int array[n]`` in SMAX's native action space (docs/eval.md). It sees the whole team's
    observations; only the owned units' actions are used.
    """

    def __init__(self, env, team: int, units: tuple[int, ...], arg: str | None = None) -> None:
        if not arg:
            raise ValueError("mappo needs a checkpoint directory: mappo:PATH")
        if not Path(arg).exists():
            raise FileNotFoundError(f"mappo checkpoint {arg} does not exist")
        try:
            module = importlib.import_module(POLICY_MODULE)
        except ImportError as e:
            raise ImportError(
                f"mappo:{arg} needs {POLICY_MODULE}.load_policy, which is not installed ({e})"
            ) from e
        self.env, self.team, self.units = _smax_env(env), team, units
        self.policy = module.load_policy(arg)
        self._n = env.n_agents if team == 0 else env.n_enemies

    def reset(self, seed: int) -> None:
        self.policy.reset(self._n)

    def act(self, env, views: list[AgentView]) -> dict[int, int]:
        obs, avail = env.native_obs(self.team)
        native = np.asarray(self.policy.act(obs, avail)).reshape(-1)
        if native.shape[0] != self._n:
            raise ValueError(f"policy returned {native.shape[0]} actions for {self._n} units")
        return _to_actions(env, self.team, self.units, native, views)


CONTROLLERS = {"heuristic": HeuristicController, "mappo": PolicyController}
