"""CommProtocol: modes, losses, delays, intents and accounting."""

import pytest

from compass.comm import CommModeError, CommProtocol, EntityReport, Intent, parse_mode
from compass.comm.entity_memory import GlobalEntityMemory

from .conftest import World, make_entity, make_view


def enemy_hops(proto: CommProtocol, views, agent_id: int, enemy_id: int = 1):
    for e in proto.relayed_for(agent_id, views[agent_id]):
        if e.team == "enemy" and e.id == enemy_id:
            return e.hops
    return None


def chain_views(step: int = 0):
    """0 - 1 - 2 in a line (sight 9, 8 apart), only 2 sees enemy 1; no ally sightings."""
    return [
        make_view(0, 0, 0, step=step),
        make_view(1, 8, 0, step=step),
        make_view(2, 16, 0, step=step, sees=[make_entity(1, 24, 0)]),
    ]


def spread_world() -> World:
    """Ego 0 far from a pair (1, 2); enemy 1 near 2 only."""
    return World().agent(0, 0, 0).agent(1, 30, 0).agent(2, 38, 0).enemy(1, 46, 0)


def test_multihop_is_the_default_and_matches_figure5(fig5: World):
    proto = CommProtocol()
    views = fig5.views()
    proto.exchange(0, views)
    assert str(proto.mode) == "multihop:3"
    assert enemy_hops(proto, views, 0) == 3
    short = CommProtocol("multihop:2")
    short.exchange(0, views)
    assert enemy_hops(short, views, 0) is None and enemy_hops(short, views, 1) == 2


def test_onehop_reaches_neighbours_only(fig5: World):
    proto = CommProtocol("onehop")
    views = fig5.views()
    proto.exchange(0, views)
    assert enemy_hops(proto, views, 2) == 1
    assert enemy_hops(proto, views, 1) is None and enemy_hops(proto, views, 0) is None


def test_full_ignores_distance():
    proto = CommProtocol("full")
    views = spread_world().views()
    proto.exchange(0, views)
    assert enemy_hops(proto, views, 0) == 1
    allies = {e.id: e.hops for e in proto.relayed_for(0, views[0]) if e.team == "ally"}
    assert allies == {1: 1, 2: 1}
    assert proto.links == {0: (1, 2), 1: (0, 2), 2: (0, 1)}


def test_multihop_does_not_bridge_the_gap():
    proto = CommProtocol()
    views = spread_world().views()
    proto.exchange(0, views)
    assert proto.relayed_for(0, views[0]) == ()
    assert enemy_hops(proto, views, 1) == 1


def test_none_shares_nothing(fig5: World):
    proto = CommProtocol("none")
    views = fig5.views()
    proto.post_intent(3, 0, "focus fire")
    for step in range(3):
        proto.exchange(step, fig5.views(step))
    assert all(proto.relayed_for(v.agent_id, v) == () for v in views)
    assert all(proto.ally_tasks_for(a) == {} for a in range(4))
    assert proto.stats()["total_sent"] == 0


def test_accounting_counts_on_a_chain():
    proto = CommProtocol(self_reports=False)
    proto.exchange(0, chain_views())
    size = EntityReport.from_entity(2, 0, make_entity(1, 24, 0)).nbytes
    st = proto.stats()
    # 2 -> 1, then 1 -> 0 (not back to 2); 0 has nobody else to forward to.
    assert (st["sent"], st["delivered"], st["dropped"], st["bytes"]) == (2, 2, 0, 2 * size)
    assert st["entity_messages"] == 2 and st["intent_messages"] == 0

    proto.post_intent(0, 0, "hold the line", "kite")
    proto.exchange(1, chain_views(1))
    st = proto.stats()
    isize = Intent(0, 0, "hold the line", "kite").nbytes
    assert (st["intent_messages"], st["sent"]) == (2, 4)
    assert st["bytes"] == 2 * EntityReport.from_entity(2, 1, make_entity(1, 24, 0)).nbytes + 2 * isize
    assert (st["total_sent"], st["total_delivered"], st["total_dropped"]) == (6, 6, 0)
    assert st["step"] == 1 and st["mode"] == "multihop:3"


def test_accounting_full_and_size_is_compact_json():
    proto = CommProtocol("full", self_reports=False)
    proto.exchange(0, chain_views())
    report = EntityReport.from_entity(2, 0, make_entity(1, 24, 0))
    assert proto.stats()["sent"] == 2 and proto.stats()["bytes"] == 2 * len(report.to_json())
    assert " " not in report.to_json()


def test_intents_reach_only_reachable_agents(fig5: World):
    fig5.agent(4, 60, 0)  # far away from everyone
    proto = CommProtocol("multihop:2")
    proto.post_intent(0, 0, "scout north", "move_north")
    proto.post_intent(4, 0, "wait")
    proto.exchange(1, fig5.views(1))
    assert proto.ally_tasks_for(1) == {0: "scout north"}
    assert proto.ally_tasks_for(2) == {0: "scout north"}
    assert proto.ally_tasks_for(3) == {}  # 3 hops away under max_hops=2
    assert proto.ally_tasks_for(0) == {}  # never your own task
    assert proto.ally_tasks_for(4) == {}
    assert proto.ally_intents_for(1)[0].skill == "move_north"


def test_intents_update_and_die_with_their_sender(fig5: World):
    proto = CommProtocol()
    proto.post_intent(1, 0, "advance")
    proto.exchange(1, fig5.views(1))
    proto.post_intent(1, 1, "retreat")
    proto.exchange(2, fig5.views(2))
    assert proto.ally_tasks_for(0) == {1: "retreat"}
    fig5.agent(1, 8, 0, alive=False)
    proto.exchange(3, fig5.views(3))
    assert proto.ally_tasks_for(0) == {}


