"""A stand-in for smacv2's ``StarCraft2Env`` and ``StarCraftCapabilityEnvWrapper`` (no game needed).

Written from smacv2's public API (``smacv2/env/starcraft2/starcraft2.py`` and ``wrapper.py``): the
same constructor keywords, attribute names and method signatures the adapter relies on, with toy
combat dynamics in place of the game. Behaviour the adapter depends on is kept:

- units are proto-like (``tag``, ``unit_type``, ``owner``, ``health``/``health_max``,
  ``shield``/``shield_max``, ``energy``, ``weapon_cooldown``, ``pos.x``/``pos.y``); allies carry the
  map's RL unit type ids (``ally_unit_map``, ``<name>_id``), enemies SC2's ids (``enemy_unit_map``);
  allies are ordered by ``(unit_type, pos.x, pos.y)`` as ``init_units`` orders them;
- a dead unit keeps its last proto with ``health = 0``;
- ``get_avail_agent_actions``: no-op only when dead, stop always, moves unless off the map, attacks
  on alive enemies in shoot range (all alive ones with ``action_mask=False``); medivacs target
  non-medivac allies (heal);
- ``step`` follows upstream's ``step``/``get_agent_action``/``update_units``/``reward_battle``
  (line numbers cited at each method, oxwhirl/smacv2@577ab5a ``smacv2/env/starcraft2/starcraft2.py``):
  it asserts each action is available, turns it into the order smacv2 would send (``orders_sent``;
  an attack or heal whose target is out of shoot range sends NO order), returns the shaped, scaled
  reward (damage + 10 per kill + 200 for a win, divided by ``max_reward / 20``), and ends the
  episode when a side is dead (or only medivacs are left) or at ``episode_limit``;
- ``get_obs`` updates ``obs_enemies`` (n_enemies x n_agents) and ``enemy_tags``: the first agent to
  see an enemy observes it, every other agent with probability ``prob_obs_enemy`` (``np.random.rand``),
  agents visited in ``random.shuffle`` order;
- ``last_action`` is one-hot (n_agents x n_actions).
"""

from __future__ import annotations

import math
import random
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SC2_IDS = {
    "colossus": 4,
    "baneling": 9,
    "marine": 48,
    "marauder": 51,
    "medivac": 54,
    "zealot": 73,
    "stalker": 74,
    "zergling": 105,
    "hydralisk": 107,
}
# smacv2 registers the 9 RL unit types in this alphabetical order after the game's own.
RL_ORDER = (
    "baneling",
    "colossus",
    "hydralisk",
    "marauder",
    "marine",
    "medivac",
    "stalker",
    "zealot",
    "zergling",
)
STATS = {  # health, shield, damage per step
    "stalker": (80, 80, 13),
    "zealot": (100, 50, 16),
    "colossus": (200, 150, 20),
    "marine": (45, 0, 6),
    "marauder": (125, 0, 10),
    "medivac": (150, 0, 0),
    "zergling": (35, 0, 5),
    "baneling": (30, 0, 16),
    "hydralisk": (90, 0, 12),
}
SIGHT = {
    "stalker": 10,
    "zealot": 9,
    "colossus": 10,
    "zergling": 8,
    "baneling": 8,
    "hydralisk": 9,
    "marine": 9,
    "marauder": 10,
    "medivac": 11,
}
SHOOT = {
    "stalker": 6,
    "zealot": 0.1,
    "colossus": 7,
    "zergling": 0.1,
    "baneling": 0.25,
    "hydralisk": 5,
    "marine": 5,
    "marauder": 6,
    "medivac": 4,
}
MAX_COOLDOWN = {
    "marine": 15,
    "marauder": 25,
    "medivac": 200,
    "stalker": 35,
    "zealot": 22,
    "colossus": 24,
    "hydralisk": 10,
    "zergling": 11,
    "baneling": 1,
}
MAPS = {"10gen_protoss": "protoss_gen", "10gen_terran": "terran_gen", "10gen_zerg": "zerg_gen"}


@dataclass
class Point:
    x: float
    y: float
    z: float = 8.0


@dataclass
class Unit:
    """The fields of an SC2 raw ``Unit`` proto that smacv2 and the adapter read."""

    tag: int
    unit_type: int
    owner: int
    pos: Point
    health: float
    health_max: float
    shield: float = 0.0
    shield_max: float = 0.0
    energy: float = 0.0
    weapon_cooldown: float = 0.0


