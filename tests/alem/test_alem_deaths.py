"""Cause of death: the game's coarse cause refined to the creature, on constructed states."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from compass.games.alem.deaths import NearbyMob, classify_death, death_causes
from compass.games.alem.metrics import AlemScorer, EpisodeTracker, summarise


def _mobs(entries=(), slots=4, levels=2):
    """A ``Mobs``-like record: ``entries`` are (level, slot, (row, col), type_id)."""
    m = SimpleNamespace(
        mask=np.zeros((levels, slots), bool),
        position=np.zeros((levels, slots, 2), np.int32),
        type_id=np.zeros((levels, slots), np.int32),
    )
    for level, k, pos, t in entries:
        m.mask[level, k] = True
        m.position[level, k] = pos
        m.type_id[level, k] = t
    return m


def _state(alive, cause=(0, 0, 0), melee=(), ranged=(), shots=(), sleeping=(False, False, False), level=0):
    return SimpleNamespace(
        player_alive=np.asarray(alive, bool),
        player_death_cause=np.asarray(cause, np.int32),
        player_position=np.asarray([[10, 10], [20, 20], [30, 30]], np.int32),
        player_level=np.int32(level),
        is_sleeping=np.asarray(sleeping, bool),
        melee_mobs=_mobs(melee),
        ranged_mobs=_mobs(ranged),
        mob_projectiles=_mobs(shots),
    )


def test_intrinsic_causes_are_the_games_own():
    assert classify_death(1, []) == "starvation"
    assert classify_death(2, []) == "dehydration"
    assert (
        classify_death(3, [NearbyMob("melee", "zombie", 1)]) == "exhaustion"
    )  # a zombie nearby is no excuse
    assert classify_death(5, []) == "friendly_fire"
    assert classify_death(1, [], asleep=True) == "starvation (asleep)"


def test_mob_death_names_the_creature():
    zombie, skeleton = NearbyMob("melee", "zombie", 1), NearbyMob("ranged", "skeleton", 4)
    assert classify_death(4, [skeleton, zombie]) == "zombie"  # adjacent melee first
    assert classify_death(4, [skeleton, NearbyMob("projectile", "arrow", 1)]) == "skeleton"  # the shooter
    assert classify_death(4, [NearbyMob("projectile", "fireball", 2)]) == "fireball"  # shooter out of sight
    assert classify_death(4, [skeleton]) == "skeleton"
    assert classify_death(4, [NearbyMob("melee", "zombie", 3)]) == "mob (unseen)"  # not in striking range
    assert classify_death(4, [zombie], asleep=True) == "zombie (asleep)"
    with pytest.raises(ValueError, match="unknown ALEM death cause 9"):
        classify_death(9, [])


def test_death_causes_between_states():
    prev = _state([True, True, True], sleeping=(False, True, False), shots=[(0, 0, (20, 22), 0)])
    # Agent 0 is struck by a zombie (melee type 0) beside it; agent 1, asleep, is hit by an arrow
    # that vanished on impact (only in prev) from a skeleton three tiles off; agent 2 lives.
    cur = _state(
        [False, False, True],
        cause=(4, 4, 0),
        melee=[(0, 0, (10, 11), 0), (1, 1, (10, 9), 1)],  # the level-1 gnome does not count
        ranged=[(0, 2, (20, 23), 0)],
    )
    assert death_causes(prev, cur) == ["zombie", "skeleton (asleep)", None]
    # A death is reported once: on the next step the agent is already dead.
    assert death_causes(cur, cur) == [None, None, None]


def test_tracker_and_summary_carry_causes():
    t = EpisodeTracker()
    ach = np.zeros((3, 93), bool)
    t.update({"timestep": 1, "alive": [True, True, True], "achievements": ach, "deaths": [None] * 3})
    t.update(
        {"timestep": 2, "alive": [True, False, True], "achievements": ach, "deaths": [None, "zombie", None]}
    )
    # A later report of the same (dead) agent changes nothing; info without "deaths" still works.
    t.update({"timestep": 3, "alive": [False, False, True], "achievements": ach})
    s = t.score()
    assert [(a.steps_survived, a.death_cause) for a in s.agents] == [(3, "unknown"), (2, "zombie"), (3, None)]
    out = summarise([s, s], n=100)
    assert out["death_causes"] == {"survived": 2, "unknown": 2, "zombie": 2}
    scorer = AlemScorer(SimpleNamespace(scenario="hard", n_agents=3))
    line = scorer.describe_episode(s.as_dict())
    assert "1: zombie @ 2" in line and "0: unknown @ 3" in line
    assert "deaths: survived 2, unknown 2, zombie 2" in scorer.headline(out)


def test_a_revived_agent_is_reported_between_its_two_deaths():
    # Seed 17 Hard (RL preset, the library as the team): agent 2 died to an orc mage at step
    # 1,804, agent 1 revived it with Do at 1,953 (alem's revive) and it died of thirst at 2,126.
    from compass.games.alem.deaths import revivals
    from compass.games.alem.names import DO, NOOP

    def facing(alive, cause=(0, 0, 0)):
        s = _state(alive, cause)
        s.player_position = np.asarray([[5, 5], [29, 30], [30, 30]], np.int32)  # 1 is north of 2
        s.player_direction = np.asarray([2, 4, 3], np.int32)  # 1 faces south, onto 2's tile
        return s

    first, down, back, again = (
        facing([True, True, True]),
        facing([True, True, False], (0, 0, 4)),
        facing([True, True, True], (0, 0, 4)),  # alem keeps the old cause of a revived agent
        facing([True, True, False], (0, 0, 2)),
    )
    assert death_causes(first, down)[2] == "mob (unseen)"
    assert revivals(down, back, [NOOP, DO, NOOP]) == [None, None, (1,)]
    assert revivals(down, back, [DO, NOOP, NOOP]) == [None, None, ()]  # agent 0 faces elsewhere
    assert revivals(first, down, [NOOP, DO, NOOP]) == [None, None, None]
    assert death_causes(back, again)[2] == "dehydration"  # the game's second death, reported

    t = EpisodeTracker()
    ach = np.zeros((3, 93), bool)
    infos = [
        ([True, True, True], [None] * 3, [False] * 3),
        ([True, True, False], [None, None, "orc_mage"], [False] * 3),
        ([True, True, True], [None] * 3, [False, False, True]),
        ([True, True, True], [None] * 3, [False] * 3),
        ([True, True, False], [None, None, "dehydration"], [False] * 3),
    ]
    for step, (alive, deaths, revived) in enumerate(infos, 1):
        t.update(
            {"timestep": step, "alive": alive, "achievements": ach, "deaths": deaths, "revived": revived}
        )
    s = t.score()
    agent = s.agents[2]
    # Survival and cause are the first death's; the revival is counted, not hidden.
    assert (agent.steps_survived, agent.death_cause, agent.revivals) == (2, "orc_mage", 1)
    out = summarise([s], n=100)
    assert out["death_causes"] == {"orc_mage": 1, "survived": 2} and out["revivals"] == 1
    scorer = AlemScorer(SimpleNamespace(scenario="hard", n_agents=3))
    assert "2: orc_mage @ 2 (revived 1x)" in scorer.describe_episode(s.as_dict())
    assert scorer.headline(out).endswith("revivals 1")


def test_the_env_reports_a_teammates_revive(alem_overworld):
    """A real step of alem's revive: agent 2 lies dead east of agent 1, which does Do."""
    import jax
    import jax.numpy as jnp
    from alem.alem_coop.constants import BlockType

    from compass.core.types import EVENTS
    from compass.games.alem.names import DO, NOOP

    env = alem_overworld(50, text=False)
    env.reset(0)
    cp = env.checkpoint()
    st = cp["state"]
    tile = st.player_position[1] + jnp.array([0, 1], jnp.int32)
    # Grass: a Do on a coordination block (a tree here, say) waits for enough agents instead.
    assert int(st.map[int(st.player_level), int(tile[0]), int(tile[1])]) == BlockType.GRASS.value
    st = st.replace(
        player_position=st.player_position.at[2].set(tile),
        player_direction=st.player_direction.at[1].set(2),  # east
        player_alive=st.player_alive.at[2].set(False),
        player_health=st.player_health.at[2].set(0.0),
    )
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    res = env.step([NOOP, DO, NOOP])
    assert res.info["alive"] == [True, True, True] and res.views[2].alive
    assert res.info["revived"] == [False, False, True] and res.info["deaths"] == [None] * 3
    assert [e for e in res.info[EVENTS] if e["kind"] == "revive"] == [
        {"kind": "revive", "agent": 1, "revived": 2, "text": "agent 1 revived agent 2"}
    ]
    # Nobody came back on the next step: the revival is reported once.
    assert env.step([NOOP, NOOP, NOOP]).info["revived"] == [False, False, False]
