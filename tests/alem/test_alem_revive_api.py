"""Reviving teammates, second pass (compass.games.alem.skill_api.revive): bodies beside a creature,
and the overworld's bodies at night, wait. Hand-drawn maps, then the real env."""

from __future__ import annotations

from dataclasses import replace

from alem_testlib import needs_alem
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DO, NOOP, RIGHT
from compass.games.alem.obs import Mob, Teammate

GRID = ["........", "........", "........"]


def _body(x: int, y: int, me=(1, 1), mate: int = 1) -> Teammate:
    dx, dy = x - me[0], y - me[1]
    return Teammate(mate, "miner", x, y, dx, dy, abs(dx) + abs(dy), 0.0, alive=False)


def _mob(x: int, y: int, kind: str = "melee", me=(1, 1), name: str = "zombie") -> Mob:
    dx, dy = x - me[0], y - me[1]
    return Mob(7, name, kind, x, y, dx, dy, abs(dx) + abs(dy), 5.0)


def _grid_at(x: int) -> list[str]:
    rows = [list(r) for r in GRID]
    rows[1][x] = "@"
    return ["".join(r) for r in rows]


def test_night_out_is_the_overworld_shelter_window_or_the_dark():
    day = _obs(_grid_at(1), step=300 + 60)
    assert not api.night_out(day)
    assert api.night_out(replace(day, step=300 + 130))  # the library's dusk (120) has passed
    assert api.night_out(replace(day, light=0.2))  # dark outside the window too
    assert not api.night_out(replace(day, step=300 + 270))  # after dawn (265)
    # Below the overworld there is no night to wait out.
    assert not api.night_out(replace(day, step=300 + 200, light=0.0, level=1))


def test_body_threatened_by_a_creature_near_it_or_a_line_of_fire_below():
    d = _obs(_grid_at(1), teammates=[_body(5, 1)])
    assert not api.body_threatened(d, (5, 1))
    assert api.body_threatened(replace(d, mobs=[_mob(7, 2)]), (5, 1))  # 3 tiles from the body
    assert not api.body_threatened(replace(d, mobs=[_mob(7, 2)]), (5, 1), clear=2)
    assert not api.body_threatened(replace(d, mobs=[_mob(7, 2, kind="passive", name="cow")]), (5, 1))
    # An orc mage 6 tiles down the body's row: harmless on the overworld's rule, a line of fire below.
    wide = _obs(["..............", ".@............"], teammates=[_body(5, 1)])
    mage = _mob(11, 1, kind="ranged", name="orc_mage")
    assert not api.body_threatened(replace(wide, mobs=[mage]), (5, 1))
    assert api.body_threatened(replace(wide, mobs=[mage], level=1), (5, 1))


def test_careful_revive_passes_over_a_body_beside_a_creature():
    body = _body(5, 1)
    d = _obs(_grid_at(1), teammates=[body])
    assert api.careful_revive_step(d) == RIGHT  # nothing near it: walk there as revive_step does
    zombie = replace(d, mobs=[_mob(6, 2)])
    assert api.revive_step(zombie) == RIGHT  # main's revive walks into the zombie's reach
    assert api.careful_revive_step(zombie) is None  # this one waits for it to go
    assert api.careful_revive_step(zombie, clear=0) == RIGHT  # the rule off
    # A second body with nothing near it is revived instead (it lies west: the walk turns round).
    safe = _body(0, 1, mate=2)
    both = replace(zombie, teammates=[body, safe])
    assert api.careful_revive_step(both) == api.revive_step(replace(both, teammates=[safe]))
    # Beside the body and facing it, with the creature gone: Do.
    facing_it = _obs(_grid_at(4), teammates=[_body(5, 1, me=(4, 1))], facing="east", facing_xy=(5, 1))
    assert api.careful_revive_step(facing_it) == DO
    assert api.careful_revive_step(replace(facing_it, mobs=[_mob(5, 2, me=(4, 1))])) is None


def test_careful_revive_at_night_only_a_body_beside_the_agent():
    night = 300 + 200
    far = _obs(_grid_at(1), teammates=[_body(5, 1)], step=night, light=0.1)
    assert api.revive_step(far) == RIGHT
    assert api.careful_revive_step(far) is None  # it waits for dawn
    assert api.careful_revive_step(far, night_reach=30) == RIGHT  # the rule off
    assert api.careful_revive_step(replace(far, step=600 + 270, light=0.6)) == RIGHT  # dawn
    # A body two tiles off (in the shelter beside it) is still revived at night.
    near = _obs(_grid_at(3), teammates=[_body(5, 1, me=(3, 1))], step=night, light=0.1)
    assert api.careful_revive_step(near) == RIGHT
    # Below the overworld there is no night: the far body is walked to.
    assert api.careful_revive_step(replace(far, level=1, level_name="Dungeon")) == RIGHT