class StarCraft2Env:
    """Stand-in for ``smacv2.env.starcraft2.starcraft2.StarCraft2Env``."""

    def __init__(
        self,
        map_name: str = "10gen_protoss",
        step_mul: int = 8,
        move_amount: float = 2,
        difficulty: str = "7",
        seed: int | None = None,
        capability_config: dict | None = None,
        use_unit_ranges: bool = False,
        min_attack_range: float = 2,
        obs_own_pos: bool = False,
        conic_fov: bool = False,
        fully_observable: bool = False,
        prob_obs_enemy: float = 1.0,
        action_mask: bool = True,
        min_unit_type: int = 1970,
        enemy_ai: bool = False,
        **other: Any,
    ) -> None:
        self.map_name = map_name
        self.map_type = MAPS[map_name]
        self.episode_limit = 200
        self._move_amount = move_amount
        self._seed = seed
        self.capability_config = capability_config or {}
        team_gen = self.capability_config.get("team_gen", {})
        self.n_agents = team_gen.get("n_units", self.capability_config.get("n_units", 10))
        self.n_enemies = team_gen.get("n_enemies", self.capability_config.get("n_enemies", 10))
        self.use_unit_ranges = use_unit_ranges
        self.min_attack_range = min_attack_range
        self.conic_fov = conic_fov
        self.prob_obs_enemy = prob_obs_enemy
        self.action_mask = action_mask
        self.n_actions_move = 4
        self.n_actions_no_attack = self.n_actions_move + 2
        if self.map_type in ("MMM", "terran_gen") and self.n_agents > self.n_enemies:
            self.n_actions = self.n_actions_no_attack + self.n_agents
        else:
            self.n_actions = self.n_actions_no_attack + self.n_enemies
        self.map_x = self.map_y = 0
        self.agents: dict[int, Unit] = {}
        self.enemies: dict[int, Unit] = {}
        self.obs_enemies = None
        self.enemy_tags = None
        self.last_action = np.zeros((self.n_agents, self.n_actions))
        self._episode_steps = 0
        self._episode_count = 0
        self.marine_id = self.marauder_id = self.medivac_id = 0
        self.hydralisk_id = self.zergling_id = self.baneling_id = 0
        self.stalker_id = self.colossus_id = self.zealot_id = 0
        self._min_unit_type = min_unit_type
        self.enemy_ai = enemy_ai
        self.closed = False
        self.launches = 0
        self.actions_received: list[list[int]] = []
        self.other_kwargs = other
        self.orders_sent: list[list[tuple]] = []  # per step, what get_agent_action sent to the game
        # Reward settings: smacv2's defaults (starcraft2.py L96-103); max_reward as L338-340 plus
        # the enemies' health and shield on the first episode (init_units, L2406-2410).
        self.reward_death_value, self.reward_win, self.reward_defeat = 10, 200, 0
        self.reward_scale_rate = 20
        self.max_reward = self.n_enemies * self.reward_death_value + self.reward_win
        self._total_steps = 0
        self.death_tracker_ally = np.zeros(self.n_agents)
        self.death_tracker_enemy = np.zeros(self.n_enemies)
        self.win_counted = self.defeat_counted = False

    # --- episode ------------------------------------------------------------------------------

    def _init_ally_unit_types(self) -> None:
        for k, name in enumerate(RL_ORDER):
            setattr(self, f"{name}_id", self._min_unit_type + k)
        self.ally_unit_map = {name: self._min_unit_type + k for k, name in enumerate(RL_ORDER)}
        self.enemy_unit_map = dict(SC2_IDS)

    def reset(self, episode_config: dict | None = None):
        episode_config = episode_config or {}
        if self._episode_count == 0:  # smacv2 (re)launches SC2 until an episode has ended
            self.launches += 1
            self.map_x = self.map_y = 32
        self._episode_steps = 0
        self._init_ally_unit_types()
        teams = episode_config.get("team_gen", {})
        ally_team, enemy_team = teams["ally_team"], teams["enemy_team"]
        ally_pos = episode_config["ally_start_positions"]["item"]
        enemy_pos = episode_config["enemy_start_positions"]["item"]
        tag = iter(range(1000, 2000))

        def make(name: str, owner: int, xy) -> Unit:
            hp, sh, _ = STATS[name]
            type_id = self.ally_unit_map[name] if owner == 1 else self.enemy_unit_map[name]
            return Unit(
                next(tag),
                type_id,
                owner,
                Point(float(xy[0]), float(xy[1])),
                hp,
                hp,
                sh,
                sh,
                energy=50.0 if name == "medivac" else 0.0,
            )

        allies = [make(n, 1, p) for n, p in zip(ally_team, ally_pos, strict=True)]
        allies.sort(key=lambda u: (u.unit_type, u.pos.x, u.pos.y))
        self.agents = dict(enumerate(allies))
        self.enemies = {j: make(n, 2, p) for j, (n, p) in enumerate(zip(enemy_team, enemy_pos, strict=True))}
        self.obs_enemies = np.zeros((self.n_enemies, self.n_agents))
        self.enemy_tags = [None] * self.n_enemies
        self.last_action = np.zeros((self.n_agents, self.n_actions))
        self.previous_ally_units = self.previous_enemy_units = None
        self.death_tracker_ally = np.zeros(self.n_agents)  # reset, L552-559
        self.death_tracker_enemy = np.zeros(self.n_enemies)
        self.win_counted = self.defeat_counted = False
        if self._episode_count == 0:
            self.max_reward = self.n_enemies * self.reward_death_value + self.reward_win
            self.max_reward += sum(u.health_max + u.shield_max for u in self.enemies.values())
        return self.get_obs(), self.get_state()

    def close(self) -> None:
        self.closed = True

    # --- queries --------------------------------------------------------------------------------

    def _name(self, unit: Unit) -> str:
        for mapping in (self.ally_unit_map, self.enemy_unit_map):
            for name, type_id in mapping.items():
                if type_id == unit.unit_type:
                    return name
        raise KeyError(unit.unit_type)

    def get_unit_by_id(self, a_id: int) -> Unit:
        return self.agents[a_id]

    def get_total_actions(self) -> int:
        return self.n_actions

    @staticmethod
    def distance(x1: float, y1: float, x2: float, y2: float) -> float:
        return math.hypot(x2 - x1, y2 - y1)

    def unit_shoot_range(self, agent_id: int) -> float:
        if not self.use_unit_ranges:
            return 6
        return max(SHOOT[self._name(self.agents[agent_id])], self.min_attack_range)

    def unit_sight_range(self, agent_id: int) -> float:
        if not self.use_unit_ranges:
            return 9
        return SIGHT[self._name(self.agents[agent_id])]

    def unit_max_cooldown(self, unit: Unit) -> float:
        return MAX_COOLDOWN.get(self._name(unit), 15)

    def check_bounds(self, x: int, y: int) -> bool:
        return 0 <= x < self.map_x and 0 <= y < self.map_y

    def can_move(self, unit: Unit, direction: int) -> bool:
        m = self._move_amount / 2
        dx, dy = ((0, m), (0, -m), (m, 0), (-m, 0))[direction]
        return self.check_bounds(int(unit.pos.x + dx), int(unit.pos.y + dy))

    def _targets(self, unit: Unit):
        if self.map_type in ("MMM", "terran_gen") and unit.unit_type == self.medivac_id:
            return [(t, u) for t, u in self.agents.items() if u.unit_type != self.medivac_id]
        return list(self.enemies.items())

    def get_avail_agent_actions(self, agent_id: int) -> list[int]:
        unit = self.get_unit_by_id(agent_id)
        if unit.health <= 0:
            return [1] + [0] * (self.n_actions - 1)
        avail = [0] * self.n_actions
        avail[1] = 1
        for d in range(4):
            avail[2 + d] = int(self.can_move(unit, d))
        shoot = self.unit_shoot_range(agent_id)
        for t_id, t_unit in self._targets(unit):
            if t_unit.health > 0 and (
                not self.action_mask
                or self.distance(unit.pos.x, unit.pos.y, t_unit.pos.x, t_unit.pos.y) <= shoot
            ):
                avail[t_id + self.n_actions_no_attack] = 1
        return avail

    def get_avail_actions(self) -> list[list[int]]:
        return [self.get_avail_agent_actions(i) for i in range(self.n_agents)]

    def get_obs_agent(self, agent_id: int, fully_observable: bool = False) -> np.ndarray:
        unit = self.get_unit_by_id(agent_id)
        feats = np.zeros((self.n_enemies, 2), dtype=np.float32)
        if unit.health <= 0:
            return feats.ravel()
        sight = self.unit_sight_range(agent_id)
        for e_id, e_unit in self.enemies.items():
            dist = self.distance(unit.pos.x, unit.pos.y, e_unit.pos.x, e_unit.pos.y)
            visible = dist < sight
            if visible and self.enemy_tags[e_id] is None:
                self.obs_enemies[e_id, agent_id] = 1
                self.enemy_tags[e_id] = agent_id
                for a_id in range(self.n_agents):
                    if a_id != agent_id and np.random.rand() < self.prob_obs_enemy:
                        self.obs_enemies[e_id, a_id] = 1
            if visible and self.obs_enemies[e_id, agent_id] and e_unit.health > 0:
                feats[e_id] = (1.0, dist / sight)
        return feats.ravel()

    def get_obs(self) -> list[np.ndarray]:
        order = list(range(self.n_agents))
        random.shuffle(order)
        out: list[Any] = [None] * self.n_agents
        for a in order:
            out[a] = self.get_obs_agent(a)
        return out

    def get_state(self) -> np.ndarray:
        return np.array([u.health for u in self.agents.values()] + [u.health for u in self.enemies.values()])

    # --- dynamics ------------------------------------------------------------------------------

    def _hit(self, target: Unit, damage: float) -> None:
        absorbed = min(target.shield, damage)
        target.shield -= absorbed
        target.health = max(0.0, target.health - (damage - absorbed))

    # --- one step, as upstream's ``step`` (starcraft2.py L612-722 at oxwhirl/smacv2@577ab5a) -------

    def get_agent_action(self, a_id: int, action: int) -> tuple | None:
        """The order smacv2 sends for ``action`` (L724-871), or ``None`` for no order at all."""
        avail = self.get_avail_agent_actions(a_id)
        assert avail[action] == 1, f"Agent {a_id} cannot perform action {action}"  # L727-729
        unit = self.get_unit_by_id(a_id)
        x, y = unit.pos.x, unit.pos.y
        if action == 0:
            assert unit.health == 0, "No-op only available for dead agents."  # L736-741
            return None
        if action == 1:
            return ("stop", a_id)  # L742-750
        if action in (2, 3, 4, 5):  # L752-815: move by _move_amount N, S, E, W
            dx, dy = ((0, 1), (0, -1), (1, 0), (-1, 0))[action - 2]
            return ("move", a_id, x + dx * self._move_amount, y + dy * self._move_amount)
        target_id = action - self.n_actions_no_attack  # L823-845
        if self.map_type in ("MMM", "terran_gen") and unit.unit_type == self.medivac_id:
            target, name = self.agents[target_id], "heal"
        else:
            target, name = self.enemies[target_id], "attack"
        # L847-858: an attack/heal is sent only when the target is in shoot range; otherwise NO
        # command at all (with action_mask=False, EPO, out-of-range attacks are available but do
        # nothing: the unit does not walk to the target).
        if not self.get_can_shoot(a_id, target):
            return None
        return (name, a_id, target.tag)

    def get_can_shoot(self, agent_id: int, t_unit: Unit) -> bool:
        """L2186-2199 (no conic FOV): distance <= the agent's shoot range."""
        unit = self.get_unit_by_id(agent_id)
        return self.distance(unit.pos.x, unit.pos.y, t_unit.pos.x, t_unit.pos.y) <= self.unit_shoot_range(
            agent_id
        )

    def _apply(self, order: tuple) -> None:
        """Toy game physics for one order (the game itself is not here)."""
        kind, a_id = order[0], order[1]
        unit = self.agents[a_id]
        if kind == "move":
            unit.pos = Point(
                min(max(order[2], 0.0), self.map_x - 0.01), min(max(order[3], 0.0), self.map_y - 0.01)
            )
        elif kind == "heal":
            target = next(u for u in self.agents.values() if u.tag == order[2])
            target.health = min(target.health_max, target.health + 9)
        elif kind == "attack":
            target = next(u for u in self.enemies.values() if u.tag == order[2])
            self._hit(target, STATS[self._name(unit)][2])
            unit.weapon_cooldown = self.unit_max_cooldown(unit) / 2

    def step(self, actions):
        actions = [int(a) for a in actions]
        self.actions_received.append(actions)
        self.last_action = np.eye(self.n_actions)[np.array(actions)]
        orders = [self.get_agent_action(a_id, a) for a_id, a in enumerate(actions)]  # L623-632
        self.orders_sent.append([o for o in orders if o])
        self.previous_ally_units = deepcopy(self.agents)  # update_units, L2459-2460
        self.previous_enemy_units = deepcopy(self.enemies)
        for order in orders:
            if order:
                self._apply(order)
        if self.enemy_ai:
            for e_unit in self.enemies.values():
                if e_unit.health <= 0:
                    continue
                alive = [u for u in self.agents.values() if u.health > 0]
                if alive:
                    near = min(
                        alive, key=lambda u: self.distance(u.pos.x, u.pos.y, e_unit.pos.x, e_unit.pos.y)
                    )
                    self._hit(near, STATS[self._name(e_unit)][2])
        self._total_steps += 1
        self._episode_steps += 1
        game_end_code = self.update_units()
        terminated = False
        reward = self.reward_battle()
        info: dict[str, Any] = {"battle_won": False}
        dead_allies = dead_enemies = 0  # L668-684
        for a_id, unit in self.agents.items():
            if unit.health == 0:
                dead_allies += 1
                for e in range(self.n_enemies):
                    if self.enemy_tags[e] == a_id:
                        self.enemy_tags[e] = None
                        self.obs_enemies[e, :] = 0
                        self.obs_enemies[:, a_id] = 0
        for e_id, unit in self.enemies.items():
            if unit.health == 0:
                dead_enemies += 1
                self.enemy_tags[e_id] = None
                self.obs_enemies[e_id, :] = 0
        info["dead_allies"], info["dead_enemies"] = dead_allies, dead_enemies
        if game_end_code is not None:  # L686-702: battle over (won, lost or both teams dead)
            terminated = True
            if game_end_code == 1 and not self.win_counted:
                self.win_counted = True
                info["battle_won"] = True
                reward += self.reward_win
            elif game_end_code == -1 and not self.defeat_counted:
                self.defeat_counted = True
                reward += self.reward_defeat
        elif self._episode_steps >= self.episode_limit:  # L704-710
            terminated = True
        if terminated:
            self._episode_count += 1
        reward /= self.max_reward / self.reward_scale_rate  # L717-718 (reward_scale=True)
        return reward, terminated, info

    def update_units(self) -> int | None:
        """Game end code as L2487-2501: -1 lost, 1 won, 0 both teams dead, None running."""
        n_ally_alive = sum(u.health > 0 for u in self.agents.values())
        n_enemy_alive = sum(u.health > 0 for u in self.enemies.values())
        if n_ally_alive == 0 and n_enemy_alive > 0 or self.only_medivac_left(ally=True):
            return -1
        if n_ally_alive > 0 and n_enemy_alive == 0 or self.only_medivac_left(ally=False):
            return 1
        if n_ally_alive == 0 and n_enemy_alive == 0:
            return 0
        return None

    def only_medivac_left(self, ally: bool) -> bool:
        """L2597-2619: only medivacs alive on one side (terran maps only)."""
        if self.map_type not in ("MMM", "terran_gen"):
            return False
        if ally:
            return not [a for a in self.agents.values() if a.health > 0 and a.unit_type != self.medivac_id]
        return not [a for a in self.enemies.values() if a.health > 0 and a.unit_type != SC2_IDS["medivac"]]

    def reward_battle(self) -> float:
        """L989-1046 with smacv2's defaults (shaped, reward_only_positive=True): damage dealt to
        enemies (health + shield) plus reward_death_value per enemy killed, never negative."""
        delta_deaths = delta_enemy = 0.0
        for e_id, e_unit in self.enemies.items():
            if not self.death_tracker_enemy[e_id]:
                prev = self.previous_enemy_units[e_id]
                prev_health = prev.health + prev.shield
                if e_unit.health == 0:
                    self.death_tracker_enemy[e_id] = 1
                    delta_deaths += self.reward_death_value
                    delta_enemy += prev_health
                else:
                    delta_enemy += prev_health - e_unit.health - e_unit.shield
        return max(delta_enemy + delta_deaths, 0)


