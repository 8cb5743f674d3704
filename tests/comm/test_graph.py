"""The link rule and hop-limited flooding."""

import random

from compass.comm import graph
from compass.comm.graph import complete_graph, flood, hop_distances, link_graph

from .conftest import World, make_view


def test_link_uses_the_smaller_sight_range():
    # 7 apart: A (sight 9) sees B, B (sight 6) does not see A -> no link; 5 apart -> link.
    views = [make_view(0, 0, 0, sight=9), make_view(1, 7, 0, sight=6), make_view(2, 12, 0, sight=9)]
    assert link_graph(views) == {0: (), 1: (2,), 2: (1,)}


def test_link_at_exactly_sight_range_and_symmetric():
    views = [make_view(0, 0, 0), make_view(1, 9, 0), make_view(2, 9, 9)]
    adj = link_graph(views)
    assert adj == {0: (1,), 1: (0, 2), 2: (1,)}


def test_dead_agents_are_not_nodes():
    views = [make_view(0, 0, 0), make_view(1, 5, 0, alive=False), make_view(2, 8, 0)]
    assert link_graph(views) == {0: (2,), 2: (0,)}
    assert complete_graph(views) == {0: (2,), 2: (0,)}


def test_hop_distances_on_figure5_chain(fig5: World):
    adj = link_graph(fig5.views())
    assert hop_distances(adj, 3, 3) == {3: 0, 2: 1, 1: 2, 0: 3}
    assert hop_distances(adj, 3, 2) == {3: 0, 2: 1, 1: 2}


def test_flood_counts_duplicates_and_skips_the_sender():
    # Triangle, key seen by 0: round 1 0->1, 0->2; round 2 1->2 and 2->1 (duplicates) = 4 sends.
    adj = {0: (1, 2), 1: (0, 2), 2: (0, 1)}
    res = flood(adj, {("enemy", 7): [(0, 0)]}, max_hops=3)
    assert res.sent == 4 and res.dropped == 0 and res.delivered == 4
    assert res.transmissions == {0: 4}
    assert {a: got[("enemy", 7)] for a, got in res.received.items()} == {
        0: (0, 0, 0),
        1: (1, 0, 0),
        2: (1, 0, 0),
    }


def test_flood_tie_goes_to_lowest_origin():
    # 1 sits between observers 0 and 2, both one hop away.
    adj = {0: (1,), 1: (0, 2), 2: (1,)}
    res = flood(adj, {("enemy", 1): [(0, 0), (2, 1)]}, max_hops=3)
    assert res.received[1][("enemy", 1)] == (1, 0, 0)


def test_flood_with_everything_dropped_delivers_only_origins():
    adj = {0: (1,), 1: (0,)}
    res = flood(adj, {("enemy", 1): [(0, 0)]}, max_hops=3, drop=lambda: True)
    assert res.sent == 1 and res.dropped == 1 and res.received[1] == {}


def _random_flood_case(rng: random.Random) -> tuple[dict, dict, int]:
    """A random graph on up to 6 agents and keys seen by random observers (some twice, some
    observers not in the graph), payload indices in observer order as the protocol numbers them."""
    n = rng.randint(1, 6)
    adj: dict[int, list[int]] = {a: [] for a in range(n)}
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < 0.5:
                adj[a].append(b)
                adj[b].append(a)
    origins, idx = {}, 0
    for k in range(rng.randint(0, 6)):
        sources = []
        for agent in sorted(rng.sample(range(n + 1), rng.randint(1, n + 1))):
            for _ in range(2 if rng.random() < 0.1 else 1):
                sources.append((agent, idx))
                idx += 1
        origins[("enemy", k)] = sources
    return {a: tuple(b) for a, b in adj.items()}, origins, rng.randint(0, 3)


def test_flood_plans_replay_the_same_flood():
    # The protocol's cache of lossless floods: every delivery, count and dict order as computed afresh,
    # on the first call (plans made) and on repeated graphs (plans replayed with other payloads).
    rng = random.Random(0)
    plans: dict = {}
    cases = [_random_flood_case(rng) for _ in range(300)]
    for adj, origins, hops in cases + cases:
        fresh, cached = flood(adj, origins, hops), flood(adj, origins, hops, plans=plans)
        assert cached.received == fresh.received
        assert [list(got.items()) for got in cached.received.values()] == [
            list(got.items()) for got in fresh.received.values()
        ]
        assert list(cached.transmissions.items()) == list(fresh.transmissions.items())
        assert (cached.sent, cached.dropped) == (fresh.sent, fresh.dropped)
    assert plans  # the lossless floods were planned


def test_flood_plans_are_not_used_with_drops():
    adj = {0: (1,), 1: (0,)}
    plans: dict = {}
    res = flood(adj, {("enemy", 1): [(0, 0)]}, max_hops=3, drop=lambda: True, plans=plans)
    assert res.dropped == 1 and plans == {}


def test_flood_plans_stay_bounded_on_one_graph(monkeypatch):
    # A large team on a static graph meets ever new origin sets: the graph's plans are forgotten at
    # the bound, and floods after that are still the fresh ones.
    monkeypatch.setattr(graph, "PLANS_PER_GRAPH", 4)
    n = 12
    adj = {a: tuple(b for b in (a - 1, a + 1) if 0 <= b < n) for a in range(n)}
    plans: dict = {}
    for first in range(n - 1):
        origins = {("enemy", 0): [(first, 0), (first + 1, 1)]}
        fresh, cached = flood(adj, origins, 3), flood(adj, origins, 3, plans=plans)
        assert cached.received == fresh.received
        assert all(len(known) <= 4 for known in plans.values())
