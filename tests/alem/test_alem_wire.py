"""ALEM views cross to the isolated sandbox's worker on the wire's short path, and arrive equal."""

from __future__ import annotations

import numpy as np

from compass.core.types import WIRE_JOURNALED, WIRE_PLAIN
from compass.sandbox.isolated import _wire_view
from compass.sandbox.wire import ArrayMirrorReceiver, ArrayMirrorSender


def _objects(obj, out: set[type]) -> set[type]:
    """The types of the objects an observation holds (records, their lists, the memory)."""
    for v in vars(obj).values():
        if isinstance(v, list):
            out.update(type(x) for x in v if hasattr(x, "__dict__"))
        elif hasattr(v, "__dict__") and not isinstance(v, type):
            out.add(type(v))
    return out


def test_every_object_an_alem_view_sends_is_registered_and_arrives_equal(overworld_views):
    views = [v for step in overworld_views for v in step]
    types = {type(views[0].own)} | {type(v.obs) for v in views}
    for v in views:
        _objects(v.obs, types)
    # a record type added to ObsData without registering it would pickle on the slow path
    assert types <= WIRE_PLAIN | WIRE_JOURNALED, types - WIRE_PLAIN - WIRE_JOURNALED
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    for step in overworld_views:
        message = ("batch", [], [("h", _wire_view(v, False), 0) for v in step], 3, False)
        got = recv.loads(send.dumps(message))[2]
        for (_, a, _), b in zip(got, step, strict=True):
            assert list(a.obs.__dict__) == list(b.obs.__dict__)
            for k, x in vars(b.obs).items():
                if k == "memory":  # journaled: whole, then the updates since
                    for name in ("blocks", "items", "coord", "seen_step"):
                        assert np.array_equal(getattr(a.obs.memory, name), getattr(x, name)), name
                    assert (a.obs.memory.level, a.obs.memory.step) == (x.level, x.step)
                else:
                    assert getattr(a.obs, k) == x, k
                    if isinstance(x, list):
                        assert [type(r) for r in getattr(a.obs, k)] == [type(r) for r in x], k
            assert a.extra["blocks"] is a.obs.blocks and a.own == b.own
