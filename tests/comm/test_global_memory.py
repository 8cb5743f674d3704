"""GlobalEntityMemory: multi-hop propagation, persistence, expiry and relaying."""

import random
from dataclasses import replace

import pytest

from compass.comm.entity_memory import GlobalEntityMemory, Record

from .conftest import World, figure5_world, make_entity, make_view


def keys(entities):
    return [(e.team, e.id) for e in entities]


def test_figure5_enemy_reaches_ego_in_three_hops(fig5: World):
    mem = GlobalEntityMemory(max_hops=3)
    views = fig5.views()
    mem.update(0, views)
    rec = mem.record(0, "enemy", 1)
    assert rec is not None and rec.hops == 3 and rec.source == 3 and rec.age(0) == 0
    (enemy,) = [e for e in mem.relayed_for(0, views[0]) if e.team == "enemy"]
    assert (enemy.id, enemy.hops, enemy.source, enemy.age) == (1, 3, 3, 0)
    assert enemy.visible is False and enemy.can_attack is False
    assert enemy.rel_x == pytest.approx(32 / 9) and enemy.rel_y == 0


def test_figure5_needs_three_hops(fig5: World):
    mem = GlobalEntityMemory(max_hops=2)
    mem.update(0, fig5.views())
    assert mem.record(0, "enemy", 1) is None
    assert mem.record(1, "enemy", 1).hops == 2


def test_relayed_entity_matches_entity_relative_to(fig5: World):
    mem = GlobalEntityMemory()
    views = fig5.views()
    mem.update(0, views)
    own = views[0].own
    for got in mem.relayed_for(0, views[0]):
        ref = mem.record(0, got.team, got.id).entity.relative_to(
            own.x, own.y, own.sight_range, own.attack_range
        )
        assert (got.rel_x, got.rel_y) == (ref.rel_x, ref.rel_y)
        assert got.distance == pytest.approx(ref.distance, rel=1e-12)


def test_disconnected_groups_do_not_share(world: World):
    world.agent(0, 0, 0).agent(1, 5, 0).agent(2, 40, 0).agent(3, 45, 0).enemy(0, 50, 0)
    mem = GlobalEntityMemory()
    mem.update(0, world.views())
    assert mem.record(2, "enemy", 0) is not None and mem.record(3, "enemy", 0) is not None
    assert mem.record(0, "enemy", 0) is None and mem.record(1, "enemy", 0) is None
    assert mem.record(0, "ally", 3) is None


def test_dead_relay_breaks_the_chain(fig5: World):
    fig5.agent(2, 16, 0, alive=False)
    mem = GlobalEntityMemory()
    views = fig5.views()
    mem.update(0, views)
    assert mem.record(0, "enemy", 1) is None and mem.record(1, "enemy", 1) is None
    assert mem.relayed_for(2, views[2]) == ()  # the dead hold nothing


def test_records_persist_age_and_expire_after_ttl(fig5: World):
    mem = GlobalEntityMemory(ttl_steps=3)
    mem.update(0, fig5.views(0))
    fig5.enemies.clear()  # Ally 3 loses sight of it
    for step in (1, 2, 3):
        mem.update(step, fig5.views(step))
        (enemy,) = [e for e in mem.relayed_for(0, fig5.views(step)[0]) if e.team == "enemy"]
        assert enemy.age == step and enemy.hops == 3
    mem.update(4, fig5.views(4))
    assert mem.record(0, "enemy", 1) is None


def test_dead_entity_is_dropped_and_not_resurrected_by_older_news(fig5: World):
    mem = GlobalEntityMemory()
    mem.update(0, fig5.views(0))
    fig5.enemy(1, 32, 0, health=0.0)
    mem.update(1, fig5.views(1))
    assert all(mem.record(a, "enemy", 1) is None for a in range(4))
    stale = Record(make_entity(1, 32, 0), source=3, hops=1, seen_step=0)
    mem.receive(2, stale)
    assert mem.record(2, "enemy", 1) is None


def test_fresher_report_wins_over_nearer_older_one(fig5: World):
    mem = GlobalEntityMemory()
    mem.update(0, fig5.views(0))
    fresh = Record(make_entity(1, 30, 1), source=3, hops=3, seen_step=5)
    old = Record(make_entity(1, 31, 2), source=1, hops=1, seen_step=4)
    mem.receive(0, fresh)
    mem.receive(0, old)
    assert mem.record(0, "enemy", 1) == fresh


def test_moving_enemy_is_updated_and_nearest_observer_is_source(fig5: World):
    mem = GlobalEntityMemory()
    mem.update(0, fig5.views(0))
    fig5.enemy(1, 20, 4)  # now seen by Allies 2 and 3; 2 is nearer to the ego
    mem.update(1, fig5.views(1))
    rec = mem.record(0, "enemy", 1)
    assert (rec.entity.x, rec.entity.y, rec.source, rec.hops, rec.seen_step) == (20, 4, 2, 2, 1)