@needs_alem
def test_careful_revive_in_the_real_env_waits_for_dawn(downed_teammate):
    """Agent 2 lies dead 4 tiles east of agent 1 on grass. At night (step 200 of the day) agent 1
    following careful_revive_step does not walk to it, while revive_step's walk brings it back; in
    the morning careful_revive_step brings it back too."""
    import jax
    import numpy as np

    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    def set_time(env, t: int):
        cp = env.checkpoint()
        st = cp["state"].replace(timestep=cp["state"].timestep * 0 + t)
        env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
        return env.step([NOOP, NOOP, NOOP]).views

    def follow(env, views, policy, steps=10):
        for _ in range(steps):
            act = policy(obs_data_from_view(views[1])) or NOOP
            res = env.step([NOOP, act, NOOP])
            views = res.views
            if res.views[2].alive:
                return True
        return False

    env, _ = downed_teammate(800, east=4)
    views = set_time(env, 200)
    d = obs_data_from_view(views[1])
    assert api.night_out(d) and api.downed_teammates(d)
    assert not follow(env, views, api.careful_revive_step)

    env, _ = downed_teammate(800, east=4)
    assert follow(env, set_time(env, 200), api.revive_step)  # main's walk at night

    env, _ = downed_teammate(800, east=4)
    views = set_time(env, 300 + 20)
    assert not api.night_out(obs_data_from_view(views[1]))
    assert follow(env, views, api.careful_revive_step)


def test_wipe_diag_counts_what_follows_a_revival(monkeypatch):
    """benchmarks/alem_wipe_diag.py's report on one hand-written episode: agent 1 falls at night,
    agent 0 revives it and dies on its next walk, the revived agent dies again 10 steps later, and
    agent 2, alone, dies last: a wipe at step 430."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from alem_wipe_diag import report

    def death(t, agent, cause, left, walk=False):
        return {
            "t": t,
            "kind": "death",
            "agent": agent,
            "cause": cause,
            "hour": t % 300,
            "dark": t % 300 > 150,
            "level": 0,
            "hostile_near": None,
            "reviving": walk,
            "sleeping": False,
            "enclosed": False,
            "left": left,
        }

    events = [
        death(200, 1, "zombie", 2),
        {
            "t": 250,
            "kind": "revive",
            "agent": 1,
            "by": 0,
            "hour": 250,
            "dark": True,
            "hostile_near_body": ["zombie", 2],
            "food": 5.0,
            "drink": 5.0,
        },
        death(260, 1, "zombie", 2),
        death(290, 0, "skeleton", 1, walk=True),
        death(430, 2, "starvation", 0),
    ]
    walks = [
        {"outcome": "revived", "dark": True, "hostile_near_body": ["zombie", 2]},
        {"outcome": "died", "dark": True, "hostile_near_body": None},
    ]
    r = report({"events": {"5": events}, "walks": walks, "rows": []}, 3000)
    assert (r["revives"], r["revived_dies_within_50"], r["reviver_dies_within_50"]) == (1, 1, 1)
    assert r["deaths_on_revive_walk"] == 1 and r["last_deaths"] == {"starvation": 1}
    assert r["wipes"] == 1 and r["episode_end_median"] == 430 and r["wiped_before_1000"] == 1
    assert r["walks_dark"] == {"revived": 1, "died": 1}
    assert "a1<-a0" in r["chains"]["5"]
    # One agent still standing at the end: no wipe, the episode runs to its last step.
    r = report({"events": {"5": events[:4]}, "walks": [], "rows": []}, 3000)
    assert r["wipes"] == 0 and r["episode_end_median"] == 3000


def test_wipe_diag_sets_overworld_deaths_beside_the_states_lived_in(monkeypatch):
    """benchmarks/alem_wipe_diag.py: an agent at 3 drink (the library's `fed_level`) in the dark is
    "dark unfed"; overworld deaths are counted by cause (asleep folded in) and state, deaths below
    the overworld are left out, and the living agent-steps per state come along."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from alem_wipe_diag import _state, by_state

    assert _state(9, 3, True) == "dark unfed"
    assert _state(4, 4, False) == "light fed"
    deaths = [
        {"cause": "zombie", "level": 0, "food": 9, "drink": 3, "dark": True},
        {"cause": "zombie (asleep)", "level": 0, "food": 5, "drink": 6, "dark": True},
        {"cause": "zombie", "level": 1, "food": 0, "drink": 0, "dark": True},
        {"cause": "starvation", "level": 0, "food": 0, "drink": 9, "dark": False},
    ]
    r = by_state(deaths, {"light fed": 90, "dark unfed": 10})
    assert r["zombie"] == {"dark fed": 1, "dark unfed": 1}
    assert r["starvation"] == {"light unfed": 1}
    assert r["agent_steps"] == {"dark unfed": 10, "light fed": 90}
