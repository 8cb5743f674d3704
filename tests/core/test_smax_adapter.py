"""SMAX adapter: text agrees with entities, SMACv2 action mapping, EPO, outcomes, rendering."""

from __future__ import annotations

import numpy as np
import pytest

from compass.games.combat.scenarios import SCENARIOS, get_scenario
from compass.games.combat.smax import SmaxEnv
from compass.games.combat.text import ATTACK_OFFSET, STOP, obs_data_from_view, parse_combat_text


def _same(a, b):
    assert a.own_unit_type == b.own_unit_type and a.available_actions == b.available_actions
    assert a.own_position == b.own_position and a.own_health == b.own_health and a.can_move == b.can_move
    for xs, ys in ((a.enemies, b.enemies), (a.allies, b.allies)):
        assert [(u.id, u.unit_type, u.position, u.distance, u.health, u.last_action) for u in xs] == [
            (u.id, u.unit_type, u.position, u.distance, u.health, u.last_action) for u in ys
        ]
    assert [e.can_attack for e in a.enemies] == [e.can_attack for e in b.enemies]


def test_text_names_exactly_the_entities_skills_see(smax_protoss):
    views = smax_protoss.reset(3)
    rng = np.random.default_rng(0)
    checked_enemy = False
    for _ in range(40):
        for v in views:
            parsed, direct = parse_combat_text(v.text), obs_data_from_view(v)
            _same(parsed, direct)
            for e in v.enemies:
                assert f"Enemy #{e.id}: {e.unit_type}" in v.text
                checked_enemy = True
        res = smax_protoss.step([int(rng.choice(v.avail_actions)) for v in views])
        views = res.views
        if res.done:
            break
    assert checked_enemy


def test_action_mapping_moves_units_in_the_named_direction(smax_protoss):
    views = smax_protoss.reset(0)
    i = next(v.agent_id for v in views if {2, 3, 4, 5} <= set(v.avail_actions))
    before = smax_protoss.snap.pos[i].copy()
    for action, axis, sign in ((2, 1, 1), (3, 1, -1), (4, 0, 1), (5, 0, -1)):
        smax_protoss.reset(0)
        before = smax_protoss.snap.pos[i].copy()
        acts = [1] * smax_protoss.n_agents
        acts[i] = action
        smax_protoss.step(acts)
        delta = smax_protoss.snap.pos[i] - before
        assert np.sign(delta[axis]) == sign and abs(delta[axis]) > abs(delta[1 - axis]), action


def test_attack_index_maps_to_smax_attack(smax_protoss):
    assert smax_protoss._to_smax(0, 2) == 0 and smax_protoss._to_smax(0, 4) == 1
    assert smax_protoss._to_smax(0, 3) == 2 and smax_protoss._to_smax(0, 5) == 3
    assert smax_protoss._to_smax(0, 1) == 4 and smax_protoss._to_smax(0, 0) == 4
    with pytest.raises(ValueError, match="enemy #9"):
        smax_protoss._to_smax(0, ATTACK_OFFSET + 9)


def test_alive_units_can_stop_and_moves_into_the_edge_are_unavailable(smax_protoss):
    checked = 0
    for seed in range(4):
        for v in smax_protoss.reset(seed):
            assert 0 not in v.avail_actions and 1 in v.avail_actions
            reach = smax_protoss._c.step_len[smax_protoss.snap.types[v.agent_id]]
            for action, (dx, dy), name in (
                (2, (0, 1), "North"),
                (3, (0, -1), "South"),
                (4, (1, 0), "East"),
                (5, (-1, 0), "West"),
            ):
                nx, ny = v.own.x + dx * reach, v.own.y + dy * reach
                inside = 0.5 <= nx <= v.own.map_width - 0.5 and 0.5 <= ny <= v.own.map_height - 0.5
                assert (action in v.avail_actions) == inside
                assert f"Can move {name}: {'yes' if inside else 'no'}" in v.text
                checked += not inside
    assert checked, "SMACv2 start positions put some units next to an edge"


def test_race_scenarios_sample_race_units_and_mirror_enemies():
    rng = np.random.default_rng(0)
    for name in ("protoss_5_vs_5", "terran_5_vs_6", "zerg_5_vs_5"):
        sc = get_scenario(name)
        allies, enemies = sc.sample_unit_types(rng)
        assert len(allies) == 5 and len(enemies) == sc.n_enemies
        assert enemies[:5] == allies
    with pytest.raises(ValueError, match="protoss_5_vs_5"):
        get_scenario("protos_5_vs_5")
    assert "zerg_5_vs_6" in SCENARIOS


def test_epo_only_the_spotter_keeps_seeing_an_enemy():
    env = SmaxEnv("protoss_5_vs_5", epo=True)
    views = env.reset(2)
    rng = np.random.default_rng(1)
    seen_by: dict[int, set[int]] = {}
    for _ in range(60):
        for v in views:
            for e in v.enemies:
                seen_by.setdefault(e.id, set()).add(v.agent_id)
        res = env.step([int(rng.choice(v.avail_actions)) for v in views])
        views = res.views
        if res.done:
            break
    assert seen_by, "someone should spot an enemy within 60 steps"
    assert all(len(agents) == 1 for agents in seen_by.values()), seen_by
    # Without an action mask, attacks on every live enemy are available (SMACv2 EPO config).
    alive = [v for v in views if v.alive]
    if alive and not res.done:
        assert any(a >= ATTACK_OFFSET for a in alive[0].avail_actions)


