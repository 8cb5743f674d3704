"""Wire encoding of messages and the minimap text."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from compass.comm import CommProtocol, EntityReport, Intent, decode_message, minimap_text
from compass.comm.messages import _float_len, entity_report_size, entity_report_sizes
from compass.comm.minimap import NOTHING_SHARED

from .conftest import World, make_entity, make_view


def test_entity_report_round_trip_and_rounding():
    e = make_entity(3, 12.34567, 7.0, unit_type="stalker", health=0.8)
    report = EntityReport.from_entity(2, 14, e, hops=1)
    text = report.to_json()
    assert json.loads(text)["x"] == 12.346
    assert report.nbytes == len(text.encode())
    back = decode_message(text)
    assert back == replace(report, x=12.346)


def test_fast_report_size_matches_the_encoding():
    rng = np.random.default_rng(0)
    cases = [
        make_entity(0, 24, 0),
        make_entity(7, math.nan, math.inf, unit_type='zer"gling'),
        make_entity(1, -0.0001, 2e17, health=0.0005),
    ]
    for _ in range(300):
        x, y, h = (
            rng.uniform(-1e3, 1e3),
            round(rng.exponential(10), int(rng.integers(0, 5))),
            rng.uniform(0, 1),
        )
        e = make_entity(int(rng.integers(0, 30)), np.float64(x), float(y), health=float(h), team="ally")
        cases.append(replace(e, shield=float(rng.uniform(0, 1e-4)), last_action=int(rng.integers(0, 20))))
    for i, e in enumerate(cases):
        sender, step, hops = i % 11, i * 37, i % 4
        expected = EntityReport.from_entity(sender, step, e, hops).nbytes
        assert entity_report_size(sender, step, e, hops) == expected


def test_report_size_matches_the_encoding_at_every_magnitude():
    """Up to 1e16 and at the edges where ".3f" shows digits repr does not (999999999999999.9
    is stored as ...9.875) or rounds up a digit (999999999999.9995 -> 1000000000000.0)."""
    edges = [999999999999999.9, 1e15 - 0.1, 1e15, 9871946649828.61, 1e12, 999999999999.9995]
    edges += [999999999999.999, 99999999999.9995, 0.0005, 0.0004999, 123456789012.345, 2.5e-4]
    rng = np.random.default_rng(1)
    values = [s * v for v in edges for s in (1, -1)]
    values += [float(v) for e in range(-4, 17) for v in rng.uniform(-(10.0**e), 10.0**e, 200)]
    for i, v in enumerate(values):
        e = make_entity(i % 30, v, -v / 7, health=v / 3)
        e = replace(e, shield=float(np.nextafter(v, 0)))
        expected = EntityReport.from_entity(1, 5, e).nbytes
        assert entity_report_size(1, 5, e) == expected, v
        assert _float_len(v) == len(json.dumps(round(v, 3))), v


def test_batched_report_sizes_match_the_encoding_when_units_repeat():
    # Several observers report the same unit in one step; the sizes share work per distinct
    # unit state. A unit at x = -0.0 is written "-0.0", one byte more than at 0.0.
    base = make_entity(4, 0.0, 3.25, health=0.5)
    entities = [base, replace(base, x=-0.0), base, replace(base, health=0.25), make_entity(5, 0.0, 3.25)]
    senders = [0, 1, 12, 3, 0]
    sizes = entity_report_sizes(senders, 140, entities, range(len(entities)))
    expected = [EntityReport.from_entity(s, 140, e).nbytes for s, e in zip(senders, entities, strict=True)]
    assert [sizes[i] for i in range(len(entities))] == expected
    assert expected[1] == expected[0] + 1


def test_report_sizes_with_a_cache_kept_across_steps_match_the_encoding():
    # The protocol keeps the parts' cache from step to step: a later step, other senders and
    # hops, and units that moved, changed action or became -0.0 must still size as encoded.
    parts: dict = {}
    base = make_entity(4, 0.0, 3.25, health=0.5)
    steps = [
        [base, make_entity(5, 1.5, 3.25)],
        [base, replace(base, x=-0.0), replace(base, last_action=7), make_entity(5, 1.5, 3.25)],
    ]
    for step, (entities, senders) in enumerate(zip(steps, ([0, 1], [2, 13, 2, 0]), strict=True)):
        sizes = entity_report_sizes(senders, 9 + 991 * step, entities, range(len(entities)), 2, parts=parts)
        expected = [
            EntityReport.from_entity(s, 9 + 991 * step, e, 2).nbytes
            for s, e in zip(senders, entities, strict=True)
        ]
        assert [sizes[i] for i in range(len(entities))] == expected
    assert len(parts) == 4  # base, its -0.0 copy, its new action, unit 5: each sized once


def test_intent_round_trip():
    intent = Intent(1, 5, "focus fire on Enemy #2", None)
    assert decode_message(intent.to_json()) == intent
    assert intent.nbytes == len(intent.to_json())


def test_decode_rejects_unknown_kind():
    with pytest.raises(ValueError, match="unknown message kind"):
        decode_message('{"kind":"chat","text":"hi"}')


def test_minimap_lines(fig5: World):
    fig5.enemy(1, 32, 0, unit_type="stalker")
    proto = CommProtocol()
    views = fig5.views(0)
    proto.exchange(0, views)
    fig5.enemies.clear()
    views = fig5.views(1)
    proto.exchange(1, views)
    text = minimap_text(views[0], proto.relayed_for(0, views[0]))
    lines = text.splitlines()
    assert (
        lines[0]
        == "Enemy #1 stalker at (+3.56, +0.00) rel, health 1.00 — relayed by Ally #3, 3 hops, seen 1 step ago"
    )
    assert (
        lines[1]
        == "Ally #2 marine at (+1.78, +0.00) rel, health 1.00 — relayed by Ally #1, 1 hop, seen this step"
    )
    assert len(lines) == 3


def test_minimap_own_memory_self_report_shield_and_empty():
    view = make_view(0, 0, 0)
    mine = replace(make_entity(4, 9, 0, health=0.5), shield=0.25, source=0, age=2, rel_x=1.0, distance=1.0)
    ally = replace(make_entity(2, 18, 0, team="ally"), source=2, hops=2, rel_x=2.0, distance=2.0)
    lines = minimap_text(view, [ally, mine]).splitlines()
    assert (
        lines[0]
        == "Enemy #4 zergling at (+1.00, +0.00) rel, health 0.50, shield 0.25 — last seen by you 2 steps ago"
    )
    assert lines[1].endswith("— reported by Ally #2 itself, 2 hops, seen this step")
    assert minimap_text(view, []) == NOTHING_SHARED
