"""Global entity memory: what each agent knows about every unit, from its own eyes and its allies'.

The paper's "global entity memory" (Appendix B): agents are nodes linked when within sight
range; an observation propagates through adjacent nodes up to ``max_hops``. Knowledge is kept
per agent, so an agent outside the chain knows nothing of what the chain saw.

This module is the data structure; :mod:`compass.comm` decides who hears what (modes, losses,
delays) and feeds :meth:`GlobalEntityMemory.deliver`. :meth:`GlobalEntityMemory.update` is the
lossless multi-hop exchange of the paper, for use without a protocol.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

from compass.comm.graph import Adjacency, Delivery, flood, link_graph
from compass.core.types import AgentView, Entity, OwnUnit, new_entity

EntityKey = tuple[str, int]  # (team, id): ids are global per team, so reports agree across agents


class Record(NamedTuple):
    """One agent's belief about one entity: the report it kept and where that came from.

    A named tuple, not a frozen dataclass: one is built per agent and entity every step, and the
    dataclass's ``__init__`` cost several times as much.
    """

    entity: Entity  # as the source saw it; absolute x/y are valid at ``seen_step``
    source: int  # agent that saw it directly
    hops: int  # links between source and the holder (0: the holder saw it)
    seen_step: int

    def age(self, step: int) -> int:
        """Steps since the entity was seen."""
        return step - self.seen_step

    def rank(self) -> tuple[int, int, int]:
        """Lower is better: freshest, then nearest source, then lowest source id."""
        return (-self.seen_step, self.hops, self.source)


# Record(...) without the generated __new__'s extra call (~2.5x cheaper; one per agent and entity a step).
_new_record = tuple.__new__


def entity_key(entity: Entity) -> EntityKey:
    return (entity.team, entity.id)


def self_entity(agent_id: int, own: OwnUnit, shield: float = 0.0) -> Entity:
    """The agent's own unit as an ally entity, so allies learn where it is (self-report)."""
    return new_entity(
        agent_id,
        "ally",
        own.unit_type,
        own.x,
        own.y,
        0.0,
        0.0,
        0.0,
        own.health,
        shield,
        False,
        own.last_action,
    )


@dataclass
class Observations:
    """This step's direct sightings, shaped for :func:`compass.comm.graph.flood`.

    ``origins[key]`` lists ``(observer, index)`` in observer order; ``entities[index]`` is what
    that observer saw and ``observers[index]`` who saw it.
    """

    origins: dict[Hashable, list[tuple[int, int]]]
    entities: list[Entity]
    observers: list[int]


def direct_observations(views: Sequence[AgentView], self_reports: bool = True) -> Observations:
    """Collect what every alive agent sees itself (``visible=True`` entities, plus itself)."""
    origins: dict[Hashable, list[tuple[int, int]]] = {}
    entities: list[Entity] = []
    observers: list[int] = []
    for view in sorted(views, key=_agent_id):
        if not view.alive:
            continue
        agent = view.agent_id
        seen = [e for e in view.entities if e.visible]
        seen += view.extra.get("deaths_seen", ())  # health-0 reports: receivers drop those units
        if self_reports:
            # A family whose typed observation has a shield (combat) reports it too.
            seen.append(self_entity(agent, view.own, getattr(view.obs, "shield", 0.0)))
        for e in seen:
            key = (e.team, e.id)
            sources = origins.get(key)
            if sources is None:
                origins[key] = [(agent, len(entities))]
            else:
                sources.append((agent, len(entities)))
            entities.append(e)
        observers += [agent] * len(seen)
    return Observations({k: origins[k] for k in sorted(origins)}, entities, observers)


_agent_id = attrgetter("agent_id")


def relay_entity(record: Record, own: OwnUnit, step: int) -> Entity:
    """``record`` as the holder at ``own`` should see it: relative coordinates, not visible.

    Same arithmetic as :meth:`Entity.relative_to`, in one constructor call: ``relative_to``
    plus a ``replace`` cost ~11 µs per entity (scalar ``np.hypot`` and two dataclass copies),
    this ~1 µs (:func:`~compass.core.types.new_entity`), and it runs for every relayed entity of
    every agent every step.
    """
    e = record.entity
    dx = (e.x - own.x) / own.sight_range
    dy = (e.y - own.y) / own.sight_range
    # can_attack False: never target what you cannot see (attack needs the unit in view).
    return new_entity(
        e.id,
        e.team,
        e.unit_type,
        e.x,
        e.y,
        dx,
        dy,
        math.hypot(dx, dy),
        e.health,
        e.shield,
        False,
        e.last_action,
        False,
        record.source,
        record.hops,
        step - record.seen_step,
    )


