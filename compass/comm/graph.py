"""The team's communication graph and hop-limited flooding over it.

Alive agents are nodes. Two agents are linked when each can see the other: their distance is at
most the *smaller* of their two sight ranges, which keeps links symmetric when sight ranges
differ. Dead agents are not nodes, so they relay nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from compass.core.types import AgentView

Adjacency = dict[int, tuple[int, ...]]
# (hops from the nearest origin, that origin's agent id, payload index)
Delivery = tuple[int, int, int]


def link_graph(views: Sequence[AgentView]) -> Adjacency:
    """Sight links among alive agents: A–B when ``dist(A, B) <= min(sight_A, sight_B)``.

    Neighbour tuples are sorted by agent id, so iteration over them is deterministic.
    """
    nodes = sorted((v.agent_id, v.own.x, v.own.y, v.own.sight_range) for v in views if v.alive)
    adj: dict[int, list[int]] = {n[0]: [] for n in nodes}
    for i, (a, ax, ay, ar) in enumerate(nodes):
        for b, bx, by, br in nodes[i + 1 :]:
            if math.hypot(bx - ax, by - ay) <= min(ar, br):
                adj[a].append(b)
                adj[b].append(a)
    return {a: tuple(nbrs) for a, nbrs in adj.items()}


def complete_graph(views: Sequence[AgentView]) -> Adjacency:
    """Every alive agent linked to every other (a shared radio channel, distance ignored)."""
    ids = sorted(v.agent_id for v in views if v.alive)
    return {a: tuple(b for b in ids if b != a) for a in ids}


def hop_distances(adjacency: Adjacency, source: int, max_hops: int) -> dict[int, int]:
    """Graph distance from ``source`` to every node within ``max_hops`` (BFS)."""
    if source not in adjacency:
        return {}
    dist = {source: 0}
    frontier = [source]
    for h in range(1, max_hops + 1):
        nxt = []
        for node in frontier:
            for nb in adjacency[node]:
                if nb not in dist:
                    dist[nb] = h
                    nxt.append(nb)
        if not nxt:
            break
        frontier = sorted(nxt)
    return dist


@dataclass
class FloodResult:
    """What a flood delivered and what it cost.

    ``received[agent][key]`` is the best report of ``key`` that reached ``agent``: fewest hops,
    then lowest origin id. Origins receive their own report at 0 hops. ``transmissions[i]`` is the
    number of link transmissions of payload ``i`` (dropped ones included).
    """

    received: dict[int, dict[Hashable, Delivery]]
    transmissions: dict[int, int] = field(default_factory=dict)
    sent: int = 0
    dropped: int = 0

    @property
    def delivered(self) -> int:
        return self.sent - self.dropped


#: A flood's course for one key, in terms of its origins' positions in ``sources``: (deliveries
#: ``(agent, hops, position)``, transmissions ``(position, count)`` in first-sent order, messages sent)
Plan = tuple[tuple[tuple[int, int, int], ...], tuple[tuple[int, int], ...], int]
# Origin sets one graph remembers flood courses for: few in small teams, many for a large team on a
# graph that does not change.
PLANS_PER_GRAPH = 4096


def flood(
    adjacency: Adjacency,
    origins: Mapping[Hashable, Sequence[tuple[int, int]]],
    max_hops: int,
    drop: Callable[[], bool] | None = None,
    plans: dict[tuple, dict[tuple[int, ...], Plan]] | None = None,
) -> FloodResult:
    """Propagate reports hop by hop, at most ``max_hops`` links from where they started.

    ``origins[key]`` lists ``(agent_id, payload_index)`` for every agent that observed ``key``
    itself. Rounds are synchronous: in round ``h`` every agent that first got ``key`` in round
    ``h - 1`` forwards the best report it holds to each neighbour except the one it heard it from.
    ``drop()`` is asked once per link transmission; True loses that message. Without drops every
    agent ends with the report of its nearest origin (ties: lowest origin id) at hops = graph
    distance. Iteration follows the order of ``origins`` and sorted agent ids, so results (and the
    sequence of ``drop`` calls) are deterministic.

    ``plans``: a cache the caller keeps across calls (and bounds by graphs; ``flood`` bounds each
    graph's entry at ``PLANS_PER_GRAPH`` origin sets): ``(graph, max_hops) -> origin agents -> Plan``. Without drops, a key's flood depends only on the graph and which agents are
    its origins (each once), not on the payloads, so it is worked out once and replayed with each
    key's payload indices: the same deliveries, counts and dict orders.
    """
    received: dict[int, dict[Hashable, Delivery]] = {a: {} for a in adjacency}
    result = FloodResult(received)
    tx = result.transmissions
    sent = dropped = 0
    # This graph's plans by origin agents (one lookup of the graph per call, not per key).
    known = (
        plans.setdefault((tuple(adjacency.items()), max_hops), {})
        if plans is not None and drop is None
        else None
    )
    for key, sources in origins.items():
        if known is not None:
            agents = tuple([a for a, _ in sources])
            plan = known.get(agents)
            if plan is None and len(set(agents)) == len(agents):
                if len(known) >= PLANS_PER_GRAPH:
                    known.clear()  # a large team on a static graph: origin sets are unbounded
                plan = known[agents] = _plan(adjacency, agents, max_hops)
            if plan is not None:
                deliveries, sends, n = plan
                for agent, hops, p in deliveries:
                    received[agent][key] = (hops, *sources[p])
                for p, count in sends:
                    idx = sources[p][1]
                    tx[idx] = tx.get(idx, 0) + count
                sent += n
                continue
        best, n, lost = _flood_key(adjacency, sources, max_hops, drop, tx)
        sent, dropped = sent + n, dropped + lost
        for agent, delivery in best.items():
            received[agent][key] = delivery
    result.sent, result.dropped = sent, dropped
    return result


def _plan(adjacency: Adjacency, agents: tuple[int, ...], max_hops: int) -> Plan:
    """The lossless flood from ``agents`` (distinct), with their positions as payload indices."""
    sends: dict[int, int] = {}
    best, sent, _ = _flood_key(adjacency, [(a, p) for p, a in enumerate(agents)], max_hops, None, sends)
    return tuple((agent, hops, p) for agent, (hops, _, p) in best.items()), tuple(sends.items()), sent


def _flood_key(
    adjacency: Adjacency,
    sources: Sequence[tuple[int, int]],
    max_hops: int,
    drop: Callable[[], bool] | None,
    tx: dict[int, int],
) -> tuple[dict[int, Delivery], int, int]:
    """One key's flood (see :func:`flood`): the delivery each reached agent holds, messages sent
    and dropped; each transmission is counted into ``tx`` by payload index."""
    sent = dropped = 0
    best: dict[int, Delivery] = {}
    for agent, idx in sources:
        if agent in adjacency and (agent not in best or (0, agent, idx) < best[agent]):
            best[agent] = (0, agent, idx)
    parent: dict[int, int] = {}
    frontier = sorted(best)
    for h in range(1, max_hops + 1):
        nxt: dict[int, Delivery] = {}
        for node in frontier:
            _, origin, idx = best[node]
            back = parent.get(node)
            cand = (h, origin, idx)
            for nb in adjacency[node]:
                if nb == back:
                    continue
                sent += 1
                tx[idx] = tx.get(idx, 0) + 1
                if drop is not None and drop():
                    dropped += 1
                    continue
                if nb in best:  # a duplicate: it already holds an equal or nearer report
                    continue
                cur = nxt.get(nb)
                if cur is None or cand < cur:
                    nxt[nb] = cand
                    parent[nb] = node
        if not nxt:
            break
        best.update(nxt)
        frontier = sorted(nxt)
    return best, sent, dropped
