"""Relayed entities reach what agents perceive: text, obs_data, ego frame (EPO makes it matter)."""

from __future__ import annotations

import numpy as np

from compass.comm import CommProtocol
from compass.games.combat.smax import SmaxEnv
from compass.games.combat.text import parse_combat_text


def _perceive(mode: str, steps: int = 40):
    env = SmaxEnv("protoss_5_vs_5", epo=True)
    comm = CommProtocol(mode, seed=0)
    views = env.reset(4)
    rng = np.random.default_rng(0)
    relayed_views = []
    for t in range(steps):
        comm.exchange(t, views)
        for v in views:
            if not v.alive:
                continue
            extra = comm.relayed_for(v.agent_id, v)
            pv = v.with_entities(v.entities + tuple(extra))
            if any(not e.visible and e.team == "enemy" and e.source != v.agent_id for e in pv.entities):
                relayed_views.append(pv)
        res = env.step([int(rng.choice([a for a in v.avail_actions if a < 6] or [0])) for v in views])
        views = res.views
        if res.done:
            break
    return relayed_views


def test_multihop_relays_enemies_into_text_obs_data_and_frame():
    views = _perceive("multihop")
    assert views, "under EPO a teammate should relay an enemy within 40 steps"
    v = views[0]
    enemy = next(e for e in v.entities if not e.visible and e.team == "enemy" and e.source != v.agent_id)
    assert f"Enemy #{enemy.id}: {enemy.unit_type}" in v.text and f"relayed by Ally #{enemy.source}" in v.text
    parsed = parse_combat_text(v.text)
    pe = next(e for e in parsed.enemies if e.id == enemy.id)
    assert pe.relayed and not pe.can_attack and pe.source == enemy.source and pe.hops == enemy.hops
    frame = v.frame()
    assert (frame == np.array([255, 170, 60])).all(axis=2).any()  # relayed units drawn in orange


def test_no_comm_relays_nothing_from_teammates():
    assert _perceive("none") == []