def test_episode_ends_with_outcome_and_same_seed_same_episode(smax_protoss):
    def play(seed):
        views = smax_protoss.reset(seed)
        trail = []
        for _ in range(300):
            acts = [
                min(a for a in v.avail_actions if a != 1) if len(v.avail_actions) > 1 else v.avail_actions[0]
                for v in views
            ]
            res = smax_protoss.step(acts)
            trail.append(round(float(res.rewards[0]), 6))
            views = res.views
            if res.done:
                return res.outcome, trail
        return "none", trail

    a, b = play(5), play(5)
    assert a == b
    assert a[0] in ("win", "loss", "timeout")


def test_renderers_show_units(smax_protoss):
    # Their speed is timed by benchmarks/bench_combat.py (overhead part), not asserted here.
    views = smax_protoss.reset(0)
    g = smax_protoss.render_global()
    f = views[0].frame()
    assert g.shape[2] == 3 and f.shape == (256, 256, 3)
    assert (g == np.array([60, 130, 255])).all(axis=2).any()  # ally colour drawn


def test_deaths_in_sight_are_reported_for_the_entity_memory(smax_protoss):
    from compass.sandbox import SkillExecutor

    views = smax_protoss.reset(0)
    ex = SkillExecutor("compass.games.combat.skill_api")
    from compass.skills.library import SkillLibrary

    skill = SkillLibrary(None, "combat").compiled["race_adaptive_combat"]
    reported = []
    for _ in range(200):
        res = smax_protoss.step([ex.run(skill, v).action for v in views])
        views = res.views
        for v in views:
            reported += [(v.agent_id, e) for e in v.extra.get("deaths_seen", ())]
        if res.done:
            break
    assert reported, "a fight to the end kills units in someone's sight"
    for _, e in reported:
        u = e.id + smax_protoss.n_agents if e.team == "enemy" else e.id
        assert e.health == 0.0 and not smax_protoss.snap.alive[u]


def test_out_of_range_attack_under_epo_does_not_walk():
    """As smacv2 (no command for an out-of-range target), the SMAX adapter does not move the unit."""
    env = SmaxEnv("protoss_5_vs_5", epo=True)
    views = env.reset(3)
    s = env.snap
    me = next(v for v in views if v.alive)
    i = me.agent_id
    far = [
        a
        for a in me.avail_actions
        if a >= ATTACK_OFFSET
        and np.linalg.norm(s.pos[env.n_agents + a - ATTACK_OFFSET] - s.pos[i]) >= s.attack[i] + 1.0
    ]
    assert far, "an out-of-range attack is available under EPO"
    before = s.pos[i].copy()
    env.step([far[0] if v.agent_id == i else STOP for v in views])
    assert np.allclose(env.snap.pos[i], before, atol=1e-3)


def _one_agent_reference(env: SmaxEnv, i: int) -> tuple[tuple, tuple]:
    """Agent ``i``'s entities and actions computed one unit at a time with numpy scalars (the
    adapter's rules spelled out): the team-at-once views must give exactly these numbers."""
    from compass.core.types import Entity

    s, n = env.snap, env.n_agents
    if not s.alive[i]:
        return (), (0,)
    sight, shoot = float(s.sight[i]), float(s.attack[i])
    ents = []
    for u in range(len(s.alive)):
        delta = s.pos[u] - s.pos[i]
        d = float(np.hypot(delta[0], delta[1]))
        enemy = u >= n
        if u == i or not s.alive[u] or d >= sight or (enemy and not env._observed[u - n, i]):
            continue
        ents.append(
            Entity(
                id=u - n if enemy else u,
                team="enemy" if enemy else "ally",
                unit_type=s.type_name(u),
                x=float(s.pos[u, 0]),
                y=float(s.pos[u, 1]),
                rel_x=float(delta[0] / sight),
                rel_y=float(delta[1] / sight),
                distance=d / sight,
                health=float(s.health[u]),
                can_attack=enemy and d < shoot,
                last_action=0 if enemy else int(env._last_actions[u]),
            )
        )
    avail = [STOP]
    step = env._c.step_len[s.types[i]]
    for a, (dx, dy) in {2: (0.0, 1.0), 3: (0.0, -1.0), 4: (1.0, 0.0), 5: (-1.0, 0.0)}.items():
        x, y = s.pos[i, 0] + dx * step, s.pos[i, 1] + dy * step
        if 0.5 <= x <= 31.5 and 0.5 <= y <= 31.5:
            avail.append(a)
    for j in range(env.n_enemies):
        if s.alive[n + j] and (env._epo_active or np.linalg.norm(s.pos[n + j] - s.pos[i]) < s.attack[i]):
            avail.append(ATTACK_OFFSET + j)
    return tuple(ents), tuple(sorted(avail))


@pytest.mark.parametrize("epo", [False, True])
def test_team_views_equal_one_agent_at_a_time(epo):
    """Views are built for the whole team in one set of array operations; every entity field
    (bit for bit) and every available action is what the per-unit rules give, over a battle."""
    env = SmaxEnv("protoss_5_vs_5", epo=epo)
    views = env.reset(3)
    rng = np.random.default_rng(0)
    for _ in range(60):
        for v in views:
            ents, avail = _one_agent_reference(env, v.agent_id)
            assert v.entities == ents and v.avail_actions == avail
            assert [repr(e) for e in v.entities] == [repr(e) for e in ents]
        res = env.step([int(rng.choice(v.avail_actions)) for v in views])
        if res.done:
            break
        views = res.views