def test_intents_expire_when_out_of_reach(fig5: World):
    proto = CommProtocol(ttl_steps=2)
    proto.post_intent(3, 0, "flank")
    proto.exchange(1, fig5.views(1))
    assert proto.ally_tasks_for(0) == {3: "flank"}
    fig5.agent(3, 90, 0)
    for step in (2, 3):
        proto.exchange(step, fig5.views(step))
        assert proto.ally_tasks_for(0) == {3: "flank"}
    proto.exchange(4, fig5.views(4))
    assert proto.ally_tasks_for(0) == {}


def dense_world() -> World:
    w = World()
    for i in range(6):
        w.agent(i, 2.0 * i, 0.0)
    for j in range(4):
        w.enemy(j, 3.0 * j, 5.0)
    return w


def run_lossy(mode: str, seed: int, steps: int = 200):
    proto = CommProtocol(mode, seed=seed)
    views = dense_world().views()
    trace = []
    for step in range(steps):
        proto.exchange(step, views)
        trace.append(proto.stats()["dropped"])
    return proto, trace


def test_lossy_drop_fraction_is_close_to_p():
    proto, _ = run_lossy("lossy:0.3", seed=1)
    st = proto.stats()
    assert st["total_sent"] > 5000
    assert st["total_dropped"] / st["total_sent"] == pytest.approx(0.3, abs=0.02)
    assert st["drop_rate"] == st["total_dropped"] / st["total_sent"]
    assert st["total_delivered"] + st["total_dropped"] == st["total_sent"]


def test_lossy_is_reproducible_with_seed():
    a, trace_a = run_lossy("lossy:0.3", seed=7, steps=30)
    b, trace_b = run_lossy("lossy:0.3", seed=7, steps=30)
    _, trace_c = run_lossy("lossy:0.3", seed=8, steps=30)
    assert trace_a == trace_b and a.stats() == b.stats()
    assert trace_a != trace_c
    views = dense_world().views()
    assert all(a.relayed_for(v.agent_id, v) == b.relayed_for(v.agent_id, v) for v in views)
    a.reset()
    a.exchange(0, views)
    b.reset()
    b.exchange(0, views)
    assert a.stats() == b.stats()


def test_lossy_total_loss_keeps_only_own_sight(fig5: World):
    proto = CommProtocol("lossy:1")
    views = fig5.views()
    proto.exchange(0, views)
    st = proto.stats()
    assert st["sent"] == st["dropped"] > 0
    assert all(proto.relayed_for(v.agent_id, v) == () for v in views)


def test_lossy_delay_holds_relayed_information(fig5: World):
    proto = CommProtocol("lossy:0:2")
    proto.exchange(0, fig5.views(0))
    fig5.enemies.clear()
    for step in (1, 2):
        views = fig5.views(step)
        assert enemy_hops(proto, views, 0) is None
        proto.exchange(step, views)
    (enemy,) = [e for e in proto.relayed_for(0, views[0]) if e.team == "enemy"]
    assert (enemy.hops, enemy.age) == (3, 2)


def test_delay_does_not_hold_back_own_sightings(world: World):
    world.agent(0, 0, 0).enemy(3, 4, 0)
    proto = CommProtocol("lossy:0:3")
    proto.exchange(0, world.views(0))
    world.agent(0, -20, 0)
    proto.exchange(1, world.views(1))
    (e,) = proto.relayed_for(0, world.views(1)[0])
    assert (e.id, e.source, e.age) == (3, 0, 1)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("multihop", ("multihop", 3, 0.0, 0)),
        ("MultiHop:5", ("multihop", 5, 0.0, 0)),
        ("onehop", ("onehop", 1, 0.0, 0)),
        ("full", ("full", 1, 0.0, 0)),
        ("none", ("none", 0, 0.0, 0)),
        ("lossy:0.3", ("lossy", 3, 0.3, 0)),
        ("lossy:0.3:2", ("lossy", 3, 0.3, 2)),
    ],
)
def test_parse_mode(spec, expected):
    m = parse_mode(spec)
    assert (m.name, m.max_hops, m.loss, m.delay) == expected
    assert parse_mode(str(m)) == m


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("multihp", "Did you mean 'multihop'"),
        ("ful", "Did you mean 'full'"),
        ("lossy", "drop probability"),
        ("lossy:abc", "P must be a number"),
        ("lossy:1.5", "P must be in [0, 1]"),
        ("lossy:0.3:x", "DELAY must be an integer"),
        ("lossy:0.3:-1", "DELAY must be >= 0"),
        ("onehop:2", "takes no parameters"),
        ("multihop:0", "K must be >= 1"),
        ("broadcast", "unknown mode"),
    ],
)
def test_mode_typos_give_a_clear_error(spec, needle):
    with pytest.raises(CommModeError) as err:
        CommProtocol(spec)
    msg = str(err.value)
    assert needle in msg
    assert "Valid modes: multihop, multihop:K, onehop, full, none, lossy:P, lossy:P:DELAY" in msg


def test_lossless_multihop_protocol_equals_the_bare_memory():
    w = dense_world().agent(9, 40, 0).agent(10, 47, 3).enemy(9, 52, 0)
    proto, mem = CommProtocol(), GlobalEntityMemory()
    for step in range(3):
        views = w.views(step)
        proto.exchange(step, views)
        mem.update(step, views)
        w.enemy(9, 52 - 4 * step, 2 * step)
    for v in views:
        assert proto.relayed_for(v.agent_id, v) == mem.relayed_for(v.agent_id, v)
