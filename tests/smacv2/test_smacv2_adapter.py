"""SMACv2 adapter over the smacv2 stand-in: text, actions (identity), EPO, outcomes, frames, seeds."""

from __future__ import annotations

import numpy as np
import pytest

from compass.games.combat.render import SHORT
from compass.games.combat.text import ATTACK_OFFSET, obs_data_from_view, parse_combat_text
from tests.smacv2.fake_sc2 import placed

# protoss_5_vs_5. Allies are ordered by (unit_type, x, y) as smacv2 orders them, and the RL unit ids
# sort colossus < stalker < zealot: agent 0 colossus (10,20), 1 stalker (3,3), 2 stalker (10,10),
# 3 zealot (3,28), 4 zealot (12,10).
PROTOSS = placed(
    ["stalker", "zealot", "colossus", "stalker", "zealot"],
    [(10, 10), (12, 10), (10, 20), (3, 3), (3, 28)],
    ["stalker", "zealot", "colossus", "stalker", "zealot"],
    [(14, 10), (25, 10), (30, 30), (30, 2), (16, 11)],
)
STALKER = 2


def _same(a, b):
    assert a.own_unit_type == b.own_unit_type and a.available_actions == b.available_actions
    assert a.own_position == b.own_position and a.own_health == b.own_health and a.can_move == b.can_move
    assert a.own_shield == b.own_shield and a.own_weapon_cooldown == b.own_weapon_cooldown
    for xs, ys in ((a.enemies, b.enemies), (a.allies, b.allies)):
        assert [
            (u.id, u.unit_type, u.position, u.distance, u.health, u.shield, u.last_action) for u in xs
        ] == [(u.id, u.unit_type, u.position, u.distance, u.health, u.shield, u.last_action) for u in ys]
    assert [e.can_attack for e in a.enemies] == [e.can_attack for e in b.enemies]


def test_text_is_built_from_smacv2_unit_data(make_env):
    env = make_env(config=PROTOSS)
    views = env.reset(0)
    assert [v.own.unit_type for v in views] == ["colossus", "stalker", "stalker", "zealot", "zealot"]
    assert env.unit_types[1] == ["stalker", "zealot", "colossus", "stalker", "zealot"]
    text = views[STALKER].text
    assert "You are Ally #2, a stalker (shoot range 6.0, sight range 10.0)." in text
    assert "position (0.312, 0.312) of the 32x32 map, health 1.00, shield 1.00, weapon cooldown 0.00" in text
    assert (
        "Enemy #0: stalker, relative position (+0.400, +0.000), distance 0.400, health 1.00, shield 1.00, "
        "can attack: yes"
    ) in text
    assert "Enemy #4: zealot" in text and "can attack: no" in text.split("Enemy #4")[1].splitlines()[0]
    assert "Enemy #1" not in text  # 15 away: beyond the stalker's sight range of 10
    assert "Ally #4: zealot, relative position (+0.200, +0.000), distance 0.200" in text
    assert "Ally #0" not in text  # the colossus is exactly 10 away; smacv2 needs dist < sight
    assert text.endswith("Available actions: 1, 2, 3, 4, 5, 6")
    # The zealot's melee range is lifted to smacv2's min_attack_range of 2.
    assert "You are Ally #4, a zealot (shoot range 2.0, sight range 9.0)" in views[4].text

    res = env.step([1, 1, ATTACK_OFFSET + 0, 1, 1])
    text = res.views[STALKER].text
    # 13 damage goes to the stalker's 80 shield first: 67/80.
    assert (
        "Enemy #0: stalker, relative position (+0.400, +0.000), distance 0.400, health 1.00, shield 0.84"
        in text
    )
    assert "weapon cooldown 0.50, last action: attack Enemy #0" in text
    assert "last action: attack Enemy #0" in res.views[4].text.split("Ally #2")[1]


def test_text_and_obs_data_agree_over_an_episode(make_env):
    env = make_env("zerg_5_vs_6", enemy_ai=True)
    views = env.reset(3)
    rng = np.random.default_rng(0)
    for _ in range(15):
        for v in views:
            _same(parse_combat_text(v.text), obs_data_from_view(v))
            assert v.with_entities(v.entities).text == v.text
            for e in v.enemies:
                assert f"Enemy #{e.id}: {e.unit_type}" in v.text
        res = env.step([int(rng.choice(v.avail_actions)) for v in views])
        views = res.views
        if res.done:
            break


