"""SMACv2 adapter: smacv2's ``StarCraft2Env`` on the real StarCraft II as compass agent views.

SMACv2 already speaks the combat family's action vocabulary (0 no-op, 1 stop, 2-5 move N/S/E/W,
6+j attack enemy j -- or, for a medivac, heal ally j), so actions pass through unchanged when the
env allows them. Views are built from the env's own unit protos (``env.agents``/``env.enemies``),
ranges (``unit_sight_range``/``unit_shoot_range``), ``get_avail_agent_actions`` and its
enemy-observation matrix ``obs_enemies``, which is how SMACv2 implements ``prob_obs_enemy`` (the
extended partial observability setting, EPO).

Nothing here imports smacv2 or pysc2 until an environment is built: without them,
:func:`make_smacv2` raises :class:`Smacv2NotInstalledError` with the install steps.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compass.core.types import AgentView, Entity, OwnUnit, StepResult
from compass.games.combat.scenarios import CombatScenario, get_scenario
from compass.games.combat.smacv2.config import (
    SC2_UNIT_TYPE_IDS,
    SIGHT_RANGE,
    SMACV2_UNIT_NAMES,
    env_kwargs,
    shoot_range,
)
from compass.games.combat.smacv2.install import Smacv2NotInstalledError, require_smacv2
from compass.games.combat.text import (
    ATTACK_OFFSET,
    NOOP,
    STOP,
    render_combat_text,
)
from compass.games.combat.view import CombatObs, combat_agent_view, deaths_seen_by, entities_seen_by

__all__ = ["Smacv2Env", "Smacv2NotInstalledError", "Smacv2Snapshot", "make_smacv2", "smacv2_text"]

EnvFactory = Callable[[dict[str, Any]], Any]
# smacv2's unit_max_cooldown for a medivac is its max energy: it has no weapon.
MEDIVAC = "medivac"
MEDIVAC_MAX_ENERGY = 200.0


def _smacv2_factory(kwargs: dict[str, Any]) -> Any:
    """Build smacv2's capability wrapper (draws teams and start positions every reset)."""
    from smacv2.env.starcraft2.wrapper import StarCraftCapabilityEnvWrapper

    return StarCraftCapabilityEnvWrapper(**kwargs)


@dataclass
class Smacv2Snapshot:
    """Host-side copy of one step's units, in the shape ``compass.games.combat.render`` draws."""

    pos: np.ndarray  # (n, 2) map units
    alive: np.ndarray  # (n,) bool
    health: np.ndarray  # (n,) fraction of health_max
    shield: np.ndarray  # (n,) fraction of shield_max (0 for non-protoss)
    names: tuple[str, ...]  # unit type names, allies first
    cooldown: np.ndarray  # (n,) weapon cooldown as a fraction of the type's max
    energy: np.ndarray  # (n,) medivac energy fraction, else 0
    n_allies: int
    sight: np.ndarray = field(repr=False)  # (n,)
    attack: np.ndarray = field(repr=False)  # (n,) shoot range
    map_size: tuple[float, float] = (32.0, 32.0)

    def type_name(self, u: int) -> str:
        return self.names[u]


def smacv2_text(view: AgentView) -> str:
    """The combat text, plus for medivacs what their target actions mean (heal, not attack)."""
    text = render_combat_text(view)
    if view.alive and view.own.unit_type == MEDIVAC:
        targets = [a - ATTACK_OFFSET for a in sorted(view.avail_actions) if a >= ATTACK_OFFSET]
        listed = ", ".join(f"Ally #{j}" for j in targets) or "none"
        text += (
            f"\nMedivac: you cannot attack; action {ATTACK_OFFSET}+j heals Ally #j (heal(j)). "
            f"Heal targets: {listed}"
        )
    return text


def _reseed_distributions(dists: dict[str, Any], seed: int) -> None:
    """Give every ``rng`` of smacv2's team/position distributions (and their nested ones) a fresh seed."""
    seq = np.random.SeedSequence(seed)

    def walk(obj: Any, depth: int) -> None:
        if isinstance(getattr(obj, "rng", None), np.random.Generator):
            obj.rng = np.random.default_rng(seq.spawn(1)[0])
        if depth >= 3 or not hasattr(obj, "__dict__"):
            return
        for name in sorted(vars(obj)):
            child = vars(obj)[name]
            if callable(getattr(child, "generate", None)):  # a nested Distribution
                walk(child, depth + 1)

    for key in sorted(dists):
        walk(dists[key], 0)


