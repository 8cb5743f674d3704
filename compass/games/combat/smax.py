"""SMAX adapter: jaxmarl's ``HeuristicEnemySMAX`` as compass agent views with SMACv2 action indices.

The jitted environment is compiled once per (n_allies, n_enemies) and shared by every scenario and
episode of that size (race only changes unit types, which live in the state). Views are built in
numpy from one device transfer per step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import numpy as np

from compass.core.types import EVENTS, AgentView, Entity, OwnUnit, StepResult, new_own_unit
from compass.games.combat.events import kill_events
from compass.games.combat.scenarios import SMAX_UNIT_TYPES, CombatScenario, get_scenario
from compass.games.combat.text import (
    ATTACK_OFFSET,
    MOVE_EAST,
    MOVE_NORTH,
    MOVE_SOUTH,
    MOVE_WEST,
    STOP,
    new_combat_obs,
    render_combat_text,
)
from compass.games.combat.view import (
    combat_agent_view,
    deaths_seen_by,
    entities_seen,
    entities_seen_by,
)
from compass.util.jax_cache import enable_jax_cache, note_compile
from compass.util.lanes import InLanes, Lanes, keep_ended
from compass.util.quiet import import_quietly

# SMACv2 index -> SMAX movement index (SMAX: 0 N, 1 E, 2 S, 3 W, 4 stop, 5+j attack).
_SMAX_MOVE = {MOVE_NORTH: 0, MOVE_EAST: 1, MOVE_SOUTH: 2, MOVE_WEST: 3}
_SMAX_STOP = 4
_SMACV2_MOVE = {v: k for k, v in _SMAX_MOVE.items()}  # native move -> SMACv2 index
_SMAX_ATTACK_OFFSET = 5
_DIR_VEC = {MOVE_NORTH: (0.0, 1.0), MOVE_SOUTH: (0.0, -1.0), MOVE_EAST: (1.0, 0.0), MOVE_WEST: (-1.0, 0.0)}
# SMACv2's episode limit for the 5v5 race maps.
DEFAULT_MAX_STEPS = 200


@dataclass
class _Compiled:
    env: object
    reset: object
    step: object
    type_params: dict[str, np.ndarray]
    step_len: np.ndarray  # distance travelled per env step, by unit type
    #: (key, state, native ally actions) -> (next key, state, reward, host fields), not jitted:
    #: the body of ``packed_step`` and, vmapped, of ``batched_step``
    fused_step: object = None
    #: jitted ``fused_step`` with reward and host fields in one float32 array (:func:`_pack`):
    #: one dispatch and one device transfer per step
    packed_step: object = None
    host_fields: object = None  # jitted _host_fields, for reset and the two-team step
    _two_team: tuple | None = None
    _batched: object = None

    def batched_step(self):
        """``(keys, states, actions, live) -> (keys, states, rewards, host fields)``: ``fused_step``
        vmapped over a leading episode axis, ended episodes (``live`` False) keeping their key and
        state; jitted on first use, one compile per batch size. The batched episodes' one device
        call per step."""
        if self._batched is None:
            import jax

            step = jax.vmap(self.fused_step)

            def batched(keys, states, actions, live):
                new_keys, new_states, rewards, host = step(keys, states, actions)
                return keep_ended(live, new_keys, keys), keep_ended(live, new_states, states), rewards, host

            self._batched = jax.jit(batched)
        return self._batched

    def two_team(self) -> tuple:
        """(step with every unit's native action, SMAX observations of all units, native avail masks).

        Jitted on first use only: the default (heuristic enemy) path never compiles them.
        """
        if self._two_team is None:
            import jax

            inner = self.env._env
            self._two_team = (
                jax.jit(inner.step_env),
                jax.jit(inner.get_obs),
                jax.jit(inner.get_avail_actions),
            )
        return self._two_team


@cache
def _compiled(n_allies: int, n_enemies: int) -> _Compiled:
    """One jitted HeuristicEnemySMAX per team size, shared across scenarios and episodes."""
    enable_jax_cache()
    note_compile(f"SMAX {n_allies} vs {n_enemies}", 5)
    import jax

    import_quietly("jaxmarl.environments")  # its import prints on stdout
    from jaxmarl.environments.smax.heuristic_enemy_smax_env import HeuristicEnemySMAX
    from jaxmarl.environments.smax.smax_env import Scenario

    scenario = Scenario(np.zeros(n_allies + n_enemies, dtype=np.uint8), n_allies, n_enemies, True, False)
    # Terminal step count is ours (timeouts are the adapter's); keep SMAX from ending episodes early.
    env = HeuristicEnemySMAX(scenario=scenario, max_steps=10**6, see_enemy_actions=True)
    inner = env._env
    params = {
        "sight": np.asarray(inner.unit_type_sight_ranges, dtype=np.float64),
        "attack": np.asarray(inner.unit_type_attack_ranges, dtype=np.float64),
        "health": np.asarray(inner.unit_type_health, dtype=np.float64),
        "cooldown": np.asarray(inner.unit_type_weapon_cooldowns, dtype=np.float64),
        "velocity": np.asarray(inner.unit_type_velocities, dtype=np.float64),
        "radius": np.asarray(inner.unit_type_radiuses, dtype=np.float64),
    }
    step_len = params["velocity"] * inner.time_per_step * inner.world_steps_per_env_step

    def fused_step(key, state, actions):
        # The key split, the action dict and the fields the views read, all inside one jit.
        key, step_key = jax.random.split(key)
        native = {f"ally_{i}": actions[i] for i in range(n_allies)}
        _, state, rewards, _, _ = env.step_env(step_key, state, native)
        return key, state, rewards["ally_0"], _host_fields(state.state)

    def packed_step(key, state, actions):
        key, state, reward, host = fused_step(key, state, actions)
        return key, state, _pack(reward, host)

    return _Compiled(
        env,
        jax.jit(env.reset),
        jax.jit(env.step_env),
        params,
        step_len,
        fused_step,
        jax.jit(packed_step),
        jax.jit(_host_fields),
    )


def _host_fields(st) -> tuple:
    """Inside jit: what :class:`Snapshot` reads, as one float32 and one int32 array."""
    import jax.numpy as jnp

    floats = jnp.concatenate([jnp.ravel(st.unit_positions), st.unit_health, st.unit_weapon_cooldowns]).astype(
        jnp.float32
    )
    ints = jnp.concatenate(
        [
            st.unit_alive.astype(jnp.int32),
            st.unit_types.astype(jnp.int32),
            st.prev_attack_actions.astype(jnp.int32),
        ]
    )
    return floats, ints


def _pack(reward, host):
    """Inside jit: the reward and :func:`_host_fields` as one float32 array (floats, the ints'
    bits, the reward), so the host fetches one array (each array fetched costs ~10 us more).
    The ints travel bitcast, not converted: :func:`_unpack` gives back the same values."""
    import jax
    import jax.numpy as jnp

    floats, ints = host
    return jnp.concatenate(
        [
            floats,
            jax.lax.bitcast_convert_type(ints, jnp.float32),
            jnp.reshape(reward, (1,)).astype(jnp.float32),
        ]
    )


def _unpack(packed: np.ndarray, n_units: int) -> tuple:
    """:func:`_pack`'s array on the host -> ``(reward, (floats, ints))`` as ``jax.device_get`` gives them."""
    n_floats = 4 * n_units  # positions (2 per unit), health, cooldown
    floats, ints = packed[:n_floats], packed[n_floats:-1].view(np.int32)
    return packed[-1], (floats, ints)


def epo_native(xp, obs, avail, observed, own_alive, enemy_alive, n_allies: int, n_enemies: int, feat: int):
    """SMAX's native ally observations and action masks as SMACv2's extended partial
    observability (EPO) gives them: what MAPPO sees under ``epo`` (the compass adapter and the
    trainer's env both use this, with ``xp`` = numpy or jax.numpy).

    ``obs`` is ``(A, D)`` in SMAX's layout (the other allies' feature blocks of ``feat`` values,
    then the enemies', then the unit's own); ``observed[k, i]`` says whether agent ``i`` may see
    enemy ``k`` (the first agent to spot it; SMAX already zeroes units out of sight). An enemy's
    block is zeroed for every other agent. Attack actions are masked only by life, not by range,
    as in SMACv2's EPO: a range mask would tell an agent where an enemy it cannot see stands.
    """
    a = obs.shape[0]
    start, end = (n_allies - 1) * feat, (n_allies - 1 + n_enemies) * feat
    enemy = obs[:, start:end].reshape(a, n_enemies, feat) * xp.transpose(observed)[:, :, None]
    obs = xp.concatenate([obs[:, :start], enemy.reshape(a, n_enemies * feat), obs[:, end:]], axis=1)
    attack = own_alive[:, None] & enemy_alive[None, :]
    avail = xp.concatenate([avail[:, :_SMAX_ATTACK_OFFSET], attack.astype(avail.dtype)], axis=1)
    return obs, avail


def _attack_targets(prev_attack: np.ndarray, n_allies: int) -> np.ndarray:
    """Unit attacked by each unit in SMAX's last step (its decoding: enemies index allies in reverse)."""
    out = [-1] * len(prev_attack)  # a list, then one array: numpy's element writes cost more
    for u, a in enumerate(prev_attack.tolist()):
        if a >= _SMAX_ATTACK_OFFSET:
            k = a - _SMAX_ATTACK_OFFSET
            out[u] = n_allies + k if u < n_allies else n_allies - 1 - k
    return np.array(out, dtype=np.int64)


class _PerType(NamedTuple):
    """An episode's unit-type tables, per unit (:meth:`SmaxEnv._per_type`)."""

    types: np.ndarray
    health: np.ndarray  # max health
    cooldown: np.ndarray  # max weapon cooldown
    sight: np.ndarray
    attack: np.ndarray
    names: tuple[str, ...]


def _norm(v: np.ndarray) -> float:
    """``np.linalg.norm`` of a float64 vector as it computes it (``sqrt(v.dot(v))``), without
    its argument handling (a third of the cost of a step's action mapping)."""
    return math.sqrt(v.dot(v))


def from_smax(action: int) -> int:
    """SMAX native action -> the SMACv2 index compass skills speak (inverse of the adapter's map)."""
    if action >= _SMAX_ATTACK_OFFSET:
        return ATTACK_OFFSET + action - _SMAX_ATTACK_OFFSET
    return _SMACV2_MOVE.get(action, STOP)


@dataclass
class Snapshot:
    """Host-side copy of the state the views and renderers read."""

    pos: np.ndarray  # (n, 2) world units
    alive: np.ndarray  # (n,) bool
    health: np.ndarray  # (n,) fraction of max
    types: np.ndarray  # (n,) SMAX type index
    cooldown: np.ndarray  # (n,) fraction of max
    n_allies: int
    sight: np.ndarray = field(repr=False)  # (n,)
    attack: np.ndarray = field(repr=False)  # (n,)
    map_size: tuple[float, float] = (32.0, 32.0)
    #: unit each unit attacked this step (-1: none), for attack lines and trajectories
    attack_target: np.ndarray | None = None
    #: ``names``, when the env has it at hand (it keeps the episode's from step to step)
    type_names: tuple[str, ...] | None = field(default=None, repr=False)

    def type_name(self, u: int) -> str:
        return SMAX_UNIT_TYPES[int(self.types[u])]

    @property
    def names(self) -> Sequence[str]:
        """Every unit's type name, allies first (``type_name`` of each)."""
        if self.type_names is not None:
            return self.type_names
        return [SMAX_UNIT_TYPES[t] for t in self.types.tolist()]


class SmaxEnv(InLanes):
    """A compass combat environment over SMAX (see module docstring); ``_key`` and ``_state``
    are its own or its slice of a batch (:class:`compass.util.lanes.InLanes`)."""

    family = "combat"

    def __init__(
        self,
        scenario: str = "protoss_5_vs_5",
        epo: bool = False,
        prob_obs_enemy: float | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        enemy: str = "heuristic",
    ) -> None:
        if enemy not in ("heuristic", "external"):
            raise ValueError(
                f"enemy must be 'heuristic' (SMAX's built-in policy) or 'external', got {enemy!r}"
            )
        # external: the enemy team's actions come with each step (step(actions, enemy_actions)).
        self.enemy = enemy
        self.spec: CombatScenario = get_scenario(scenario)
        self.scenario = scenario
        self.epo = epo
        # SMACv2's EPO config: prob_obs_enemy=0 and no range mask on attack actions.
        self.prob_obs_enemy = (0.0 if epo else 1.0) if prob_obs_enemy is None else prob_obs_enemy
        self.max_steps = max_steps
        self.n_agents = self.spec.n_allies
        self.n_enemies = self.spec.n_enemies
        self.n_actions = ATTACK_OFFSET + self.n_enemies
        self._c = _compiled(self.n_agents, self.n_enemies)
        self._pending: list[int] = []  # the actions of the step under way (step_begin .. step_end)
        self._rng = np.random.default_rng(0)
        self.t = 0
        self.snap: Snapshot | None = None
        self._last_actions = np.zeros(self.n_agents, dtype=np.int64)
        # observed[j, i]: agent i may observe enemy j (EPO); spotted[j]: enemy j seen by anyone yet.
        self._observed = np.ones((self.n_enemies, self.n_agents), dtype=bool)
        self._spotted = np.zeros(self.n_enemies, dtype=bool)
        self.unit_types: tuple[list[str], list[str]] = ([], [])
        self._prev_alive: np.ndarray | None = None  # who was alive before this step (deaths seen)
        self._enemy_last_actions = np.zeros(self.n_enemies, dtype=np.int64)
        self._prev_snap: Snapshot | None = None
        self._types_cache: tuple[bytes, _PerType] | None = None  # (unit types' bytes, their tables)

    # --- episode control ----------------------------------------------------------------------

    # Native access for policies that act on SMAX's own observations (SMAX's heuristic, MAPPO) and for
    # benchmarks of the raw jitted step; compass's own loop never needs these.
    @property
    def native_env(self):
        """The jaxmarl ``SMAX`` env under the heuristic-enemy wrapper (``get_obs``, unit tables)."""
        return self._c.env._env

    @property
    def native_state(self):
        """The wrapper state of the current step (its ``.state`` is SMAX's world state)."""
        return self._state

    def native_step(self, key, state, actions: dict):
        """One raw jitted ``step_env`` of the wrapper on ``state`` (SMAX action dict); no views built."""
        return self._c.step(key, state, actions)

    def reset(self, seed: int) -> list[AgentView]:
        """Start an episode; same seed, same unit types, positions and enemy behaviour."""
        import jax
        import jax.numpy as jnp

        self._rng = np.random.default_rng(seed)
        self._leave_lanes()
        key = jax.random.PRNGKey(seed)
        key, reset_key = jax.random.split(key)
        self._key = key
        _, state = self._c.reset(reset_key)
        allies, enemies = self.spec.sample_unit_types(self._rng)
        self.unit_types = (allies, enemies)
        types = np.array([SMAX_UNIT_TYPES.index(t) for t in allies + enemies], dtype=np.uint8)
        inner = state.state
        inner = inner.replace(
            unit_types=jnp.asarray(types, dtype=inner.unit_types.dtype),
            unit_health=jnp.asarray(self._c.type_params["health"][types], dtype=inner.unit_health.dtype),
            # reset() leaves a weakly typed step; a concrete int32 avoids a second compile of step.
            step=jnp.asarray(0, dtype=jnp.int32),
        )
        self._state = state.replace(state=inner)
        self.t = 0
        self._last_actions[:] = 0
        self._enemy_last_actions[:] = 0
        self._spotted[:] = False
        self._observed[:] = not self._epo_active
        self._snapshot()
        self._prev_alive = None
        self._prev_snap = None
        return self.views()

    @property
    def _epo_active(self) -> bool:
        return self.prob_obs_enemy < 1.0

    def step(self, actions: list[int], enemy_actions: list[int] | None = None) -> StepResult:
        """Apply one SMACv2-indexed action per ally (and per enemy unit when ``enemy="external"``;
        enemy actions are in the enemy team's own frame: attack ``6 + j`` targets our agent ``j``)."""
        import jax

        if (enemy_actions is None) != (self.enemy == "heuristic"):
            raise ValueError("enemy_actions are given exactly when the env was made with enemy='external'")
        if enemy_actions is None:
            _, native = self.step_begin(actions)
            self._key, self._state, packed = self._c.packed_step(self._key, self._state, native)
            return self.step_end(_unpack(np.asarray(packed), self.n_agents + self.n_enemies))
        self._check(actions)
        native = {f"ally_{i}": self._to_smax(i, int(a)) for i, a in enumerate(actions)}
        self._key, step_key = jax.random.split(self._key)
        if len(enemy_actions) != self.n_enemies:
            raise ValueError(f"expected {self.n_enemies} enemy actions, got {len(enemy_actions)}")
        for j, a in enumerate(enemy_actions):
            native[f"enemy_{j}"] = self._enemy_to_smax(j, int(a))
        _, inner, rewards, _, _ = self._c.two_team()[0](step_key, self._state.state, native)
        self._state = self._state.replace(state=inner)
        self._enemy_last_actions[:] = [int(a) for a in enemy_actions]
        return self._stepped(actions, rewards["ally_0"], None)

    def _check(self, actions: list[int]) -> None:
        if len(actions) != self.n_agents:
            raise ValueError(f"expected {self.n_agents} actions, got {len(actions)}")

    # --- batched episodes (compass.core.types.BatchStep): N envs of one size, one device call ---------

    @property
    def can_batch(self) -> bool:
        """Batched stepping covers the built-in enemy only (an external enemy steps one by one)."""
        return self.enemy == "heuristic"

    @property
    def batch_key(self) -> tuple:
        """Envs with equal keys share the compiled step (team sizes), so they can step together."""
        return ("smax", self.n_agents, self.n_enemies)

    def step_begin(self, actions: list[int]) -> tuple:
        """Host work before the device step: (this env, its native actions) for :meth:`step_batch`."""
        self._check(actions)
        self._pending = [int(a) for a in actions]
        return self, np.array([self._to_smax(i, int(a)) for i, a in enumerate(actions)], dtype=np.int32)

    def step_idle(self) -> tuple:
        """An ended episode's input: its state stays as it is (its output is dropped)."""
        return self, None

    def step_batch(self, inputs: list[tuple]) -> list[tuple]:
        """One vmapped device step for every env of ``inputs`` (same ``batch_key``), one transfer.

        The batch's states stay stacked on the device from step to step while the same envs
        step together (a new set of envs, or an env reset, restacks them)."""
        import jax

        lanes = Lanes.of([e for e, _ in inputs])
        stop = np.full(self.n_agents, _SMAX_STOP, dtype=np.int32)
        native = np.stack([a if a is not None else stop for _, a in inputs])
        live = np.array([a is not None for _, a in inputs])
        keys, states, rewards, host = self._c.batched_step()(lanes.keys, lanes.states, native, live)
        lanes.advance(keys, states)
        rewards, (floats, ints) = jax.device_get((rewards, host))
        return [(rewards[b], (floats[b], ints[b])) for b in range(len(inputs))]

    def step_end(self, out: tuple) -> StepResult:
        """Host work after the device step: the views and result of the step begun."""
        reward, host = out
        return self._stepped(self._pending, reward, host)

    def _stepped(self, actions: list[int], reward, host: tuple | None) -> StepResult:
        self.t += 1
        self._last_actions[:] = [int(a) for a in actions]
        self._prev_alive = self.snap.alive.copy()
        self._prev_snap = self.snap
        self._snapshot(host)
        s, n = self.snap, self.n_agents
        alive = s.alive.tolist()  # counted in Python: numpy's reductions cost more on 10 units
        n_allies_alive, n_enemies_alive = sum(alive[:n]), sum(alive[n:])
        allies_alive, enemies_alive = n_allies_alive > 0, n_enemies_alive > 0
        if not enemies_alive and allies_alive:
            outcome = "win"
        elif not allies_alive or not enemies_alive:
            outcome = "loss"  # SMAX can end in mutual destruction; SMACv2 counts it as no win.
        elif self.t >= self.max_steps:
            outcome = "timeout"
        else:
            outcome = "running"
        reward = float(reward)
        info = {
            "dead_allies": n - n_allies_alive,
            "dead_enemies": self.n_enemies - n_enemies_alive,
            "battle_won": outcome == "win",
        }
        events = kill_events(self._prev_snap, s)
        if events:
            info[EVENTS] = events
        return StepResult(self.views(), [reward] * self.n_agents, outcome != "running", outcome, info)

    # --- actions --------------------------------------------------------------------------------

    def _to_smax(self, i: int, a: int) -> int:
        if a in _SMAX_MOVE:
            return _SMAX_MOVE[a]
        if a >= ATTACK_OFFSET:
            j = a - ATTACK_OFFSET
            if not 0 <= j < self.n_enemies:
                raise ValueError(f"action {a} targets enemy #{j}; there are {self.n_enemies} enemies")
            s = self.snap
            u = self.n_agents + j
            if _norm(s.pos[u] - s.pos[i]) < s.attack[i]:
                return _SMAX_ATTACK_OFFSET + j
            # Out of range (EPO, no action mask): smacv2 sends no command at all (get_agent_action,
            # `if can_shoot: ... else: return None`, starcraft2.py L847-858 at oxwhirl/smacv2@577ab5a),
            # so the unit does not walk to the target. SMAX has no standing orders: it stops.
            return _SMAX_STOP
        return _SMAX_STOP  # no-op and stop

    def _enemy_to_smax(self, j: int, a: int) -> int:
        """An enemy unit's SMACv2-indexed action (its own frame) as SMAX's native enemy action."""
        if a < ATTACK_OFFSET:
            return self._to_smax(j, a) if a in _SMAX_MOVE else _SMAX_STOP
        i = a - ATTACK_OFFSET
        if not 0 <= i < self.n_agents:
            raise ValueError(f"enemy action {a} targets agent #{i}; there are {self.n_agents} agents")
        s = self.snap
        u = self.n_agents + j
        if _norm(s.pos[i] - s.pos[u]) < s.attack[u]:
            return _SMAX_ATTACK_OFFSET + self.n_agents - 1 - i  # SMAX counts the enemy's targets in reverse
        return _SMAX_MOVE[self._direction_towards(s.pos[i] - s.pos[u])] if s.alive[i] else _SMAX_STOP

    @staticmethod
    def _direction_towards(delta: np.ndarray) -> int:
        if abs(delta[0]) >= abs(delta[1]):
            return MOVE_EAST if delta[0] > 0 else MOVE_WEST
        return MOVE_NORTH if delta[1] > 0 else MOVE_SOUTH

    def avail_actions(self, i: int) -> tuple[int, ...]:
        """SMACv2 rules: no-op only when dead; moves that don't run into the map edge; attacks."""
        return _avail(self.snap, i, self.n_agents, self.n_enemies, self._c.step_len, self._epo_active)

    # --- observation ----------------------------------------------------------------------------

    def _snapshot(self, host: tuple | None = None) -> None:
        """Host copy of the state from ``host`` (:func:`_host_fields` of it), fetched if not given."""
        import jax

        if host is None:
            host = jax.device_get(self._c.host_fields(self._state.state))
        floats, ints = host
        n = self.n_agents + self.n_enemies
        pos, health, cd = floats[: 2 * n].reshape(n, 2), floats[2 * n : 3 * n], floats[3 * n :]
        alive, types, att = ints[:n], ints[n : 2 * n], ints[2 * n :]
        per_type = self._per_type(types)
        self.snap = Snapshot(
            pos=np.asarray(pos, dtype=np.float64),
            alive=np.asarray(alive, dtype=bool),
            health=np.asarray(health, dtype=np.float64) / per_type.health,
            types=per_type.types,
            # the method np.clip calls, without its argument handling (~3.5 -> 2 us on ten values)
            cooldown=(np.asarray(cd, dtype=np.float64) / per_type.cooldown).clip(0.0, 1.0),
            n_allies=self.n_agents,
            sight=per_type.sight,
            attack=per_type.attack,
            attack_target=_attack_targets(att, self.n_agents),
            type_names=per_type.names,
        )
        self._update_epo()

    def _per_type(self, types: np.ndarray) -> _PerType:
        """The unit-type tables indexed by this episode's units (types change only at reset), kept
        from step to step: read-only arrays, shared by the step's snapshots."""
        key = types.tobytes()
        cached = self._types_cache
        if cached is None or cached[0] != key:
            types = np.asarray(types, dtype=np.int64)
            p = self._c.type_params
            arrays = [types, p["health"][types], p["cooldown"][types], p["sight"][types], p["attack"][types]]
            for a in arrays:
                a.flags.writeable = False
            cached = self._types_cache = (
                key,
                _PerType(*arrays, tuple(SMAX_UNIT_TYPES[t] for t in types.tolist())),
            )
        return cached[1]

    def _update_epo(self) -> None:
        """SMACv2 EPO: the first agent to spot an enemy keeps seeing it; others with prob p."""
        if not self._epo_active:
            return
        s = self.snap
        for j in range(self.n_enemies):
            if self._spotted[j]:
                continue
            u = self.n_agents + j
            seers = [
                i
                for i in range(self.n_agents)
                if s.alive[i] and s.alive[u] and _norm(s.pos[u] - s.pos[i]) < s.sight[i]
            ]
            if seers:
                self._spotted[j] = True
                self._observed[j] = self._rng.random(self.n_agents) < self.prob_obs_enemy
                self._observed[j, seers[int(self._rng.integers(len(seers)))]] = True

    def visible_entities(self, i: int) -> tuple[Entity, ...]:
        """Entities agent ``i`` sees itself this step."""
        return entities_seen_by(self.snap, i, self.n_agents, self._observed, self._last_actions)

    def views(self) -> list[AgentView]:
        """One AgentView per ally for the current step."""
        return _team_views(
            self.t,
            self.snap,
            self._prev_alive,
            self.n_enemies,
            self._observed,
            self._last_actions,
            self._c.step_len,
            self._epo_active,
        )

    # --- the enemy team, when it is controlled from outside (enemy="external") --------------------

    def _mirrored(self) -> tuple[Snapshot, np.ndarray | None]:
        """The snapshot (and previous alive mask) with the enemy team first: its own frame."""
        s, n = self.snap, self.n_agents
        order = np.r_[n : n + self.n_enemies, 0:n]
        m = Snapshot(
            pos=s.pos[order],
            alive=s.alive[order],
            health=s.health[order],
            types=s.types[order],
            cooldown=s.cooldown[order],
            n_allies=self.n_enemies,
            sight=s.sight[order],
            attack=s.attack[order],
            map_size=s.map_size,
        )
        return m, None if self._prev_alive is None else self._prev_alive[order]

    def enemy_views(self) -> list[AgentView]:
        """One view per enemy unit in the enemy team's frame (its units are agents ``0..``, ours
        are its enemies ``j``), with full observability: EPO applies to our team only."""
        m, prev = self._mirrored()
        observed = np.ones((self.n_agents, self.n_enemies), dtype=bool)
        return _team_views(
            self.t, m, prev, self.n_agents, observed, self._enemy_last_actions, self._c.step_len, False
        )

    def native_obs(self, team: int) -> tuple[np.ndarray, np.ndarray]:
        """SMAX's own observation vectors and native action masks of one team (0 ours, 1 the enemy):
        ``(obs[n_units, obs_dim], avail[n_units, n_native_actions])``, as MAPPO and SMAX's heuristic see them.
        Under EPO our team's are masked as SMACv2 does (:func:`epo_native`); the enemy's never are."""
        import jax

        _, get_obs, get_avail = self._c.two_team()
        obs, avail = jax.device_get((get_obs(self._state.state), get_avail(self._state.state)))
        names = (
            [f"ally_{i}" for i in range(self.n_agents)]
            if team == 0
            else [f"enemy_{j}" for j in range(self.n_enemies)]
        )
        obs = np.stack([np.asarray(obs[a]) for a in names])
        avail = np.stack([np.asarray(avail[a]) for a in names])
        if team == 0 and self._epo_active:
            alive, n = self.snap.alive, self.n_agents
            feat = len(self._c.env._env.unit_features)
            obs, avail = epo_native(
                np, obs, avail, self._observed, alive[:n], alive[n:], n, self.n_enemies, feat
            )
        return obs, avail

    def native_to_smacv2(self, team: int, action: int) -> int:
        """A native SMAX action of a unit of ``team`` as the SMACv2 index in that team's frame."""
        a = from_smax(action)
        if team == 1 and a >= ATTACK_OFFSET:  # SMAX's enemies index their targets in reverse
            return ATTACK_OFFSET + self.n_agents - 1 - (a - ATTACK_OFFSET)
        return a

    def render_video_frame(self, info) -> np.ndarray:
        """Followable frame for videos (:mod:`compass.games.combat.video`)."""
        from compass.games.combat.video import render_video_frame

        return render_video_frame(self.snap, info, f"smax:{self.scenario}", self.spec.race, self._prev_alive)

    def step_events(self) -> dict:
        """Attacks, damage taken and deaths of the last step (trajectories)."""
        from compass.games.combat.video import step_events

        return step_events(self._prev_snap, self.snap)

    def native_observation(self) -> tuple[np.ndarray, np.ndarray]:
        """SMAX's own per-ally observation vectors and legal native actions (MAPPO policies)."""
        obs, avail = self.native_obs(0)
        return obs, avail.astype(bool)

    def render_global(self) -> np.ndarray:
        """Whole-map RGB frame of the current step."""
        from compass.games.combat.render import render_global

        return render_global(self.snap, step=self.t)


def _team_views(
    t: int,
    s: Snapshot,
    prev_alive: np.ndarray | None,
    n_other: int,
    observed: np.ndarray,
    last_actions: np.ndarray,
    step_lens: np.ndarray,
    epo: bool,
) -> list[AgentView]:
    """One AgentView per unit of the team listed first in ``s`` (``s.n_allies`` units; the
    enemy team's views use the mirrored snapshot): every unit's entities and actions in one pass
    over the team (:func:`entities_seen`, :func:`_avail_all`)."""
    n = s.n_allies
    seen = entities_seen(s, range(n), n, observed, last_actions)
    avail = _avail_all(s, n, n_other, step_lens, epo)
    died = prev_alive is not None and bool((prev_alive & ~s.alive).any())
    own = _own_units(s, n, last_actions)
    cooldown = s.cooldown[:n].tolist()
    views = []
    for i in range(n):
        deaths = deaths_seen_by(s, prev_alive, i, n, observed) if died else ()
        views.append(
            combat_agent_view(
                i,
                t,
                s,
                own[i],
                new_combat_obs(0.0, cooldown[i]),
                seen[i],
                avail[i],
                render_combat_text,
                {"deaths_seen": deaths} if deaths else {},
            )
        )
    return views


def _own_units(s: Snapshot, n: int, last_actions: np.ndarray) -> list[OwnUnit]:
    """Units ``0..n-1`` of ``s`` as OwnUnits (health 0 once dead; the snapshot's fields read as lists once)."""
    xy, health, alive = s.pos[:n].tolist(), s.health[:n].tolist(), s.alive[:n].tolist()
    sight, attack, last = s.sight[:n].tolist(), s.attack[:n].tolist(), last_actions[:n].tolist()
    names = s.names[:n]
    return [
        new_own_unit(
            names[i],
            xy[i][0],
            xy[i][1],
            health[i] if alive[i] else 0.0,
            sight[i],
            attack[i],
            last[i],
            *s.map_size,
        )
        for i in range(n)
    ]


def _avail(
    s: Snapshot, i: int, n_own: int, n_other: int, step_lens: np.ndarray, epo: bool
) -> tuple[int, ...]:
    """SMACv2 rules for unit ``i`` of a snapshot whose first ``n_own`` units are its team."""
    return _avail_all(s, n_own, n_other, step_lens, epo, [i])[0]


def _avail_all(
    s: Snapshot, n_own: int, n_other: int, step_lens: np.ndarray, epo: bool, units: list[int] | None = None
) -> list[tuple[int, ...]]:
    """:func:`_avail` for each of ``units`` (default: the whole team), from the snapshot read as lists once.

    An enemy's distance is ``np.linalg.norm(delta, axis=-1)`` as numpy computes it, in plain
    floats: ``sqrt(dx * dx + dy * dy)`` (its ``add.reduce`` over two elements is that one
    addition), so the same actions; numpy's per-call cost exceeds the work at these team sizes.
    """
    w, h = s.map_size
    xs, ys = s.pos[:, 0].tolist(), s.pos[:, 1].tolist()
    alive, reach = s.alive.tolist(), s.attack.tolist()
    step_len = step_lens[s.types].tolist()
    enemies = range(n_own, n_own + n_other)
    out = []
    for r in range(n_own) if units is None else units:
        if not alive[r]:
            out.append((0,))
            continue
        avail = [STOP]
        x, y, sl = xs[r], ys[r], step_len[r]
        for a, (dx, dy) in _DIR_VEC.items():
            nx, ny = x + dx * sl, y + dy * sl
            # SMAX kills units that touch the wall; keep half a unit of clearance.
            if 0.5 <= nx <= w - 0.5 and 0.5 <= ny <= h - 0.5:
                avail.append(a)
        rng = reach[r]
        for j, u in enumerate(enemies):
            if alive[u]:
                dx, dy = xs[u] - x, ys[u] - y
                if epo or math.sqrt(dx * dx + dy * dy) < rng:
                    avail.append(ATTACK_OFFSET + j)
        out.append(tuple(avail))  # ascending already: stop, the moves (2-5, in _DIR_VEC's order), attacks
    return out
