"""Pure-JAX environments the trainer vmaps: ``reset(key)`` and ``step(key, state, actions)``.

Each returns a :class:`Obs` with per-agent observations ``(A, D)``, the team's world state
``(S,)`` and legal actions ``(A, N)``. ``step`` resets finished episodes itself (a new episode's
first observation replaces the terminal one) and reports ``done``, ``won`` and the episode length.

The combat env is the same jitted ``HeuristicEnemySMAX`` the compass adapter plays
(:mod:`compass.games.combat.smax`), with the adapter's race sampler redone in JAX, so a policy
trained here acts unchanged in ``compass demos record``. Actions are SMAX's native indices
(0 N, 1 E, 2 S, 3 W, 4 stop, 5+j attack enemy j).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Obs:
    obs: jax.Array  # (A, D)
    world: jax.Array  # (S,)
    avail: jax.Array  # (A, N) bool


@struct.dataclass
class EnvState:
    inner: Any
    t: jax.Array  # steps in the current episode
    #: under EPO, ``observed[k, i]``: agent ``i`` may see enemy ``k`` (None without EPO)
    observed: jax.Array | None = None


@dataclass(frozen=True)
class MarlEnv:
    """What the trainer needs from an environment (all functions pure and jittable)."""

    spec: str
    n_agents: int
    obs_dim: int
    world_dim: int
    n_actions: int
    action_names: tuple[str, ...]
    reset: Callable[[jax.Array], tuple[Obs, EnvState]]
    #: ``step(key, state, actions) -> (obs, state, reward (A,), done, won, length)``
    step: Callable[..., tuple]


def smax_native_action_names(n_enemies: int) -> tuple[str, ...]:
    return ("move north", "move east", "move south", "move west", "stop") + tuple(
        f"attack enemy {j}" for j in range(n_enemies)
    )


def make_smax_env(scenario: str, max_steps: int, epo: bool = False) -> MarlEnv:
    """A SMAX race scenario (``protoss_5_vs_5``...) as a :class:`MarlEnv`.

    With ``epo``, the actors' observations and action masks are SMACv2's extended partial
    observability, as the compass adapter gives them under ``--epo``: an enemy is seen only by the
    first agent to spot it (one of those in sight, at random), attacks are masked by life, not
    range (:func:`compass.games.combat.smax.epo_native`). The critic's world state is not masked
    (centralised training, decentralised execution).
    """
    import numpy as np

    from compass.games.combat.scenarios import RACE_UNIT_TYPES, SMAX_UNIT_TYPES, get_scenario
    from compass.games.combat.smax import _compiled, epo_native

    sc = get_scenario(scenario)
    c = _compiled(sc.n_allies, sc.n_enemies)
    env = c.env
    pool = jnp.asarray([SMAX_UNIT_TYPES.index(t) for t in RACE_UNIT_TYPES[sc.race]], dtype=jnp.int32)
    health = jnp.asarray(np.asarray(c.type_params["health"]), dtype=jnp.float32)
    n_a, n_e = sc.n_allies, sc.n_enemies
    sight = jnp.asarray(np.asarray(c.type_params["sight"]), dtype=jnp.float32)
    feat = len(env._env.unit_features)

    def observe(state, observed=None) -> Obs:
        obs = env.get_obs(state)
        avail = env.get_avail_actions(state)
        obs = jnp.stack([obs[a] for a in env.agents])
        avail = jnp.stack([avail[a] for a in env.agents]).astype(bool)
        if observed is not None:
            alive = state.state.unit_alive
            obs, avail = epo_native(jnp, obs, avail, observed, alive[:n_a], alive[n_a:], n_a, n_e, feat)
        return Obs(obs, env.get_world_state(state), avail)

    def spot(key, state, observed):
        """SMACv2's EPO: an enemy not yet spotted is given to one agent that has it in sight."""
        s = state.state
        d = jnp.linalg.norm(s.unit_positions[n_a:, None, :] - s.unit_positions[None, :n_a, :], axis=-1)
        in_sight = (
            (d < sight[s.unit_types[:n_a]][None, :]) & s.unit_alive[None, :n_a] & s.unit_alive[n_a:, None]
        )
        newly = ~observed.any(axis=1) & in_sight.any(axis=1)
        seer = jax.random.categorical(key, jnp.where(in_sight, 0.0, -1e9), axis=1)
        return jnp.where(newly[:, None], jax.nn.one_hot(seer, n_a, dtype=bool), observed)

    def reset(key):
        k_env, k_ally, k_extra = jax.random.split(key, 3)
        _, state = env.reset(k_env)
        ally = pool[jax.random.randint(k_ally, (n_a,), 0, pool.shape[0])]
        extra = pool[jax.random.randint(k_extra, (max(0, n_e - n_a),), 0, pool.shape[0])]
        types = jnp.concatenate([ally, ally, extra])[: n_a + n_e]  # enemies mirror allies (SMACv2)
        inner = state.state.replace(
            unit_types=types.astype(state.state.unit_types.dtype),
            unit_health=health[types].astype(state.state.unit_health.dtype),
            step=jnp.asarray(0, dtype=jnp.int32),
        )
        state = state.replace(state=inner)
        if not epo:
            return observe(state), EnvState(state, jnp.asarray(0, jnp.int32))
        # fold_in, not a wider split: the keys (and so training) without EPO stay as they were
        observed = spot(jax.random.fold_in(key, 7), state, jnp.zeros((n_e, n_a), bool))
        return observe(state, observed), EnvState(state, jnp.asarray(0, jnp.int32), observed)

    def step(key, es: EnvState, actions):
        k_step, k_reset = jax.random.split(key)
        acts = {a: actions[i] for i, a in enumerate(env.agents)}
        _, state, rewards, _, _ = env.step_env(k_step, es.inner, acts)
        reward = jnp.stack([rewards[a] for a in env.agents])
        alive = state.state.unit_alive
        allies_alive, enemies_alive = alive[:n_a].any(), alive[n_a:].any()
        t = es.t + 1
        won = allies_alive & ~enemies_alive
        done = ~allies_alive | ~enemies_alive | (t >= max_steps)
        observed = spot(jax.random.fold_in(k_step, 7), state, es.observed) if epo else None
        nxt = EnvState(state, t, observed)
        obs = observe(state, observed)
        r_obs, r_state = reset(k_reset)
        obs = jax.tree.map(lambda x, y: jnp.where(done, x, y), r_obs, obs)
        nxt = jax.tree.map(lambda x, y: jnp.where(done, x, y), r_state, nxt)
        return obs, nxt, reward, done, won, t

    o, _ = jax.eval_shape(reset, jax.random.PRNGKey(0))
    return MarlEnv(
        f"smax:{scenario}",
        n_a,
        o.obs.shape[-1],
        o.world.shape[-1],
        o.avail.shape[-1],
        smax_native_action_names(n_e),
        reset,
        step,
    )