class Smacv2Env:
    """A compass combat environment over smacv2's ``StarCraft2Env`` (see module docstring).

    ``env_factory`` builds the native env from ``StarCraftCapabilityEnvWrapper`` keyword arguments;
    the default imports smacv2 (checking the game and maps first). Tests pass a stand-in.
    """

    family = "combat"

    def __init__(
        self,
        scenario: str = "protoss_5_vs_5",
        epo: bool = False,
        prob_obs_enemy: float | None = None,
        max_steps: int | None = None,
        *,
        action_mask: bool | None = None,
        seed: int | None = None,
        env_factory: EnvFactory | None = None,
        **env_overrides: Any,
    ) -> None:
        self.spec: CombatScenario = get_scenario(scenario)
        self.scenario = scenario
        self.epo = epo
        # SMACv2's EPO config: prob_obs_enemy=0 and no range mask on attack actions.
        self.prob_obs_enemy = (0.0 if epo else 1.0) if prob_obs_enemy is None else float(prob_obs_enemy)
        self.action_mask = (not epo) if action_mask is None else action_mask
        if env_factory is None:
            require_smacv2()
            env_factory = _smacv2_factory
        self.env_kwargs = env_kwargs(
            self.spec,
            prob_obs_enemy=self.prob_obs_enemy,
            action_mask=self.action_mask,
            seed=seed,
            **env_overrides,
        )
        # smacv2's wrapper writes into capability_config; keep our copy clean for inspection.
        self.env = env_factory(copy.deepcopy(self.env_kwargs))
        # The wrapper keeps the StarCraft2Env in ``.env``; unit data and settings live there.
        self.sc = getattr(self.env, "env", self.env)
        self.n_agents = int(self.sc.n_agents)
        self.n_enemies = int(self.sc.n_enemies)
        self.n_actions = int(self.sc.get_total_actions())
        if int(getattr(self.sc, "n_actions_no_attack", ATTACK_OFFSET)) != ATTACK_OFFSET:
            raise ValueError("conic_fov shifts SMACv2's attack indices; compass needs attack = 6 + j")
        if max_steps:
            self.sc.episode_limit = int(max_steps)  # smacv2 then ends the episode itself, as at its limit
        self.max_steps = int(self.sc.episode_limit)
        self.t = 0
        self.snap: Smacv2Snapshot | None = None
        self.unit_types: tuple[list[str], list[str]] = ([], [])
        self._type_names: dict[int, str] = {}
        self._last_actions = np.zeros(self.n_agents, dtype=np.int64)
        self._observed = np.ones((self.n_enemies, self.n_agents), dtype=bool)
        self._prev_alive: np.ndarray | None = None  # who was alive before this step (deaths seen)
        self._in_episode = False

    # --- episode control ----------------------------------------------------------------------

    def reset(self, seed: int) -> list[AgentView]:
        """Start an episode. ``seed`` fixes the drawn teams, start positions and EPO draws; the game's
        own randomness is seeded once, when it launches (``seed=`` of the constructor)."""
        # smacv2 draws teams from its distributions' rngs, shuffles with `random` and makes the EPO
        # draws with `np.random`: seed all three so an episode seed reproduces them.
        random.seed(seed)
        np.random.seed(seed % 2**32)
        _reseed_distributions(getattr(self.env, "env_key_to_distribution_map", None) or {}, seed)
        if self._in_episode and getattr(self.sc, "_episode_count", None) == 0:
            # smacv2 launches a new StarCraft II on reset until one episode has *terminated*; an
            # abandoned first episode would leak the running game. Count it as played.
            self.sc._episode_count = 1
        self.env.reset()
        self._in_episode = True
        self.t = 0
        self._type_names = self._unit_type_names()
        self._snapshot()
        self._prev_alive = None
        n = self.n_agents
        self.unit_types = (list(self.snap.names[:n]), list(self.snap.names[n:]))
        return self.views()

    def step(self, actions: list[int]) -> StepResult:
        """Apply one SMACv2 action per ally; actions the env would refuse are replaced (see ``native_action``)."""
        if len(actions) != self.n_agents:
            raise ValueError(f"expected {self.n_agents} actions, got {len(actions)}")
        native = [self.native_action(i, int(a)) for i, a in enumerate(actions)]
        replaced = sum(int(a) != b for a, b in zip(actions, native, strict=True))
        reward, terminated, info = self.env.step(native)
        self.t += 1
        # smacv2 updates who observes which enemy (obs_enemies) inside get_obs, as its training loops do.
        self.env.get_obs()
        self._prev_alive = self.snap.alive.copy()
        self._snapshot()
        outcome = self._outcome(bool(terminated), info)
        self._in_episode = not terminated
        out = {
            "battle_won": outcome == "win",
            "dead_allies": int(info.get("dead_allies", int((~self.snap.alive[: self.n_agents]).sum()))),
            "dead_enemies": int(info.get("dead_enemies", int((~self.snap.alive[self.n_agents :]).sum()))),
            "replaced_actions": replaced,
        }
        if terminated and not info:
            out["sc2_restarted"] = True  # smacv2 lost the game connection and relaunched it
        reward = float(reward)
        return StepResult(self.views(), [reward] * self.n_agents, outcome != "running", outcome, out)

    def _outcome(self, terminated: bool, info: dict[str, Any]) -> str:
        if info.get("battle_won"):
            return "win"
        if not terminated and self.t < self.max_steps:
            return "running"
        s, n = self.snap, self.n_agents
        fighting = [u for u in range(n) if s.alive[u] and s.names[u] != MEDIVAC]
        if not fighting:
            return "loss"  # smacv2 also counts "only medivacs left" as lost
        if self.t >= self.max_steps or not info:
            return "timeout"
        return "loss"  # both teams destroyed in the same step: no win

    def close(self) -> None:
        """Shut the StarCraft II process down."""
        self.env.close()

    # --- actions --------------------------------------------------------------------------------

    def native_action(self, i: int, action: int) -> int:
        """The action sent for agent ``i``: ``action`` itself when smacv2 allows it (identity).

        smacv2 asserts on unavailable actions, so others are replaced: a dead unit sends no-op;
        anything else (no-op while alive, a move into a wall, an attack that is masked) becomes
        stop. An unmasked out-of-range attack (EPO) is passed on: smacv2 then sends no command for
        it (starcraft2.py L847-858 at oxwhirl/smacv2@577ab5a), so the unit does not walk there.
        """
        if not 0 <= action < self.n_actions:
            raise ValueError(f"action {action} out of range: SMACv2 has {self.n_actions} actions here")
        avail = self.sc.get_avail_agent_actions(i)
        if avail[action]:
            return action
        if avail[NOOP]:  # smacv2 offers no-op to dead units only
            return NOOP
        return STOP

    # --- observation ----------------------------------------------------------------------------

    def _unit_type_names(self) -> dict[int, str]:
        """unit_type id -> name from the env: its ally/enemy unit maps, else its ``<name>_id`` fields."""
        names: dict[int, str] = {}
        for attr in ("enemy_unit_map", "ally_unit_map"):
            for name, type_id in (getattr(self.sc, attr, None) or {}).items():
                names[int(type_id)] = name
        for name in SMACV2_UNIT_NAMES:
            type_id = int(getattr(self.sc, f"{name}_id", 0) or 0)
            if type_id:  # smacv2 leaves these 0 until the map's ids are known
                names.setdefault(type_id, name)
        for name, type_id in SC2_UNIT_TYPE_IDS.items():
            names.setdefault(type_id, name)
        return names

    def _snapshot(self) -> None:
        sc, n = self.sc, self.n_agents
        units = [sc.agents[i] for i in range(n)] + [sc.enemies[j] for j in range(self.n_enemies)]
        names = tuple(self._type_names.get(int(u.unit_type), f"unit{int(u.unit_type)}") for u in units)
        health = np.array([u.health / u.health_max if u.health_max else 0.0 for u in units], dtype=np.float64)
        shield = np.array([u.shield / u.shield_max if getattr(u, "shield_max", 0) else 0.0 for u in units])
        cooldown = np.zeros(len(units))
        energy = np.zeros(len(units))
        for u, unit in enumerate(units):
            if names[u] == MEDIVAC:
                energy[u] = getattr(unit, "energy", 0.0) / MEDIVAC_MAX_ENERGY
            elif u < n:
                cooldown[u] = unit.weapon_cooldown / sc.unit_max_cooldown(unit)
        sight = np.array(
            [sc.unit_sight_range(i) for i in range(n)] + [SIGHT_RANGE.get(name, 9) for name in names[n:]],
            dtype=np.float64,
        )
        attack = np.array(
            [sc.unit_shoot_range(i) for i in range(n)] + [shoot_range(name) for name in names[n:]],
            dtype=np.float64,
        )
        self.snap = Smacv2Snapshot(
            pos=np.array([[u.pos.x, u.pos.y] for u in units], dtype=np.float64),
            alive=health > 0,
            health=health,
            shield=np.clip(shield, 0.0, 1.0),
            names=names,
            cooldown=np.clip(cooldown, 0.0, 1.0),
            energy=np.clip(energy, 0.0, 1.0),
            n_allies=n,
            sight=sight,
            attack=attack,
            map_size=(float(sc.map_x), float(sc.map_y)),
        )
        # smacv2 keeps last actions one-hot; an all-zero row (episode start) reads as no-op.
        last = getattr(sc, "last_action", None)
        last = np.zeros((n, self.n_actions)) if last is None else np.asarray(last).reshape(n, -1)
        self._last_actions = np.where(last.any(axis=1), last.argmax(axis=1), NOOP).astype(np.int64)
        obs_enemies = getattr(sc, "obs_enemies", None)
        self._observed = (
            np.ones((self.n_enemies, n), dtype=bool)
            if obs_enemies is None
            else np.asarray(obs_enemies).astype(bool)
        )

    def observed(self, agent: int, enemy: int) -> bool:
        """Whether smacv2 lets ``agent`` observe ``enemy`` at all (its ``obs_enemies`` entry, EPO)."""
        return bool(self._observed[enemy, agent])

    def _own(self, i: int) -> OwnUnit:
        s = self.snap
        return OwnUnit(
            s.names[i],
            float(s.pos[i, 0]),
            float(s.pos[i, 1]),
            float(s.health[i]),
            float(s.sight[i]),
            float(s.attack[i]),
            int(self._last_actions[i]),
            *s.map_size,
        )

    def _obs(self, i: int) -> CombatObs:
        return CombatObs(shield=float(self.snap.shield[i]), weapon_cooldown=float(self.snap.cooldown[i]))

    def visible_entities(self, i: int) -> tuple[Entity, ...]:
        """Units agent ``i`` sees itself this step, by smacv2's rule: alive, closer than its sight
        range, and -- for enemies -- observed by it (``obs_enemies``)."""
        s = self.snap
        return entities_seen_by(
            s,
            i,
            self.n_agents,
            self._observed,
            self._last_actions,
            can_shoot=s.names[i] != MEDIVAC,
            range_inclusive=True,
        )

    def avail_actions(self, i: int) -> tuple[int, ...]:
        """smacv2's ``get_avail_agent_actions`` as a tuple of indices."""
        return tuple(int(a) for a in np.flatnonzero(np.asarray(self.sc.get_avail_agent_actions(i))))

    def views(self) -> list[AgentView]:
        """One AgentView per ally for the current step."""
        out = []
        for i in range(self.n_agents):
            extra: dict[str, Any] = {}
            if self.snap.names[i] == MEDIVAC:
                extra = {"targets": "allies", "energy": float(self.snap.energy[i])}
            deaths = deaths_seen_by(self.snap, self._prev_alive, i, self.n_agents, self._observed)
            if deaths:
                extra["deaths_seen"] = deaths
            out.append(
                combat_agent_view(
                    i,
                    self.t,
                    self.snap,
                    self._own(i),
                    self._obs(i),
                    self.visible_entities(i),
                    self.avail_actions(i),
                    smacv2_text,
                    extra,
                )
            )
        return out

    def render_global(self) -> np.ndarray:
        """Whole-map RGB frame of the current step (our renderer, from unit positions)."""
        from compass.games.combat.render import render_global

        return render_global(self.snap, step=self.t)


