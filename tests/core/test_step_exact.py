"""The per-step fast paths give what the code they replace gives, bit for bit (traces depend on it)."""

from __future__ import annotations

import pickle

import numpy as np

from compass.core.types import AgentView, Entity, OwnUnit, new_entity, new_own_unit, new_view
from compass.games.combat.smax import Snapshot, _avail_all, _norm
from compass.games.combat.text import ATTACK_OFFSET, CombatObs, new_combat_obs


def _same_object(fast, slow) -> None:
    assert fast == slow and repr(fast) == repr(slow)
    assert pickle.dumps(fast) == pickle.dumps(slow)  # the same fields in the same order


def test_fast_constructors_build_what_the_dataclasses_build():
    own = OwnUnit("stalker", 3.5, -0.0, 0.25, 9.0, 6.0, 7, 32.0, 32.0)
    _same_object(new_own_unit("stalker", 3.5, -0.0, 0.25, 9.0, 6.0, 7, 32.0, 32.0), own)
    _same_object(new_combat_obs(0.0, 0.5), CombatObs(shield=0.0, weapon_cooldown=0.5))
    ent = Entity(2, "enemy", "zealot", 1.0, 2.0, 0.1, -0.2, 0.3, 0.9, 0.0, True, 0, False, 1, 2, 3)
    _same_object(
        new_entity(2, "enemy", "zealot", 1.0, 2.0, 0.1, -0.2, 0.3, 0.9, 0.0, True, 0, False, 1, 2, 3), ent
    )
    slow = AgentView(1, "combat", 4, True, own, (ent,), (1, 2), None, CombatObs(0.0, 0.5), {"k": 1})
    fast = new_view(
        1, "combat", 4, True, own, (ent,), (1, 2), None, CombatObs(0.0, 0.5), {"k": 1}, None, None
    )
    _same_object(fast, slow)
    assert list(vars(fast)) == list(vars(slow))


def test_norm_is_np_linalg_norm_bit_for_bit():
    rng = np.random.default_rng(0)
    for v in [*rng.uniform(-40, 40, size=(20_000, 2)), np.array([0.0, -0.0]), np.array([3.0, 4.0])]:
        assert _norm(v) == np.linalg.norm(v)


def test_attack_actions_at_the_range_boundary_follow_numpy():
    """An enemy exactly at the shoot range (numpy's distance) is out of reach, one ulp inside it is
    in reach: the plain-float distance is numpy's ``norm(delta, axis=-1)`` to the last bit."""
    rng = np.random.default_rng(1)
    n = 5
    for _ in range(300):
        pos = rng.uniform(2.0, 30.0, size=(2 * n, 2))
        delta = pos[n:][None, :, :] - pos[:n][:, None, :]
        dist = np.sqrt(np.add.reduce(delta * delta, axis=2))
        target = rng.integers(n, size=n)  # each unit's range is set to its distance to one enemy
        attack = np.array([dist[i, target[i]] for i in range(n)] + [6.0] * n)
        inside = rng.random(n) < 0.5
        attack[:n] = np.where(inside, np.nextafter(attack[:n], np.inf), attack[:n])
        s = Snapshot(
            pos=pos,
            alive=np.ones(2 * n, dtype=bool),
            health=np.ones(2 * n),
            types=np.zeros(2 * n, dtype=np.int64),
            cooldown=np.zeros(2 * n),
            n_allies=n,
            sight=np.full(2 * n, 9.0),
            attack=attack,
        )
        got = _avail_all(s, n, n, np.array([0.5]), False)
        for i in range(n):
            attacks = {a - ATTACK_OFFSET for a in got[i] if a >= ATTACK_OFFSET}
            assert attacks == {j for j in range(n) if dist[i, j] < attack[i]}
            assert (int(target[i]) in attacks) == bool(inside[i])


def test_parse_obs_units_have_every_field_the_text_gives(smax_protoss):
    """``parse_obs`` data built from views (units filled without their constructors) equals the
    parse of the views' texts in every field, relayed units included."""
    from compass.comm import CommProtocol
    from compass.games.combat.text import EnemyUnit, Unit, obs_data_from_view, parse_combat_text

    fields = [*Unit.__slots__, *EnemyUnit.__slots__]
    comm = CommProtocol("multihop", seed=0)
    views = smax_protoss.reset(4)
    rng = np.random.default_rng(0)
    relayed = 0
    for t in range(40):
        comm.exchange(t, views)
        for v in views:
            rel = comm.relayed_for(v.agent_id, v) if v.alive else ()
            v = v.with_entities(v.entities + tuple(rel)) if rel else v
            direct, parsed = obs_data_from_view(v), parse_combat_text(v.text)
            for ours, theirs in ((direct.enemies, parsed.enemies), (direct.allies, parsed.allies)):
                assert [type(u) for u in ours] == [type(u) for u in theirs]
                for a, b in zip(ours, theirs, strict=True):
                    got = {f: getattr(a, f) for f in fields if hasattr(b, f)}
                    assert got == {f: getattr(b, f) for f in fields if hasattr(b, f)}
                    relayed += a.relayed
        res = smax_protoss.step([int(rng.choice(v.avail_actions)) for v in views])
        if res.done:
            break
        views = res.views
    assert relayed > 0
