"""Builders for hand-made geometries: agents and enemies at absolute positions, views by sight."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pytest

from compass.core.types import AgentView, Entity, OwnUnit

SIGHT, SHOOT = 9.0, 6.0


def make_entity(
    entity_id: int,
    x: float,
    y: float,
    *,
    team: str = "enemy",
    unit_type: str = "zergling",
    health: float = 1.0,
) -> Entity:
    """An entity at absolute (x, y); relative fields are filled when an observer sees it."""
    return Entity(
        id=entity_id,
        team=team,
        unit_type=unit_type,
        x=x,
        y=y,
        rel_x=0.0,
        rel_y=0.0,
        distance=0.0,
        health=health,
    )


def make_view(
    agent_id: int,
    x: float,
    y: float,
    *,
    sees: Iterable[Entity] = (),
    alive: bool = True,
    sight: float = SIGHT,
    shoot: float = SHOOT,
    step: int = 0,
    unit_type: str = "marine",
    health: float = 1.0,
) -> AgentView:
    """One agent's view: its unit at (x, y) and ``sees`` as visible entities relative to it."""
    own = OwnUnit(
        unit_type=unit_type,
        x=x,
        y=y,
        health=health if alive else 0.0,
        sight_range=sight,
        attack_range=shoot,
        last_action=0,
        map_width=64.0,
        map_height=64.0,
    )
    entities = tuple(e.relative_to(x, y, sight, shoot) for e in sees) if alive else ()
    return AgentView(
        agent_id=agent_id,
        family="combat",
        step=step,
        alive=alive,
        own=own,
        entities=entities,
        avail_actions=(),
        text="",
    )


@dataclass
class _Unit:
    x: float
    y: float
    sight: float = SIGHT
    health: float = 1.0
    unit_type: str = "marine"


@dataclass
class World:
    """Agents (allies) and enemies on a plane; each alive agent sees what is within its sight."""

    agents: dict[int, _Unit] = field(default_factory=dict)
    enemies: dict[int, _Unit] = field(default_factory=dict)

    def agent(self, agent_id: int, x: float, y: float, *, sight: float = SIGHT, alive: bool = True) -> World:
        self.agents[agent_id] = _Unit(x, y, sight, 1.0 if alive else 0.0)
        return self

    def enemy(
        self, enemy_id: int, x: float, y: float, *, health: float = 1.0, unit_type: str = "zergling"
    ) -> World:
        self.enemies[enemy_id] = _Unit(x, y, health=health, unit_type=unit_type)
        return self

    def views(
        self, step: int = 0, hide: Mapping[int, Iterable[tuple[str, int]]] | None = None
    ) -> list[AgentView]:
        """Views in agent-id order; ``hide[agent]`` removes (team, id) keys from that agent's sight.

        Dead enemies (health 0) stay visible so their death can be reported.
        """
        hide = hide or {}
        views = []
        for aid, a in sorted(self.agents.items()):
            seen = []
            for eid, e in sorted(self.enemies.items()):
                if math.hypot(e.x - a.x, e.y - a.y) <= a.sight:
                    seen.append(make_entity(eid, e.x, e.y, unit_type=e.unit_type, health=e.health))
            for bid, b in sorted(self.agents.items()):
                if bid != aid and b.health > 0 and math.hypot(b.x - a.x, b.y - a.y) <= a.sight:
                    seen.append(make_entity(bid, b.x, b.y, team="ally", unit_type=b.unit_type))
            hidden = set(hide.get(aid, ()))
            seen = [e for e in seen if (e.team, e.id) not in hidden]
            views.append(make_view(aid, a.x, a.y, sees=seen, alive=a.health > 0, sight=a.sight, step=step))
        return views


def figure5_world() -> World:
    """Figure 5: Ego (0) and Allies 1-3 in a line 8 apart (sight 9); Enemy 1 seen only by Ally 3."""
    w = World()
    for i in range(4):
        w.agent(i, 8.0 * i, 0.0)
    return w.enemy(1, 32.0, 0.0)


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def fig5() -> World:
    return figure5_world()