def test_same_distance_tie_goes_to_lowest_observer(world: World):
    # 0 in the middle, 1 and 2 on either side both see enemy 5 directly.
    world.agent(0, 0, 0).agent(1, -6, 0).agent(2, 6, 0).enemy(5, 0, 6)
    mem = GlobalEntityMemory()
    mem.update(0, world.views(hide={0: [("enemy", 5)]}))
    rec = mem.record(0, "enemy", 5)
    assert (rec.source, rec.hops) == (1, 1)


def test_allies_are_relayed_but_never_self(fig5: World):
    mem = GlobalEntityMemory()
    views = fig5.views()
    mem.update(0, views)
    relayed = mem.relayed_for(0, views[0])
    assert keys(relayed) == [("ally", 2), ("ally", 3), ("enemy", 1)]  # Ally 1 is in sight
    assert {e.id: e.hops for e in relayed if e.team == "ally"} == {2: 1, 3: 2}


def test_self_reports_reach_teammates_that_cannot_see_you(world: World):
    # Ally 1 does not see 0 (hidden), so only 0's own report carries 0's position on to 2.
    world.agent(0, 0, 0).agent(1, 8, 0).agent(2, 16, 0)
    views = world.views(hide={1: [("ally", 0)]})
    with_self, without = GlobalEntityMemory(), GlobalEntityMemory(self_reports=False)
    with_self.update(0, views)
    without.update(0, views)
    assert with_self.record(2, "ally", 0).hops == 2 and with_self.record(2, "ally", 0).source == 0
    assert without.record(2, "ally", 0) is None


def test_dead_ally_record_is_dropped(fig5: World):
    mem = GlobalEntityMemory()
    mem.update(0, fig5.views(0))
    assert mem.record(0, "ally", 3) is not None
    fig5.agent(3, 24, 0, alive=False)
    mem.update(1, fig5.views(1))
    assert mem.record(0, "ally", 3) is None
    assert mem.record(0, "enemy", 1).age(1) == 1  # what Ally 3 told us before dying remains


def test_own_past_sightings_come_back_relative(world: World):
    world.agent(0, 0, 0).enemy(2, 5, 0)
    mem = GlobalEntityMemory()
    mem.update(0, world.views(0))
    world.agent(0, -10, 0)
    mem.update(1, world.views(1))
    (e,) = mem.relayed_for(0, world.views(1)[0])
    assert (e.source, e.hops, e.age) == (0, 0, 1) and e.rel_x == pytest.approx(15 / 9)


def test_order_of_views_does_not_matter():
    base = figure5_world().enemy(2, 8, 8).enemy(3, -8, 0)
    views = base.views()
    shuffled = list(views)
    random.Random(3).shuffle(shuffled)
    a, b = GlobalEntityMemory(), GlobalEntityMemory()
    a.update(0, views)
    b.update(0, shuffled)
    for v in views:
        assert a.relayed_for(v.agent_id, v) == b.relayed_for(v.agent_id, v)
        assert a.known(v.agent_id) == b.known(v.agent_id)


def test_only_visible_entities_count_as_sightings():
    # A view already merged with relayed (visible=False) entities must not re-report them.
    relayed = replace(make_entity(4, 3, 0).relative_to(5, 0, 9, 6), visible=False)
    views = [make_view(0, 0, 0), make_view(1, 5, 0)]
    views[1] = views[1].with_entities((relayed,))
    mem = GlobalEntityMemory()
    mem.update(0, views)
    assert mem.record(0, "enemy", 4) is None


def test_invalid_parameters():
    with pytest.raises(ValueError):
        GlobalEntityMemory(max_hops=-1)
    with pytest.raises(ValueError):
        GlobalEntityMemory(ttl_steps=-1)


def test_death_seen_by_a_teammate_clears_the_relayed_record():
    """A unit reported dead (the adapters' ``extra["deaths_seen"]``) vanishes from every holder."""
    from dataclasses import replace

    from compass.comm.entity_memory import GlobalEntityMemory
    from compass.core.types import AgentView, Entity, OwnUnit

    def view(i, x, entities=(), extra=None):
        own = OwnUnit("stalker", x, 10.0, 1.0, 9.0, 6.0, 0, 32.0, 32.0)
        return AgentView(i, "combat", 0, True, own, tuple(entities), (1,), "", extra=extra or {})

    enemy = Entity(3, "enemy", "zealot", 16.0, 10.0, 0.0, 0.0, 0.0, 1.0)
    mem = GlobalEntityMemory(max_hops=3, ttl_steps=10)
    mem.update(0, [view(0, 2.0), view(1, 9.0, [enemy])])
    assert any(e.id == 3 for e in mem.relayed_for(0, view(0, 2.0)))
    dead = replace(enemy, health=0.0)
    mem.update(1, [view(0, 2.0), view(1, 9.0, extra={"deaths_seen": (dead,)})])
    assert not any(e.id == 3 and e.team == "enemy" for e in mem.relayed_for(0, view(0, 2.0)))
    assert not any(e.id == 3 and e.team == "enemy" for e in mem.relayed_for(1, view(1, 9.0)))
