"""ALEM adapter: the real ``alem-env`` game as compass ``AgentView``s.

One :class:`AlemEnv` runs one episode at a time for 3 agents (warrior, forager, miner). The JAX
side is compiled once per process and scenario (module-level cache) and on disk (JAX's persistent
compilation cache under ``~/.cache/compass/jax``): one jitted function does ALEM's own
``alem_step`` (what ``step_env`` calls, minus the symbolic observation nobody here reads) plus the
terminal test and the legal-action mask.

Each agent's ``text`` is the ALEM LLM harness's observation, produced by the harness's own
description functions (``AlemLanguageWrapper.describe_frame``) applied to a numpy copy of the
state: identical text, ~1 ms per agent instead of ~0.2 s on device arrays, and none of the
wrapper's side effects (it steps its own env and forces ``non_specialist_efficiency=0.2``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from compass.core.types import EVENTS, AgentView, Entity, StepResult
from compass.games.alem.deaths import death_causes, revivals
from compass.games.alem.events import kill_events, revive_events
from compass.games.alem.extract import affordances_text, entities, extract_obs, level_view, own_unit
from compass.games.alem.names import ACHIEVEMENTS, N_ACTIONS, N_AGENTS, action_index, action_name
from compass.games.alem.obs import AlemMemory, ObsData
from compass.games.alem.scenarios import SCENARIOS, Scenario, get_preset
from compass.util.jax_cache import enable_jax_cache, note_compile
from compass.util.lanes import InLanes, Lanes, keep_ended

FAMILY = "alem"


class _Packer:
    """Moves the ~160-array game state to the host as a handful of buffers (one per dtype).

    Fetching each leaf separately costs ~30 us of dispatch apiece (~5 ms a step); packing them
    inside the jitted step and splitting numpy views on the host costs ~0.3 ms.
    """

    def __init__(self, shapes: Any) -> None:
        import jax

        leaves, self.treedef = jax.tree_util.tree_flatten(shapes)
        self.dtypes = sorted({str(leaf.dtype) for leaf in leaves})
        self.layout = []  # (group, offset, shape) per leaf
        offsets = dict.fromkeys(self.dtypes, 0)
        for leaf in leaves:
            g = self.dtypes.index(str(leaf.dtype))
            size = int(np.prod(leaf.shape, dtype=np.int64))
            self.layout.append((g, offsets[str(leaf.dtype)], tuple(leaf.shape), size))
            offsets[str(leaf.dtype)] += size

    def pack(self, state: Any) -> tuple:
        """Inside jit: one flat array per dtype."""
        import jax
        import jax.numpy as jnp

        groups: list[list] = [[] for _ in self.dtypes]
        for leaf, (g, _, _, _) in zip(jax.tree_util.tree_leaves(state), self.layout, strict=True):
            groups[g].append(jnp.ravel(leaf))
        return tuple(jnp.concatenate(parts) for parts in groups)

    def unpack(self, buffers: tuple) -> Any:
        """On the host: the state pytree with numpy leaves (views into ``buffers``)."""
        import jax

        bufs = [np.asarray(b) for b in buffers]
        leaves = [bufs[g][o : o + n].reshape(shape) for g, o, shape, n in self.layout]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)


@dataclass
class _Compiled:
    """Everything JAX-side for one scenario; built once per process."""

    scenario: Scenario
    env: Any
    env_params: Any
    static_params: Any
    reset: Any
    step: Any
    packer: _Packer
    pixels: Any = None
    textures: Any = None
    tileset: Any = None
    compile_seconds: dict[str, float] = field(default_factory=dict)
    _batched: Any = None

    def batched_step(self) -> Any:
        """``(keys, states, actions, max_steps, live) -> (keys, states, packed, host)``: ``step``
        vmapped over a leading episode axis, ended episodes (``live`` False) keeping their key
        and state; jitted on first use (one compile per batch size). Batched episodes' one
        device call per step (:meth:`AlemEnv.step_batch`)."""
        if self._batched is None:
            import jax

            step = jax.vmap(self.step.__wrapped__)

            def batched(keys, states, actions, max_steps, live):
                new_keys, new_states, packed, host = step(keys, states, actions, max_steps)
                return keep_ended(live, new_keys, keys), keep_ended(live, new_states, states), packed, host

            self._batched = jax.jit(batched)
        return self._batched


_COMPILED: dict[tuple[str, str], _Compiled] = {}


def _compiled(name: str, preset: str = "rl") -> _Compiled:
    """The cached env and jitted functions for scenario ``name`` under ``preset`` (compiles on first use).

    ``preset`` (:data:`compass.games.alem.scenarios.PRESETS`): ``rl`` is alem's RL evaluation and
    the paper's benchmark config; ``harness`` is what alem's LLM harness plays (0.2 non-specialist
    efficiency).
    """
    key = (name, preset)
    if key in _COMPILED:
        return _COMPILED[key]
    overrides = dict(get_preset(preset).overrides)
    enable_jax_cache()
    note_compile(f"ALEM {name}", 20)
    import jax
    import jax.numpy as jnp
    from alem.alem_coop.action_masking import compute_action_mask
    from alem.alem_coop.alem_state import EnvParams, StaticEnvParams, get_coordination_params
    from alem.alem_coop.game_logic import alem_step
    from alem.alem_coop.util.game_logic_utils import has_beaten_boss
    from alem.alem_env import make_alem_env_from_name

    sc = SCENARIOS[name]
    # max_timesteps only feeds the terminal test, which the jitted step takes as an argument, so
    # one compile serves every episode length.
    params = EnvParams(
        max_timesteps=10000,
        shared_reward=False,
        **(get_coordination_params(sc.difficulty) | overrides),
    )
    static = StaticEnvParams(player_count=N_AGENTS, num_levels=sc.num_levels)
    env = make_alem_env_from_name(
        sc.env_name, env_params=params, static_env_params=static, compute_full_info=False
    )
    full_game = sc.num_levels > 1

    packer = _Packer(jax.eval_shape(lambda k: env.reset(k)[1], jax.random.PRNGKey(0)))

    def step(key, state, actions, max_steps):
        # The key is split here, not on the host: one dispatch per step instead of two.
        key, sub = jax.random.split(key)
        state, reward = alem_step(sub, state, actions, params, static)
        dead = jnp.logical_not(state.player_alive).all()
        won = has_beaten_boss(state, static) if full_game else jnp.bool_(False)
        timeout = state.timestep >= max_steps
        host = (reward, dead, won, timeout, compute_action_mask(state, params, static))
        return key, state, packer.pack(state), host

    def reset(key):
        _, state = env.reset(key)
        return state, packer.pack(state), compute_action_mask(state, params, static)

    c = _Compiled(sc, env, params, static, jax.jit(reset), jax.jit(step), packer)
    t = time.perf_counter()
    state, _, _ = c.reset(jax.random.PRNGKey(0))
    jax.block_until_ready(state)
    c.compile_seconds["reset"] = time.perf_counter() - t
    t = time.perf_counter()
    jax.block_until_ready(c.step(jax.random.PRNGKey(0), state, np.zeros(N_AGENTS, np.int32), np.int32(10)))
    c.compile_seconds["step"] = time.perf_counter() - t
    _COMPILED[key] = c
    return c


def _pixels_fn(c: _Compiled):
    """Jitted ALEM egocentric pixel renderer (16 px tiles), compiled on first frame request."""
    if c.pixels is None:
        import jax
        from alem.alem_coop.constants import TEXTURES, load_player_specific_textures
        from alem.alem_coop.renderer.renderer_pixels import render_alem_pixels

        c.textures = load_player_specific_textures(TEXTURES[16], N_AGENTS)
        c.pixels = jax.jit(
            partial(
                render_alem_pixels,
                block_pixel_size=16,
                static_params=c.static_params,
                player_specific_textures=c.textures,
            )
        )
    return c.pixels


def make_alem(scenario: str, max_steps: int = 10000, text: bool = True, preset: str = "rl") -> AlemEnv:
    """An ALEM environment: ``easy``, ``medium``, ``hard`` (full 9-level game) or ``overworld`` (one level).

    ``text=False`` skips the harness text (``view.text`` is empty) for policies that never read it;
    ``preset`` picks the env config (``rl``, the default, or ``harness``; see :func:`_compiled`).
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown ALEM scenario {scenario!r}; valid: {', '.join(SCENARIOS)}")
    return AlemEnv(scenario, max_steps, text=text, preset=preset)