@dataclass
class TeamDistribution:
    """Stand-in for smacv2's ``WeightedTeamsDistribution`` (has ``rng``; shuffles with ``random``)."""

    config: dict
    rng: np.random.Generator = field(default_factory=np.random.default_rng)

    def generate(self) -> dict:
        c = self.config
        exceptions = set(c.get("exception_unit_types", ()))

        def team(n: int) -> list[str]:
            out: list[str] = []
            while not out or all(m in exceptions for m in out):
                out = [str(x) for x in self.rng.choice(c["unit_types"], size=n, p=c["weights"])]
                random.shuffle(out)
            return out

        allies = team(c["n_units"])
        enemies = allies + (team(c["n_enemies"] - c["n_units"]) if c["n_enemies"] > c["n_units"] else [])
        return {"team_gen": {"ally_team": allies, "enemy_team": enemies[: c["n_enemies"]], "id": 0}}


@dataclass
class PositionDistribution:
    """Stand-in for ``SurroundedAndReflectPositionDistribution``: nested distributions with ``rng``s."""

    config: dict
    rng: np.random.Generator = field(default_factory=np.random.default_rng)

    def __post_init__(self) -> None:
        self.reflect_distribution = ReflectDistribution(self.config)

    def generate(self) -> dict:
        if self.rng.random() <= self.config["p"]:
            return self.reflect_distribution.generate()
        c = self.config
        allies = np.tile([c["map_x"] / 2, c["map_y"] / 2], (c["n_units"], 1))
        enemies = np.tile([c["map_x"] / 2 + 6.0, c["map_y"] / 2 + 6.0], (c["n_enemies"], 1))
        return {
            "ally_start_positions": {"item": allies, "id": 0},
            "enemy_start_positions": {"item": enemies, "id": 0},
        }


