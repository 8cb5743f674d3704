"""The communication protocol: who hears what each step, at what cost.

The protocol is the policy; :class:`~compass.comm.entity_memory.GlobalEntityMemory` is the data structure it
fills. Each env step the runner calls :meth:`CommProtocol.exchange` once, then per agent
:meth:`CommProtocol.relayed_for` / :meth:`CommProtocol.ally_tasks_for`, and
:meth:`CommProtocol.post_intent` when an agent picks a new sub-task.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from operator import mul

import numpy as np

from compass.comm.accounting import CommStats, Traffic
from compass.comm.entity_memory import GlobalEntityMemory, direct_observations
from compass.comm.graph import Adjacency, Delivery, FloodResult, complete_graph, flood, link_graph
from compass.comm.messages import Intent, entity_report_sizes
from compass.comm.modes import CommMode, parse_mode
from compass.core.types import AgentView, Entity

Received = Mapping[int, Mapping[Hashable, Delivery]]


class LossyLinks:
    """Seeded coin: ``drop()`` is True with probability ``p``, one call per link transmission.

    Uniforms are drawn in blocks because one ``Generator.random()`` call per message costs more
    than the rest of the flood; the sequence is the same for the same seed.
    """

    def __init__(self, rng: np.random.Generator, p: float, block: int = 1024):
        self._rng, self._p, self._block = rng, p, block
        self._buf: list[float] = []
        self._i = 0

    def __call__(self) -> bool:
        if self._i >= len(self._buf):
            self._buf = self._rng.random(self._block).tolist()
            self._i = 0
        u = self._buf[self._i]
        self._i += 1
        return u < self._p


@dataclass
class _Pending:
    """Relayed information sent at ``sent_step``, waiting out the link delay."""

    sent_step: int
    entities_received: Received
    entities: Sequence[Entity]
    intents_received: Received
    intents: Sequence[Intent]


class CommProtocol:
    """Entity reports and intents exchanged under one :class:`~compass.comm.modes.CommMode`.

    Every alive agent broadcasts a report of each entity it sees (and of itself, when
    ``self_reports``) plus its current intent; reports travel over the mode's graph up to its hop
    limit. Intents posted at step ``t`` go out with the exchange of step ``t + 1`` and every step
    after while the sender lives, so all agents planning at one step see the same ally tasks
    whatever order they run in.
    """

    def __init__(
        self,
        mode: str | CommMode = "multihop",
        *,
        max_hops: int = 3,
        ttl_steps: int = 10,
        seed: int = 0,
        self_reports: bool = True,
    ):
        self.mode = mode if isinstance(mode, CommMode) else parse_mode(mode, max_hops)
        self.ttl_steps = ttl_steps
        self.seed = seed
        self.memory = GlobalEntityMemory(self.mode.max_hops, ttl_steps, self_reports)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        """Forget everything and restart the loss generator (new episode)."""
        if seed is not None:
            self.seed = seed
        self.memory.reset()
        self.links: Adjacency = {}
        self._drop = (
            LossyLinks(np.random.default_rng(self.seed), self.mode.loss) if self.mode.loss > 0 else None
        )
        self._intents: dict[int, Intent] = {}  # each agent's own current intent
        self._intent_sizes: dict[int, int] = {}  # its wire size, computed once per post
        self._heard: dict[int, dict[int, tuple[Intent, int]]] = {}  # receiver -> sender -> (intent, sent)
        self._pending: dict[int, list[_Pending]] = {}  # due step -> deliveries
        self._stats = CommStats()
        self._part_sizes: dict[tuple, int] = {}  # entity_report_sizes' cache of entity parts by content
        # flood's lossless courses: (graph, hop limit) -> origin agents -> Plan (see flood's ``plans``)
        self._plans: dict[tuple, dict] = {}

    # -- the per-step exchange -------------------------------------------------------------

    def exchange(self, step: int, views: Sequence[AgentView]) -> None:
        """Run one step of communication over the agents' current views."""
        self.memory.begin_step(step, views)
        alive = set(self.memory.alive)
        self._forget_intents(step, alive)
        traffic = Traffic()
        topology = self.mode.topology
        if topology == "none":
            self.links = {}
        else:
            self.links = link_graph(views) if topology == "sight" else complete_graph(views)
            hops, drop = self.mode.max_hops, self._drop
            obs = direct_observations(views, self.memory.self_reports)
            if len(self._plans) > _PLANS_KEPT:
                self._plans.clear()
            ent = flood(self.links, obs.origins, hops, drop, self._plans)
            intents = [self._intents[a] for a in sorted(self._intents) if a in alive]
            origins = {("intent", it.sender): [(it.sender, i)] for i, it in enumerate(intents)}
            itn = flood(self.links, origins, hops, drop, self._plans)

            if len(self._part_sizes) > _PART_SIZES_KEPT:
                self._part_sizes.clear()
            sizes = entity_report_sizes(
                obs.observers, step, obs.entities, ent.transmissions, parts=self._part_sizes
            )
            traffic = _traffic(ent, sizes.__getitem__, itn, lambda i: self._intent_sizes[intents[i].sender])
            self._dispatch(step, ent.received, obs.entities, itn.received, intents)
        self._release(step)
        self._stats.record(step, traffic)

    def _dispatch(
        self,
        step: int,
        ent_received: Received,
        entities: Sequence[Entity],
        itn_received: Received,
        intents: Sequence[Intent],
    ) -> None:
        """Deliver now, or hold relayed information back for ``delay`` steps."""
        delay = self.mode.delay
        if not delay:
            self.memory.deliver(ent_received, entities, step)
            self._hear(itn_received, intents, step)
            return
        own = {a: {k: d for k, d in got.items() if d[0] == 0} for a, got in ent_received.items()}
        relayed = {a: {k: d for k, d in got.items() if d[0] > 0} for a, got in ent_received.items()}
        self.memory.deliver(own, entities, step)  # an agent's own eyes are never late
        pending = _Pending(step, relayed, entities, itn_received, intents)
        self._pending.setdefault(step + delay, []).append(pending)

    def _release(self, step: int) -> None:
        for due in sorted(d for d in self._pending if d <= step):
            for p in self._pending.pop(due):
                self.memory.deliver(p.entities_received, p.entities, p.sent_step)
                self._hear(p.intents_received, p.intents, p.sent_step)

    def _hear(self, received: Received, intents: Sequence[Intent], sent_step: int) -> None:
        alive = set(self.memory.alive)
        for agent, got in received.items():
            if agent not in alive:
                continue
            box = self._heard.setdefault(agent, {})
            for hops, sender, idx in got.values():
                cur = box.get(sender)
                if hops > 0 and sender in alive and (cur is None or sent_step >= cur[1]):
                    box[sender] = (intents[idx], sent_step)

    def _forget_intents(self, step: int, alive: set[int]) -> None:
        """Drop intents of and to dead agents, and intents not heard again within the ttl."""
        for agent in [a for a in self._intents if a not in alive]:
            del self._intents[agent], self._intent_sizes[agent]
        for agent in sorted(self._heard):
            if agent not in alive:
                del self._heard[agent]
                continue
            box = self._heard[agent]
            for sender in [s for s, (_, t) in box.items() if s not in alive or step - t > self.ttl_steps]:
                del box[sender]

    # -- what agents read and write --------------------------------------------------------

    def relayed_for(self, agent_id: int, view: AgentView) -> tuple[Entity, ...]:
        """Entities ``agent_id`` knows of but does not see (see ``GlobalEntityMemory``)."""
        if self.mode.topology == "none":
            return ()  # agents know only what they see
        return self.memory.relayed_for(agent_id, view)

    def post_intent(self, agent_id: int, step: int, subtask: str, skill: str | None = None) -> None:
        """Set ``agent_id``'s current sub-task; allies in reach hear it from the next exchange."""
        intent = Intent(agent_id, step, subtask, skill)
        self._intents[agent_id] = intent
        self._intent_sizes[agent_id] = intent.nbytes

    def ally_intents_for(self, agent_id: int) -> dict[int, Intent]:
        """Latest intent heard from each ally, by ally id."""
        box = self._heard.get(agent_id, {})
        return {s: box[s][0] for s in sorted(box) if s != agent_id}

    def ally_tasks_for(self, agent_id: int) -> dict[int, str]:
        """Sub-task of each ally ``agent_id`` has heard from (the prompts' "Ally's tasks")."""
        return {s: it.subtask for s, it in self.ally_intents_for(agent_id).items()}

    # -- accounting ------------------------------------------------------------------------

    def stats(self) -> dict[str, object]:
        """Last exchange's ``sent``/``delivered``/``dropped``/``bytes`` and ``total_*`` since reset."""
        return {"mode": str(self.mode), **self._stats.as_dict()}

    @property
    def traffic(self) -> CommStats:
        return self._stats


_PART_SIZES_KEPT = 4096  # distinct entity contents remembered across steps (then forgotten at once)
_PLANS_KEPT = 1024  # graphs whose flood courses are remembered across steps (then forgotten at once)


def _traffic(
    ent: FloodResult, ent_size: Callable[[int], int], itn: FloodResult, itn_size: Callable[[int], int]
) -> Traffic:
    """Count both floods; each payload's size is computed once, however often it was sent."""
    # sum(count * size) over the payloads sent (the keys and values of one dict, in step)
    nbytes = sum(map(mul, ent.transmissions.values(), map(ent_size, ent.transmissions)))
    nbytes += sum(map(mul, itn.transmissions.values(), map(itn_size, itn.transmissions)))
    return Traffic(
        sent=ent.sent + itn.sent,
        delivered=ent.delivered + itn.delivered,
        dropped=ent.dropped + itn.dropped,
        bytes=nbytes,
        entity_messages=ent.sent,
        intent_messages=itn.sent,
    )