@dataclass
class StepTimes:
    """Cumulative wall-clock seconds spent in each part of the adapter."""

    env: float = 0.0
    transfer: float = 0.0
    extract: float = 0.0
    text: float = 0.0
    steps: int = 0

    def per_step_ms(self) -> dict[str, float]:
        n = max(self.steps, 1)
        return {k: 1000 * getattr(self, k) / n for k in ("env", "transfer", "extract", "text")}


class AlemEnv(InLanes):
    """The ``MultiAgentEnv`` protocol for ALEM (3 agents, 56 actions); steps in a batch too
    (:class:`compass.core.types.BatchStep`, its ``_key``/``_state`` per :class:`compass.util.lanes.InLanes`)."""

    family = FAMILY
    n_agents = N_AGENTS
    n_actions = N_ACTIONS

    def __init__(self, scenario: str, max_steps: int = 10000, text: bool = True, preset: str = "rl") -> None:
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown ALEM scenario {scenario!r}; valid: {', '.join(SCENARIOS)}")
        get_preset(preset)  # a clear error before any compiling
        self.scenario = scenario
        self.preset = preset
        self.max_steps = int(max_steps)
        self.with_text = text
        self._c = _compiled(scenario, preset)
        from alem.llm.alem_language_wrapper import AlemLanguageWrapper

        # The harness shows "Step: t/max_steps": give its text functions this episode's length.
        self.text_params = self._c.env_params.replace(max_timesteps=self.max_steps)
        self._wrapper = AlemLanguageWrapper(self._c.env, self.text_params)
        self.times = StepTimes()
        self._key = None  # _key and _state: its own, or its slice of a batch (InLanes)
        self._state = None  # JAX state
        self._pending: list[int] = []  # the actions of the step under way (step_begin .. step_end)
        self._np = None  # numpy copy of the state
        self._mask = None
        self._memories: list[AlemMemory] = []
        self._last_actions = [0] * N_AGENTS
        self._views: list[AgentView] = []
        self._done = False
        self._frames: tuple[int, np.ndarray] | None = None

    # ---------------------------------------------------------------- protocol
    def reset(self, seed: int) -> list[AgentView]:
        """Generate the world for ``seed`` (deterministic) and return each agent's first view."""
        import jax

        t = time.perf_counter()
        # Same key discipline as AlemLanguageWrapper.reset/step, so runs are comparable with it.
        self._leave_lanes()
        self._key, sub = jax.random.split(jax.random.PRNGKey(seed))
        self._state, packed, mask = self._c.reset(sub)
        self.times.env += time.perf_counter() - t
        t = time.perf_counter()
        packed, self._mask = jax.device_get((packed, mask))
        self._np = self._c.packer.unpack(packed)
        self.times.transfer += time.perf_counter() - t
        self._memories = [AlemMemory(self._c.scenario.num_levels) for _ in range(N_AGENTS)]
        self._last_actions = [0] * N_AGENTS
        self._done = False
        self._frames = None
        self._views = self._make_views(None, None, None)
        return self._views

    def step(self, actions: list[int]) -> StepResult:
        """Advance all agents one step with action indices (0..55)."""
        import jax

        _, acts = self.step_begin(actions)
        t = time.perf_counter()
        out = self._c.step(self._key, self._state, acts, np.int32(self.max_steps))
        self._key, self._state, packed, host = out
        self.times.env += time.perf_counter() - t
        t = time.perf_counter()
        packed, host = jax.device_get((packed, host))
        self.times.transfer += time.perf_counter() - t
        return self.step_end((packed, host))

    # ------------------------------------------- batched episodes (compass.core.types.BatchStep)
    can_batch = True

    @property
    def batch_key(self) -> tuple:
        """Envs of one scenario and preset share the compiled step: they can step together."""
        return ("alem", self.scenario, self.preset)

    def step_begin(self, actions: list[int]) -> tuple:
        """Check ``actions``; (this env, its actions) for the device step."""
        if not self._has_state:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("episode is over; call reset()")
        if len(actions) != N_AGENTS:
            raise ValueError(f"expected {N_AGENTS} actions, got {len(actions)}")
        acts = [int(a) for a in actions]
        for a in acts:
            if not 0 <= a < N_ACTIONS:
                raise ValueError(f"action {a} out of range 0..{N_ACTIONS - 1}")
        self._pending = acts
        return self, np.asarray(acts, dtype=np.int32)

    def step_idle(self) -> tuple:
        """An ended episode's input: its state stays as it is (its output is dropped)."""
        return self, None

    def step_batch(self, inputs: list[tuple]) -> list[tuple]:
        """One vmapped device step for every env of ``inputs`` (same ``batch_key``), one transfer;
        the states stay stacked on the device while the same envs step together."""
        import jax

        envs = [e for e, _ in inputs]
        lanes = Lanes.of(envs)
        noop = np.zeros(N_AGENTS, dtype=np.int32)
        actions = np.stack([a if a is not None else noop for _, a in inputs])
        max_steps = np.array([e.max_steps for e in envs], dtype=np.int32)
        live = np.array([a is not None for _, a in inputs])
        t = time.perf_counter()
        keys, states, packed, host = self._c.batched_step()(
            lanes.keys, lanes.states, actions, max_steps, live
        )
        lanes.advance(keys, states)
        packed, host = jax.device_get((packed, host))
        self.times.transfer += time.perf_counter() - t
        return [(tuple(x[b] for x in packed), tuple(x[b] for x in host)) for b in range(len(inputs))]

    def step_end(self, out: tuple) -> StepResult:
        """The views and result of the step begun, from its (packed state, host fields)."""
        packed, (reward, dead, won, timeout, mask) = out
        acts = self._pending
        prev_mask, prev_ach, prev_np = self._mask, self._np.achievements, self._np
        prev_killed = np.array(self._np.monsters_killed)
        t = time.perf_counter()
        self._mask = mask
        self._np = self._c.packer.unpack(packed)
        self.times.transfer += time.perf_counter() - t
        self._last_actions = acts
        failed = [not bool(prev_mask[i, a]) for i, a in enumerate(acts)]
        new = [
            [ACHIEVEMENTS[k] for k in np.nonzero(self._np.achievements[i] & ~prev_ach[i])[0]]
            for i in range(N_AGENTS)
        ]
        rewards = [float(r) for r in reward]
        self._views = self._make_views(rewards, new, failed)
        self._done = bool(dead or won or timeout)
        outcome = "win" if won else "loss" if dead else "timeout" if timeout else "running"
        revived = revivals(prev_np, self._np, acts)
        info = {
            "timestep": int(self._np.timestep),
            "level": int(self._np.player_level),
            "alive": [bool(a) for a in self._np.player_alive],
            "new_achievements": new,
            "action_failed": failed,
            "achievements": np.asarray(self._np.achievements, dtype=bool),
            # Per agent: why it died on this step (compass.games.alem.deaths), None otherwise; an
            # agent a teammate revived ("revived" True on that step) can die again later.
            "deaths": death_causes(prev_np, self._np),
            "revived": [r is not None for r in revived],
        }
        if self._done:
            # alem keeps a revived agent's last cause; 0 ("alive") for those alive at the end.
            info["death_cause"] = [
                int(c) if not a else 0
                for c, a in zip(self._np.player_death_cause, self._np.player_alive, strict=True)
            ]
        events = kill_events(prev_killed, self._np.monsters_killed, new) + revive_events(revived)
        if events:
            info[EVENTS] = events
        self.times.steps += 1
        return StepResult(self._views, rewards, self._done, outcome, info)

    def checkpoint(self) -> dict[str, Any]:
        """The episode's state now, for :meth:`restore` (the viewer seeks long episodes with these).

        JAX and unpacked states are replaced, never changed, by a step: they are shared; the
        agents' map memories change in place: they are copied.
        """
        import copy

        if self._state is None:
            raise RuntimeError("call reset() before checkpoint()")
        return {
            "key": self._key,
            "state": self._state,
            "np": self._np,
            "mask": self._mask,
            "memories": copy.deepcopy(self._memories),
            "last_actions": list(self._last_actions),
            "views": list(self._views),
            "done": self._done,
        }

    def restore(self, cp: dict[str, Any]) -> list[AgentView]:
        """Go back (or forward) to a :meth:`checkpoint` of this env; returns that step's views."""
        import copy

        self._key, self._state, self._np, self._mask = cp["key"], cp["state"], cp["np"], cp["mask"]
        self._memories = copy.deepcopy(cp["memories"])  # the checkpoint stays reusable
        self._last_actions = list(cp["last_actions"])
        self._views, self._done, self._frames = list(cp["views"]), cp["done"], None
        return self._views

    def render_global(self) -> np.ndarray:
        """RGB picture of the whole current level (numpy renderer, 16 px tiles)."""
        from compass.games.alem.render import load_tileset, render_map

        if self._np is None:
            raise RuntimeError("call reset() first")
        if self._c.tileset is None:
            self._c.tileset = load_tileset(16)
        return render_map(self._np, self._c.tileset)

    def render_video_frame(self, info: Any) -> np.ndarray:
        """Followable frame for videos: labelled map, HUD per agent, ego views (:mod:`.video`)."""
        from compass.games.alem.video import render_video_frame

        egos = [self._frame(int(self._np.timestep), i) for i in range(len(self._np.player_position))]
        return render_video_frame(self._np, self.render_global(), egos, info, f"alem:{self.scenario}")

    # ---------------------------------------------------------------- extras
    @property
    def state(self) -> Any:
        """The current ALEM ``EnvState`` (JAX arrays)."""
        return self._state

    @property
    def numpy_state(self) -> Any:
        """The current state as numpy arrays (what the views were built from)."""
        return self._np

    @property
    def achievements(self) -> np.ndarray:
        """(3, 93) bool: achievements unlocked so far by each agent."""
        return np.asarray(self._np.achievements, dtype=bool)

    @property
    def compile_seconds(self) -> dict[str, float]:
        return dict(self._c.compile_seconds)

    def action_name(self, action: int, agent_id: int) -> str:
        """Harness label of an action index for one agent (Give slots name the teammate)."""
        return action_name(action, agent_id)

    def action_index(self, name: str, agent_id: int) -> int:
        """Action index of a harness label for one agent."""
        return action_index(name, agent_id)

    def instruction_prompt(self, agent_id: int) -> str:
        """ALEM's own system prompt for this agent (rules, roles, achievements, output format)."""
        return self._wrapper.get_instruction_prompt(
            agent_idx=agent_id, current_level=int(self._np.player_level)
        )

    # ---------------------------------------------------------------- internals
    def _make_views(
        self, rewards: list[float] | None, new: list[list[str]] | None, failed: list[bool] | None
    ) -> list[AgentView]:
        s = self._np
        t = time.perf_counter()
        lv = level_view(s)
        obs = []
        for i in range(N_AGENTS):
            last = action_name(self._last_actions[i], i) if rewards is not None else None
            obs.append(
                extract_obs(
                    s, lv, i, self._mask[i], self.max_steps, self._memories[i], last, new[i] if new else None
                )
            )
        self.times.extract += time.perf_counter() - t
        step = int(s.timestep)
        views = []
        for i in range(N_AGENTS):
            views.append(
                AgentView(
                    agent_id=i,
                    family=FAMILY,
                    step=step,
                    alive=obs[i].alive,
                    own=own_unit(obs[i], self._last_actions[i]),
                    entities=entities(obs[i]),
                    avail_actions=tuple(obs[i].legal_indices),
                    text=None if self.with_text else "",  # written when something reads it
                    obs=obs[i],
                    extra=_extra(obs[i]),
                    render=partial(self._frame, step, i),
                    text_fn=partial(_relayed_text, _HarnessText(self, s, i, obs[i], rewards, new, failed))
                    if self.with_text
                    else None,
                )
            )
        return views

    def _text(self, s: Any, i: int, obs: ObsData, rewards, new, failed) -> str:
        w = self._wrapper
        if rewards is None:
            long_ctx, short_ctx = w.describe_frame(s, i)
        else:
            long_ctx, short_ctx = w.describe_frame(
                s,
                i,
                reward=rewards[i],
                new_achievements=new[i],
                last_action=obs.last_action,
                action_failed=failed[i],
            )
        aff = affordances_text(obs.legal_indices, i)
        return f"{long_ctx}\n\n{short_ctx}" + (f"\n\n{aff}" if aff else "")

    def _frame(self, step: int, agent_id: int, view: AgentView | None = None) -> np.ndarray:
        """ALEM's egocentric pixel observation for ``agent_id`` (16 px tiles), rendered on demand.

        (Relayed entities in ``view`` are not drawn: ALEM's renderer draws the game state.)
        """
        if step != int(self._np.timestep):
            raise RuntimeError(f"frame of step {step} requested at step {int(self._np.timestep)}")
        if self._frames is None or self._frames[0] != step:
            import jax

            pix = jax.device_get(_pixels_fn(self._c)(self._state))
            self._frames = (step, np.asarray(pix).clip(0, 255).astype(np.uint8))
        return self._frames[1][agent_id]


