"""The families' key maps for ``compass play``: what a person is offered is exactly the game's legal
actions of that step (nothing illegal, every ALEM action reachable), and attacks name their target."""

from __future__ import annotations

import json
from dataclasses import replace

from compass.core.family import get_family
from compass.core.types import Entity


def _views(family: str, n: int = 60):
    fam = get_family(family)
    with open(fam.observations_path, encoding="utf-8") as f:
        return [fam.view_from_text(json.loads(line)["text"]) for _, line in zip(range(n), f, strict=False)]


def test_combat_offers_only_legal_actions_and_numbered_attacks():
    fam = get_family("combat")
    for v in _views("combat"):
        keys = fam.human_keys(v)
        assert {k.action for k in keys} <= set(v.avail_actions)
        for k in keys:
            if k.action >= 6:  # attack enemy j = action - 6: its number key and its name
                assert k.key in ("", str(k.action - 6)) and f"#{k.action - 6}" in k.label
    # A legal attack on an enemy the unit knows of is offered (a synthetic view, so the test
    # does not depend on the recorded observations holding one).
    v = _views("combat", 1)[0]
    enemy = Entity(3, "enemy", "stalker", 1.0, 1.0, 0.1, 0.1, 0.2, 0.5, can_attack=True)
    v = replace(v, entities=(enemy,), avail_actions=(*v.avail_actions, 9))
    (attack,) = [k for k in fam.human_keys(v) if k.action == 9]
    assert attack.key == "3" and "stalker #3" in attack.label and "in range" in attack.label


def test_alem_offers_every_legal_action_with_the_harness_label():
    from compass.games.alem.names import action_name

    fam = get_family("alem")
    for v in _views("alem"):
        keys = fam.human_keys(v)
        assert {k.action for k in keys} == set(v.avail_actions)
        assert all(k.label == action_name(k.action, v.agent_id) for k in keys)
        keyed = {k.key: k.action for k in keys if k.key}
        assert len(keyed) == len([k for k in keys if k.key])  # one action per key