@dataclass
class ReflectDistribution:
    config: dict
    rng: np.random.Generator = field(default_factory=np.random.default_rng)

    def generate(self) -> dict:
        c = self.config
        allies = self.rng.uniform((0, 0), (c["map_x"] / 2 - 1, c["map_y"]), size=(c["n_units"], 2))
        enemies = np.zeros((c["n_enemies"], 2))
        k = min(c["n_units"], c["n_enemies"])
        enemies[:k, 0] = c["map_x"] - allies[:k, 0]
        enemies[:k, 1] = allies[:k, 1]
        if c["n_enemies"] > k:
            enemies[k:] = self.rng.uniform(
                (c["map_x"] / 2, 0), (c["map_x"], c["map_y"]), size=(c["n_enemies"] - k, 2)
            )
        return {
            "ally_start_positions": {"item": allies, "id": 0},
            "enemy_start_positions": {"item": enemies, "id": 0},
        }


DISTRIBUTIONS = {"weighted_teams": TeamDistribution, "surrounded_and_reflect": PositionDistribution}


class StarCraftCapabilityEnvWrapper:
    """Stand-in for ``smacv2.env.starcraft2.wrapper.StarCraftCapabilityEnvWrapper``.

    ``forced_config`` (stand-in only) replaces the distributions' draw, so tests can place units.
    """

    def __init__(self, **kwargs: Any) -> None:
        self.distribution_config = kwargs["capability_config"]
        self.env_key_to_distribution_map: dict[str, Any] = {}
        for key, config in self.distribution_config.items():
            if key in ("n_units", "n_enemies"):
                continue
            config["env_key"] = key
            config["n_units"] = self.distribution_config["n_units"]
            config["n_enemies"] = self.distribution_config["n_enemies"]
            self.env_key_to_distribution_map[key] = DISTRIBUTIONS[config["dist_type"]](config)
        self.env = StarCraft2Env(**kwargs)
        self.forced_config: dict | None = None

    def reset(self):
        config: dict = {}
        for dist in self.env_key_to_distribution_map.values():
            config.update(dist.generate())
        if self.forced_config is not None:
            config.update(self.forced_config)
        return self.env.reset(config)

    def __getattr__(self, name: str):
        if name != "env" and hasattr(self.env, name):
            return getattr(self.env, name)
        raise AttributeError(name)

    def get_obs(self):
        return self.env.get_obs()

    def get_state(self):
        return self.env.get_state()

    def get_avail_actions(self):
        return self.env.get_avail_actions()

    def get_avail_agent_actions(self, agent_id: int):
        return self.env.get_avail_agent_actions(agent_id)

    def get_total_actions(self) -> int:
        return self.env.get_total_actions()

    def step(self, actions):
        return self.env.step(actions)

    def close(self) -> None:
        self.env.close()


def placed(
    ally_team: list[str],
    ally_pos: list[tuple[float, float]],
    enemy_team: list[str],
    enemy_pos: list[tuple[float, float]],
) -> dict:
    """An episode config that puts given units at given positions (for ``forced_config``)."""
    return {
        "team_gen": {"ally_team": list(ally_team), "enemy_team": list(enemy_team), "id": 0},
        "ally_start_positions": {"item": np.array(ally_pos, dtype=float), "id": 0},
        "enemy_start_positions": {"item": np.array(enemy_pos, dtype=float), "id": 0},
    }
