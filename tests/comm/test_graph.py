"""The link rule and hop-limited flooding."""

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
