"""Large arrays cross to the worker once, then as changes; the worker always sees the parent's values."""

from __future__ import annotations

import numpy as np
import pytest

from compass.sandbox.wire import ArrayMirrorReceiver, ArrayMirrorSender


class Holder:  # stands in for ALEM's per-agent map memory inside a view
    def __init__(self, n: int = 9) -> None:
        self.blocks = np.full((n, 48, 48), -1, dtype=np.int16)
        self.small = np.zeros(3)


def roundtrip(send: ArrayMirrorSender, recv: ArrayMirrorReceiver, obj):
    data = send.dumps(("batch", obj))
    return recv.loads(data)[1], len(data)


def test_changes_in_place_arrive_and_unchanged_arrays_cost_nothing():
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    h = Holder()
    got, first = roundtrip(send, recv, h)
    assert np.array_equal(got.blocks, h.blocks)
    h.blocks[2, 10:19, 5:16] = 7  # a step's worth of seen tiles
    got, delta = roundtrip(send, recv, h)
    assert np.array_equal(got.blocks, h.blocks)
    got, same = roundtrip(send, recv, h)
    assert np.array_equal(got.blocks, h.blocks)
    assert same < delta < first / 10


def test_mirrors_are_read_only_and_forgotten_when_unused():
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    a, b = Holder(), Holder()
    got, _ = roundtrip(send, recv, [a, b])
    with pytest.raises(ValueError):
        got[0].blocks[0, 0, 0] = 1  # a skill cannot desynchronise the mirror
    roundtrip(send, recv, [a])  # b not sent: forgotten with the next batch
    roundtrip(send, recv, [a])
    assert len(recv._mirrors) == 1 and len(send._sent) == 1
    b.blocks[:] = 3  # sent again in full after it was forgotten
    got, _ = roundtrip(send, recv, [b])
    assert np.array_equal(got[0].blocks, b.blocks)


def test_shape_change_and_views_are_sent_whole():
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    base = np.arange(200 * 200, dtype=np.int32).reshape(200, 200)
    view = base[::2, 1::3]  # not contiguous
    got, _ = roundtrip(send, recv, view)
    assert np.array_equal(got, view)
    base[0, 1] = -5
    got, _ = roundtrip(send, recv, view)
    assert got[0, 0] == -5 and np.array_equal(got, view)