def test_unit_names_come_from_the_envs_type_ids(make_env):
    # A different game build shifts the RL unit ids; names must follow the env's maps, not constants.
    env = make_env(config=PROTOSS, min_unit_type=2111)
    assert [v.own.unit_type for v in env.reset(0)] == ["colossus", "stalker", "stalker", "zealot", "zealot"]
    assert env.sc.agents[0].unit_type == 2112


def test_available_actions_pass_through_unchanged(make_env):
    env = make_env(config=PROTOSS)
    views = env.reset(0)
    fake = env.sc
    for action, axis, sign in ((2, 1, 1), (3, 1, -1), (4, 0, 1), (5, 0, -1)):
        before = (fake.agents[STALKER].pos.x, fake.agents[STALKER].pos.y)
        acts = [1] * 5
        acts[STALKER] = action
        assert action in views[STALKER].avail_actions
        res = env.step(acts)
        assert fake.actions_received[-1] == acts  # SMACv2 indices: identity
        assert res.info["replaced_actions"] == 0
        after = (fake.agents[STALKER].pos.x, fake.agents[STALKER].pos.y)
        assert np.sign(after[axis] - before[axis]) == sign
        views = res.views
    assert env.native_action(STALKER, 1) == 1


def test_actions_smacv2_would_refuse_are_replaced(make_env):
    config = placed(
        ["stalker"] * 5,
        [(10, 10), (31.5, 16), (20, 20), (22, 20), (24, 20)],
        ["zealot"] * 5,
        [(25, 10), (2, 30), (3, 30), (4, 30), (5, 30)],
    )
    env = make_env(config=config)
    env.reset(0)
    # Agents are the stalkers sorted by x: 0 at (10,10), 1 (20,20), 2 (22,20), 3 (24,20), 4 (31.5,16).
    assert env.native_action(0, ATTACK_OFFSET + 0) == 1  # masked (out of range): stop, no walking
    assert env.native_action(4, 4) == 1  # East runs off the map: stop
    assert env.native_action(0, 0) == 1  # no-op while alive: stop
    with pytest.raises(ValueError, match="out of range"):
        env.native_action(0, ATTACK_OFFSET + 5)
    with pytest.raises(ValueError, match="expected 5 actions"):
        env.step([1, 1])
    env.sc.agents[3].health = 0  # smacv2 keeps a dead unit's last proto with health 0
    res = env.step([ATTACK_OFFSET + 0, 1, 1, 1, 4])  # the stand-in asserts like smacv2 on refusals
    assert env.sc.actions_received[-1] == [1, 1, 1, 0, 1]
    assert res.info["replaced_actions"] == 3
    assert not res.views[3].alive and res.views[3].avail_actions == (0,)
    assert "Your unit is dead" in res.views[3].text


EPO_SCENE = placed(
    ["stalker"] * 5,
    [(10, 10), (12, 10), (2, 30), (3, 30), (4, 30)],
    ["zealot"] * 5,
    [(15, 10), (30, 2), (30, 4), (30, 6), (30, 8)],
)


def _sees(view, enemy: int) -> bool:
    return any(e.id == enemy for e in view.enemies)


def test_epo_only_the_first_spotter_sees_an_enemy(make_env):
    env = make_env(epo=True, config=EPO_SCENE)
    assert env.env_kwargs["prob_obs_enemy"] == 0.0 and env.env_kwargs["action_mask"] is False
    for seed in range(4):
        views = env.reset(seed)
        # Agents sorted by x: 0 at (2,30), 1 (3,30), 2 (4,30), 3 (10,10), 4 (12,10); both 3 and 4 are
        # within sight of enemy 0, but smacv2 lets only the first to spot it observe it.
        spotter = env.sc.enemy_tags[0]
        assert spotter in (3, 4)
        other = 7 - spotter
        assert _sees(views[spotter], 0) and "Enemy #0: zealot" in views[spotter].text
        assert not _sees(views[other], 0) and "Enemy #0" not in views[other].text
        assert env.observed(spotter, 0) and not env.observed(other, 0)
        # No action mask: every alive enemy is a legal target, seen or not.
        assert set(range(ATTACK_OFFSET, ATTACK_OFFSET + 5)) <= set(views[other].avail_actions)
        # The other agent stays blind to it after moving closer; the spotter keeps it.
        res = env.step([1, 1, 1, 1, 1] if other == 4 else [1, 1, 1, 4, 1])
        assert not _sees(res.views[other], 0) and _sees(res.views[spotter], 0)