def make_alem_env(scenario: str, max_steps: int) -> MarlEnv:
    """ALEM (3 agents, 56 actions, symbolic observations) as a :class:`MarlEnv`.

    The world state is the agents' observations side by side (ALEM's symbolic observation is
    egocentric; together they cover what the team sees).
    """
    from compass.games.alem.env import _compiled as alem_compiled
    from compass.games.alem.names import N_ACTIONS, N_AGENTS, action_name

    c = alem_compiled(scenario)
    env, params = c.env, c.env_params

    def observe(state) -> Obs:
        from alem.alem_coop.action_masking import compute_action_mask

        obs = env.get_obs(state, params) if _takes_params(env.get_obs) else env.get_obs(state)
        obs = _stack_obs(obs, N_AGENTS)
        avail = compute_action_mask(state, params, c.static_params).astype(bool)
        return Obs(obs, obs.reshape(-1), avail)

    def reset(key):
        _, state = env.reset(key)
        return observe(state), EnvState(state, jnp.asarray(0, jnp.int32))

    def step(key, es: EnvState, actions):
        from alem.alem_coop.game_logic import alem_step

        k_step, k_reset = jax.random.split(key)
        state, reward = alem_step(k_step, es.inner, actions.astype(jnp.int32), params, c.static_params)
        reward = jnp.broadcast_to(jnp.asarray(reward, jnp.float32), (N_AGENTS,))
        t = es.t + 1
        dead = jnp.logical_not(state.player_alive).all()
        done = dead | (t >= max_steps)
        obs = observe(state)
        r_obs, r_state = reset(k_reset)
        obs = jax.tree.map(lambda x, y: jnp.where(done, x, y), r_obs, obs)
        nxt = jax.tree.map(lambda x, y: jnp.where(done, x, y), r_state, EnvState(state, t))
        return obs, nxt, reward, done, jnp.bool_(False), t

    o, _ = jax.eval_shape(reset, jax.random.PRNGKey(0))
    return MarlEnv(
        f"alem:{scenario}",
        N_AGENTS,
        o.obs.shape[-1],
        o.world.shape[-1],
        o.avail.shape[-1],
        tuple(action_name(a, 0) for a in range(N_ACTIONS)),
        reset,
        step,
    )


def _takes_params(fn) -> bool:
    import inspect

    try:
        return len(inspect.signature(fn).parameters) >= 2
    except (TypeError, ValueError):
        return False


def _stack_obs(obs, n: int) -> jax.Array:
    if isinstance(obs, dict):
        keys = sorted(obs)[:n]
        obs = jnp.stack([jnp.asarray(obs[k]).reshape(-1) for k in keys])
    return jnp.asarray(obs, jnp.float32).reshape(n, -1)


MAKERS: dict[str, Callable[[str, int], MarlEnv]] = {"smax": make_smax_env, "alem": make_alem_env}


def make_marl_env(spec: str, max_steps: int, epo: bool = False) -> MarlEnv:
    """``smax:protoss_5_vs_5`` or ``alem:hard`` as a trainer env; an unknown kind lists the valid ones.
    ``epo``: SMACv2's extended partial observability (smax only)."""
    kind, sep, scenario = spec.partition(":")
    if not sep or kind not in MAKERS:
        raise ValueError(f"the trainer takes {' or '.join(f'{k}:SCENARIO' for k in MAKERS)}, got {spec!r}")
    if epo:
        if kind != "smax":
            raise ValueError(f"epo (extended partial observability) is a SMAX setting; {spec} has none")
        return make_smax_env(scenario, max_steps, epo=True)
    return MAKERS[kind](scenario, max_steps)