def _extra(obs: ObsData) -> dict[str, Any]:
    """ALEM-specific data that has no field in the base contract."""
    return {
        "role": obs.role,
        "level": obs.level,
        "level_name": obs.level_name,
        "status": obs.status,
        "inventory": obs.inventory,
        "facing": obs.facing,
        "blocks": obs.blocks,
        "coord_sites": obs.coord_sites,
        "handovers": obs.handovers,
        "mobs": obs.mobs,
        "requests": {t.id: t.request for t in obs.teammates if t.request},
        "legal_action_names": obs.legal_actions,
        "sleeping": obs.sleeping,
        "memory": obs.memory,
    }


class _HarnessText:
    """One agent's harness text of one step, written on first call (the state is kept, not copied:
    a step replaces the numpy state, never changes it)."""

    def __init__(self, env: AlemEnv, state: Any, i: int, obs: ObsData, rewards, new, failed) -> None:
        self._args: tuple | None = (env, state, i, obs, rewards, new, failed)
        self._text: str | None = None

    def __call__(self) -> str:
        if self._text is None:
            env, *args = self._args
            t = time.perf_counter()
            self._text = env._text(*args)
            env.times.text += time.perf_counter() - t
            self._args = None  # the state can go once the text exists
        return self._text


def _relayed_text(base: str | _HarnessText, view: AgentView) -> str:
    """The harness text (or its lazy writer) plus creatures teammates reported that this agent does not see itself."""
    if not isinstance(base, str):
        base = base()
    relayed = [e for e in view.entities if e.team == "enemy" and not e.visible]
    if not relayed:
        return base
    lines = ["Reported by teammates:"]
    for e in sorted(relayed, key=lambda e: (e.distance, e.id)):
        ago = "this step" if e.age == 0 else f"{e.age} step{'s' if e.age != 1 else ''} ago"
        lines.append(
            f"- {e.unit_type} (x={int(e.x)}, y={int(e.y)}) [relayed by Agent {e.source}, "
            f"{e.hops} hop{'s' if e.hops != 1 else ''}, seen {ago}]"
        )
    return base + "\n\n" + "\n".join(lines)


def relayed_mobs(view: AgentView) -> list[Entity]:
    """Enemies in ``view.entities`` that came from teammates' reports (not seen by this agent)."""
    return [e for e in view.entities if e.team == "enemy" and not e.visible]
