"""The ALEM adapter against the real alem-env (overworld variant, compiled once per session)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from alem_testlib import needs_alem

from compass.games.alem.names import N_ACTIONS, action_index, action_name
from compass.games.alem.obs import parse_alem_text

pytestmark = needs_alem


def test_unknown_scenario_lists_valid_ones():
    from compass.games.alem.env import make_alem

    with pytest.raises(ValueError, match="easy, medium, hard, overworld"):
        make_alem("nightmare")


def test_protocol_shape(alem_overworld):
    env = alem_overworld(20)
    assert (env.family, env.n_agents, env.n_actions, env.scenario) == ("alem", 3, 56, "overworld")
    views = env.reset(0)
    assert [v.agent_id for v in views] == [0, 1, 2]
    assert [v.own.unit_type for v in views] == ["warrior", "forager", "miner"]
    for _ in range(19):
        res = env.step([0, 0, 0])
        assert not res.done and res.outcome == "running"
    res = env.step([0, 0, 0])
    assert res.done and res.outcome == "timeout" and len(res.rewards) == 3
    assert res.info["achievements"].shape == (3, 93)
    with pytest.raises(RuntimeError):
        env.step([0, 0, 0])


def test_every_legal_action_maps_to_a_name_and_back(overworld_views):
    for views in overworld_views:
        for v in views:
            assert all(0 <= a < N_ACTIONS for a in v.avail_actions)
            names = [action_name(a, v.agent_id) for a in v.avail_actions]
            assert [action_index(x, v.agent_id) for x in names] == list(v.avail_actions)
            listed = re.findall(r"^ - (.+)$", v.text.split("Available actions:")[-1], re.M) if v.alive else []
            if v.alive and "Status:" not in v.text:
                assert sorted(listed) == sorted(names)


def test_text_names_the_entities_skills_see(overworld_views):
    for views in overworld_views:
        for v in views:
            if "Status: sleeping" in v.text or "Status: dead" in v.text:
                continue
            for e in v.entities:
                xy = f"(x={int(e.x)}, y={int(e.y)})"
                if e.team == "ally":
                    assert f"Agent {e.id}" in v.text
                    if e.health > 0:
                        assert xy in v.text
                else:
                    assert re.search(rf"^- {re.escape(e.unit_type)} .*{re.escape(xy)}", v.text, re.M), (
                        e,
                        v.text,
                    )
            obs = v.obs
            seen_text = (
                set(
                    re.findall(
                        r"^- (.+?) (?:\d+ steps?|at your)",
                        v.text.split("You see:")[-1].split("\n\n")[0],
                        re.M,
                    )
                )
                if "You see:" in v.text
                else set()
            )
            assert {b.name for b in obs.blocks} == seen_text


def test_text_is_the_harness_text(alem_overworld):
    """Our fast numpy path gives exactly what AlemLanguageWrapper produces on the device state."""
    import random

    env = alem_overworld(100)
    rng = random.Random(1)
    views = env.reset(5)
    res, acts = None, []
    for step in range(3):
        w = env._wrapper
        for v in views:
            kw = {}
            if step:
                kw = dict(
                    reward=res.rewards[v.agent_id],
                    new_achievements=res.info["new_achievements"][v.agent_id],
                    last_action=action_name(acts[v.agent_id], v.agent_id),
                    action_failed=res.info["action_failed"][v.agent_id],
                )
            out = w.process_obs(None, env.state, v.agent_id, **kw)["text"]
            assert v.text == out["long_term_context"] + "\n\n" + out["short_term_context"]
        acts = [rng.choice(v.avail_actions) for v in views]
        res = env.step(acts)
        views = res.views


def test_parsed_text_agrees_with_state_obs(overworld_views):
    for views in overworld_views[::5]:
        for v in views:
            if not v.alive or "Status:" in v.text:
                continue
            o, p = v.obs, parse_alem_text(v.text)
            assert p.agent_id == o.agent_id and p.role == o.role and p.position == o.position
            assert (p.step, p.max_steps, p.facing, p.level) == (o.step, o.max_steps, o.facing, o.level)
            assert p.status == {k: o.status[k] for k in p.status}
            assert {k: v_ for k, v_ in o.inventory.items() if v_ and k not in ("potions",)} == {
                k: v_ for k, v_ in p.inventory.items() if v_
            }
            assert [(t.id, t.x, t.y, t.request) for t in p.teammates if t.alive] == [
                (t.id, t.x, t.y, t.request) for t in o.teammates if t.alive
            ]
            assert sorted((m.name, m.x, m.y) for m in p.mobs) == sorted((m.name, m.x, m.y) for m in o.mobs)
            assert p.legal_indices == o.legal_indices
            text_sites = {(s.x, s.y, s.kind, s.required, s.window, s.soft) for s in p.coord_sites}
            state_sites = {(s.x, s.y, s.kind, s.required, s.window, s.soft) for s in o.coord_sites}
            assert text_sites <= state_sites  # the text lists the nearest site of each kind


def test_deterministic_and_renders(alem_overworld):
    env = alem_overworld(30)
    a = [v.text for v in env.reset(11)]
    b = [v.text for v in env.reset(11)]
    assert a == b
    frame = env.reset(11)[1].frame()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    world = env.render_global()
    assert world.shape == (48 * 16, 48 * 16, 3) and world.dtype == np.uint8


def test_relayed_entities_extend_the_text(overworld_views):
    from compass.core.types import Entity

    v = overworld_views[0][0]
    ghost = Entity(
        id=207,
        team="enemy",
        unit_type="zombie",
        x=3.0,
        y=4.0,
        rel_x=0.0,
        rel_y=0.0,
        distance=1.0,
        health=5.0,
        visible=False,
        source=2,
        hops=1,
        age=2,
    )
    relayed = v.with_entities(v.entities + (ghost,))
    assert (
        "Reported by teammates:\n- zombie (x=3, y=4) [relayed by Agent 2, 1 hop, seen 2 steps ago]"
        in relayed.text
    )
    assert relayed.text.startswith(v.text)
    from compass.games.alem.skill_api import obs_data_from_view

    d = obs_data_from_view(relayed)
    assert [(m.id, m.name, m.kind, m.x, m.y) for m in d.relayed] == [(207, "zombie", "melee", 3, 4)]
    assert obs_data_from_view(v) is v.obs
    assert replace(v).text == v.text