def test_without_epo_every_agent_in_sight_sees_the_enemy(make_env):
    env = make_env(config=EPO_SCENE)
    assert env.env_kwargs["prob_obs_enemy"] == 1.0 and env.env_kwargs["action_mask"] is True
    views = env.reset(0)
    assert _sees(views[3], 0) and _sees(views[4], 0)
    assert ATTACK_OFFSET + 1 not in views[3].avail_actions  # masked: out of range
    env_p = make_env(prob_obs_enemy=0.5)
    assert env_p.env_kwargs["prob_obs_enemy"] == 0.5 and env_p.sc.prob_obs_enemy == 0.5


def test_out_of_range_attack_under_epo_is_sent_as_is_and_does_nothing(make_env):
    env = make_env(epo=True, config=EPO_SCENE)
    env.reset(0)
    where = {i: (u.pos.x, u.pos.y) for i, u in env.sc.agents.items()}
    target = env.sc.enemies[4]
    hp = (target.health, target.shield)
    res = env.step([ATTACK_OFFSET + 4] * 5)  # available without the mask
    assert env.sc.actions_received[-1] == [ATTACK_OFFSET + 4] * 5 and res.info["replaced_actions"] == 0
    # smacv2's get_agent_action sends no command for an out-of-range target: nobody walks there.
    assert env.sc.orders_sent[-1] == []
    assert {i: (u.pos.x, u.pos.y) for i, u in env.sc.agents.items()} == where
    assert (target.health, target.shield) == hp and res.rewards[0] == 0.0


def test_reward_is_smacv2_shaped_and_scaled(make_env):
    env = make_env(config=PROTOSS)
    env.reset(0)
    sc = env.sc
    # max_reward: 10 per enemy + 200 for the win + the enemies' health and shield (upstream).
    assert sc.max_reward == 5 * 10 + 200 + sum(u.health_max + u.shield_max for u in sc.enemies.values())
    enemy = sc.enemies[0]
    before = enemy.health + enemy.shield
    res = env.step([1, 1, ATTACK_OFFSET + 0, 1, 1])  # the stalker at (10,10) shoots (14,10)
    assert sc.orders_sent[-1] == [
        ("stop", 0),
        ("stop", 1),
        ("attack", STALKER, enemy.tag),
        ("stop", 3),
        ("stop", 4),
    ]
    dealt = before - (enemy.health + enemy.shield)
    assert dealt > 0 and res.rewards[0] == pytest.approx(dealt / (sc.max_reward / 20))
    assert not res.done


def test_win_when_smacv2_reports_battle_won(make_env):
    env = make_env(config=PROTOSS)
    env.reset(0)
    for j in range(1, 5):
        env.sc.enemies[j].health = 0
    env.sc.enemies[0].health, env.sc.enemies[0].shield = 5, 0
    res = env.step([1, 1, ATTACK_OFFSET + 0, 1, 1])
    assert res.done and res.outcome == "win" and res.info["battle_won"] is True
    assert res.info["dead_enemies"] == 5 and res.rewards == [res.rewards[0]] * 5
    # The win bonus (200) and 10 per kill are in the step's reward, scaled like smacv2's.
    assert res.rewards[0] >= (200 + 5 * 10) / (env.sc.max_reward / 20)


def test_loss_when_the_team_is_destroyed(make_env):
    env = make_env(config=PROTOSS, enemy_ai=True)
    env.reset(0)
    for i in (0, 1, 3, 4):
        env.sc.agents[i].health = 0
    env.sc.agents[STALKER].health, env.sc.agents[STALKER].shield = 1, 0
    res = env.step([0, 0, 1, 0, 0])
    assert res.done and res.outcome == "loss" and not res.info["battle_won"]