def make_smacv2(
    scenario: str,
    *,
    epo: bool = False,
    max_steps: int | None = None,
    prob_obs_enemy: float | None = None,
    action_mask: bool | None = None,
    seed: int | None = None,
    env_factory: EnvFactory | None = None,
    **env_overrides: Any,
) -> Smacv2Env:
    """Build the SMACv2 adapter for ``protoss_5_vs_5``, ``terran_5_vs_6``, ... (``compass run --env smacv2:...``).

    The scenario name is checked first; then, unless ``env_factory`` is given, smacv2, pysc2,
    StarCraft II and the SMACv2 maps, raising :class:`Smacv2NotInstalledError` (an ``ImportError``)
    that lists exactly what to install. ``epo`` selects SMACv2's extended partial observability
    (``prob_obs_enemy=0``, ``action_mask=False``); ``prob_obs_enemy`` and ``action_mask`` override
    either. ``seed`` seeds the game at launch; other keywords go to smacv2's ``StarCraft2Env``.
    """
    get_scenario(scenario)
    return Smacv2Env(
        scenario,
        epo=epo,
        prob_obs_enemy=prob_obs_enemy,
        max_steps=max_steps,
        action_mask=action_mask,
        seed=seed,
        env_factory=env_factory,
        **env_overrides,
    )