class GlobalEntityMemory:
    """Per-agent entity knowledge, filled by multi-hop propagation.

    Rules: a fresher report replaces an older one (same step: fewer hops, then lower source id);
    records expire when older than ``ttl_steps``; a report with ``health <= 0`` removes the
    entity and blocks reports seen no later than it; records of dead allies are dropped; dead
    agents hold and relay nothing.
    """

    def __init__(self, max_hops: int = 3, ttl_steps: int = 10, self_reports: bool = True):
        if max_hops < 0:
            raise ValueError(f"max_hops must be >= 0, got {max_hops}")
        if ttl_steps < 0:
            raise ValueError(f"ttl_steps must be >= 0, got {ttl_steps}")
        self.max_hops = max_hops
        self.ttl_steps = ttl_steps
        self.self_reports = self_reports
        self.reset()

    def reset(self) -> None:
        """Forget everything (new episode)."""
        self.step = -1
        self.alive: tuple[int, ...] = ()
        self.links: Adjacency = {}
        self._known: dict[int, dict[EntityKey, Record]] = {}
        self._dead: dict[int, dict[EntityKey, int]] = {}  # holder -> key -> step it was seen dead

    def update(self, step: int, views: Sequence[AgentView]) -> None:
        """One lossless multi-hop exchange over the sight graph (the paper's mechanism)."""
        self.begin_step(step, views)
        self.links = link_graph(views)
        obs = direct_observations(views, self.self_reports)
        result = flood(self.links, obs.origins, self.max_hops)
        self.deliver(result.received, obs.entities, step)

    def begin_step(self, step: int, views: Sequence[AgentView]) -> None:
        """Advance the clock: forget dead agents' knowledge, dead allies and expired records."""
        self.step = step
        alive = sorted(v.agent_id for v in views if v.alive)
        dead = {v.agent_id for v in views if not v.alive}
        self.alive = tuple(alive)
        for agent in dead:
            self._known.pop(agent, None)
            self._dead.pop(agent, None)
        for agent in alive:
            store = self._known.get(agent)
            if not store:
                continue
            stale = [
                k
                for k, r in store.items()
                if step - r.seen_step > self.ttl_steps or (k[0] == "ally" and k[1] in dead)
            ]
            for k in stale:
                del store[k]

    def deliver(
        self,
        received: Mapping[int, Mapping[Hashable, Delivery]],
        entities: Sequence[Entity],
        seen_step: int,
    ) -> None:
        """Merge flood deliveries (``agent -> key -> (hops, source, entity index)``)."""
        alive = set(self.alive)
        for agent, entries in received.items():
            if agent not in alive:
                continue
            store = self._known.setdefault(agent, {})
            dead = self._dead.get(agent)
            for key, (hops, source, idx) in entries.items():
                entity = entities[idx]
                if entity.health <= 0 or (dead and key in dead):
                    self.receive(agent, Record(entity, source, hops, seen_step), key)
                    continue
                # Inlined receive(): this loop runs for every agent x entity every step.
                cur = store.get(key)
                if (
                    cur is None
                    or cur.seen_step < seen_step
                    or (cur.seen_step == seen_step and (hops, source) < (cur.hops, cur.source))
                ):
                    store[key] = _new_record(Record, (entity, source, hops, seen_step))
            store.pop(("ally", agent), None)  # allies' sightings of the holder itself tell it nothing

    def receive(self, agent_id: int, record: Record, key: EntityKey | None = None) -> None:
        """Merge one report into ``agent_id``'s knowledge."""
        key = key if key is not None else entity_key(record.entity)
        store = self._known.setdefault(agent_id, {})
        dead = self._dead.setdefault(agent_id, {})
        if record.entity.health <= 0:
            if record.seen_step > dead.get(key, -1):
                dead[key] = record.seen_step
            cur = store.get(key)
            if cur is not None and cur.seen_step <= record.seen_step:
                del store[key]
            return
        died = dead.get(key)
        if died is not None and record.seen_step <= died:
            return  # an older sighting of a unit we already know is dead
        cur = store.get(key)
        if cur is None or record.rank() < cur.rank():
            store[key] = record

    def known(self, agent_id: int) -> dict[EntityKey, Record]:
        """Everything ``agent_id`` knows, own sightings included, sorted by key (a copy)."""
        store = self._known.get(agent_id, {})
        return {k: store[k] for k in sorted(store)}

    def record(self, agent_id: int, team: str, entity_id: int) -> Record | None:
        """``agent_id``'s record of one entity, if any."""
        return self._known.get(agent_id, {}).get((team, entity_id))

    def relayed_for(self, agent_id: int, view: AgentView) -> tuple[Entity, ...]:
        """Entities ``agent_id`` knows but does not see now, relative to its unit, sorted by key.

        Never includes the agent itself. Each has ``visible=False``, ``can_attack=False`` and
        ``source``/``hops``/``age`` set; sightings the agent itself made earlier come back with
        ``source=agent_id`` and ``hops=0``.
        """
        store = self._known.get(agent_id)
        if not store or not view.alive:
            return ()
        seen = {(e.team, e.id) for e in view.entities if e.visible}
        seen.add(("ally", agent_id))
        return tuple(relay_entity(store[k], view.own, self.step) for k in sorted(store) if k not in seen)