def test_only_medivacs_left_is_a_loss(make_env):
    config = placed(
        ["medivac", "marine", "marine", "marauder", "marine"],
        [(10, 10), (12, 10), (14, 10), (12, 12), (3, 3)],
        ["marine"] * 5,
        [(28, 28), (29, 28), (30, 28), (28, 29), (28, 30)],
    )
    env = make_env("terran_5_vs_5", config=config)
    views = env.reset(0)
    medivac = next(v.agent_id for v in views if v.own.unit_type == "medivac")
    for i in range(5):
        if i != medivac:
            env.sc.agents[i].health = 0
    res = env.step([1 if i == medivac else 0 for i in range(5)])
    assert res.done and res.outcome == "loss" and res.views[medivac].alive


def test_episode_limit_is_a_timeout(make_env):
    env = make_env(config=PROTOSS, max_steps=3)
    assert env.max_steps == 3 and env.sc.episode_limit == 3
    env.reset(0)
    outcomes = [env.step([1] * 5).outcome for _ in range(3)]
    assert outcomes == ["running", "running", "timeout"]
    assert make_env().max_steps == 200  # smacv2's limit for the 10gen maps


def test_abandoned_first_episode_does_not_relaunch_the_game(make_env):
    env = make_env(config=PROTOSS)
    env.reset(0)
    env.step([1] * 5)
    env.reset(1)
    env.reset(2)
    assert env.sc.launches == 1


def test_medivac_heals_allies_with_attack_indices(make_env):
    config = placed(
        ["medivac", "marine", "marine", "marauder", "marine"],
        [(10, 10), (12, 10), (3, 3), (3, 5), (3, 7)],
        ["marine", "marine", "marauder", "marine", "marine"],
        [(13, 11), (29, 28), (30, 28), (28, 29), (28, 30)],
    )
    env = make_env("terran_5_vs_5", config=config)
    views = env.reset(0)
    medivac = next(v for v in views if v.own.unit_type == "medivac")
    patient = next(a for a in medivac.allies if a.unit_type == "marine" and a.distance * 11 <= 4)
    env.sc.agents[patient.id].health = 20
    views = env.step([1] * 5).views
    medivac = views[medivac.agent_id]
    assert "Medivac: you cannot attack; action 6+j heals Ally #j (heal(j))." in medivac.text
    assert f"Heal targets: Ally #{patient.id}" in medivac.text
    assert medivac.extra["targets"] == "allies" and 0 <= medivac.extra["energy"] <= 1
    assert all(not e.can_attack for e in medivac.enemies) and medivac.enemies
    _same(parse_combat_text(medivac.text), obs_data_from_view(medivac))
    assert medivac.with_entities(medivac.entities).text == medivac.text
    acts = [1] * 5
    acts[medivac.agent_id] = ATTACK_OFFSET + patient.id
    env.step(acts)
    assert env.sc.actions_received[-1] == acts and env.sc.agents[patient.id].health == 29


def test_frames_show_all_smacv2_unit_types(make_env):
    assert {"colossus", "medivac", "baneling"} <= set(SHORT)
    env = make_env(config=PROTOSS)
    views = env.reset(0)
    frame = env.render_global()
    assert frame.shape == (384, 384, 3) and frame.dtype == np.uint8
    shield_blue = np.all(frame == (90, 200, 255), axis=-1).any()
    assert shield_blue  # protoss shields get their own bar
    ego = views[STALKER].frame()
    assert ego.shape == (256, 256, 3) and np.all(ego == (90, 200, 255), axis=-1).any()
    zerg = make_env("zerg_5_vs_5")
    zerg.reset(0)
    assert not np.all(zerg.render_global() == (90, 200, 255), axis=-1).any()


def test_seed_reproduces_teams_and_start_positions(make_env):
    env = make_env("terran_5_vs_6")
    runs = []
    for seed in (5, 5, 6):
        env.reset(seed)
        runs.append((env.unit_types, env.snap.pos.round(6).tolist()))
    assert runs[0] == runs[1] and runs[0] != runs[2]
    allies, enemies = runs[0][0]
    assert len(allies) == 5 and len(enemies) == 6
    assert set(allies + enemies) <= {"marine", "marauder", "medivac"}
    assert sorted(enemies[:5]) == sorted(allies)  # smacv2 mirrors the ally team on the enemy side


def test_close_shuts_the_game(make_env):
    env = make_env()
    env.close()
    assert env.sc.closed
