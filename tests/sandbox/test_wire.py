"""Large arrays cross to the worker once, then as changes; the worker always sees the parent's values."""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass

import numpy as np
import pytest

from compass.core.types import Entity
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


def test_an_array_left_out_of_one_message_still_arrives_in_the_ones_after():
    """A ``reset`` between two batches (or an agent skipped for a step) leaves the arrays out of
    one message; sent again, they must stay mirrored: the worker used to drop them right after
    they arrived, and the next batch then named a mirror it no longer had (the worker died)."""
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    h = Holder()
    roundtrip(send, recv, h)
    recv.loads(send.dumps(("reset", [0])))
    for step in range(3):
        h.blocks[0, 0, step] = step + 1  # a delta, then unchanged, then a delta
        got, _ = roundtrip(send, recv, h)
        assert np.array_equal(got.blocks, h.blocks)
    assert set(recv._mirrors) == set(send._sent)


def test_a_message_in_parts_counts_as_one_message():
    """A batch sent in parts (``more``) names arrays to forget only after its last part, and only
    those the whole batch left out: an agent's arrays are in one part of each batch, never in
    two parts in a row."""
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    a, b, c = Holder(), Holder(), Holder()
    for step in range(3):
        a.blocks[0, 0, step] = b.blocks[1, 1, step] = step + 1
        got_a = recv.loads(send.dumps(("batch", [a]), more=True))[1]
        got_b = recv.loads(send.dumps(("items", [b]), more=True))[1]
        got_c = recv.loads(send.dumps(("items", [c] if step == 0 else [])))[1]
        assert np.array_equal(got_a[0].blocks, a.blocks) and np.array_equal(got_b[0].blocks, b.blocks)
        if step == 0:
            assert np.array_equal(got_c[0].blocks, c.blocks)
    # c was left out of two batches: forgotten on both sides; a and b stay mirrored
    assert set(recv._mirrors) == set(send._sent) == {id(a.blocks), id(b.blocks)}


def test_changes_arrive_bit_for_bit():
    """A change that compares equal as a number (0.0 -> -0.0) still arrives, and an unchanged NaN
    is not sent as a change every step: arrays are compared bit for bit."""
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    a = np.zeros(1024)  # 8 KB: mirrored
    a[5] = np.nan
    roundtrip(send, recv, a)
    a[3] = -0.0
    got, _ = roundtrip(send, recv, a)
    assert np.signbit(got[3]) and got.tobytes() == a.tobytes()
    _, same = roundtrip(send, recv, a)
    a[7] = 1.5
    got, delta = roundtrip(send, recv, a)
    assert got.tobytes() == a.tobytes() and same < delta < 200


def test_shape_change_and_views_are_sent_whole():
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    base = np.arange(200 * 200, dtype=np.int32).reshape(200, 200)
    view = base[::2, 1::3]  # not contiguous
    got, _ = roundtrip(send, recv, view)
    assert np.array_equal(got, view)
    base[0, 1] = -5
    got, _ = roundtrip(send, recv, view)
    assert got[0, 0] == -5 and np.array_equal(got, view)


@dataclass(frozen=True)
class Tagged(Entity):  # not a plain Entity: goes as an object, class and all
    tag: str = ""


def test_views_arrive_equal_with_entities_sent_as_rows():
    from dataclasses import replace

    from compass.core.types import AgentView, OwnUnit

    own = OwnUnit("stalker", 3.0, 4.0, 0.5, 9.0, 6.0, 1, 32.0, 32.0)
    seen = Entity(2, "enemy", "zealot", 5.0, 6.0, 0.2, 0.2, 0.28, np.float32(0.75), 0.5, True, 7)
    relayed = replace(seen, id=3, visible=False, source=1, hops=2, age=4)
    views = [
        AgentView(0, "combat", 9, True, own, (seen, relayed), (0, 1, 8), "", extra={"deaths_seen": ()}),
        AgentView(1, "combat", 9, True, own, (Tagged(**{**relayed.__dict__, "tag": "x"}),), (), ""),
        AgentView(2, "combat", 9, False, own, (), (), ""),
    ]
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    data = send.dumps(("batch", views))
    got = recv.loads(data)[1]
    assert got == views
    for a, b in zip(got, views, strict=True):
        assert [type(e) for e in a.entities] == [type(e) for e in b.entities]
        # same attributes in the same order, same value types: a skill cannot tell the difference
        assert [list(e.__dict__.items()) for e in a.entities] == [
            list(e.__dict__.items()) for e in b.entities
        ]
        assert list(a.__dict__) == list(b.__dict__)
    assert type(got[0].entities[0].health) is np.float32
    assert len(send.dumps(("batch", views[:1]))) < len(pickle.dumps((["x"], "batch", views[:1]), 5))
    # two views sharing one entities tuple: it goes once, as plain pickle would send it
    twin = replace(views[0], agent_id=3)
    one, two = len(send.dumps(("batch", views[:1]))), len(send.dumps(("batch", [views[0], twin])))
    assert two - one < 100
    a, b = recv.loads(send.dumps(("batch", [views[0], twin])))[1]
    assert a.entities == b.entities == views[0].entities


@dataclass(frozen=True)
class Spot:  # a family's small observation record (ALEM: Seen, Mob, CoordSite...)
    name: str
    x: int
    dist: float = 0.0


@dataclass
class SpotObs:  # the family's typed obs holding them, with its map memory
    spots: list[Spot]
    status: dict[str, float]
    memory: Holder | None = None
    empty: list = None  # type: ignore[assignment]


class Bare:  # registered with an empty instance dict: plain pickle sends no state
    pass


def test_registered_observation_types_pickle_to_the_same_bytes_and_arrive_equal():
    from compass.core.types import WIRE_PLAIN, AgentView, OwnUnit, wire_plain
    from compass.sandbox.wire import _Pickler, _reduce_plain

    own = OwnUnit("miner", 3.0, 4.0, 9.0, 4.0, 1.0, 0, 48.0, 48.0)
    spots = [Spot("tree", 3, 1.5), Spot("stone", -2)]
    obs = SpotObs(spots, {"health": 9.0}, Holder(), [Bare()])
    views = [
        AgentView(
            k, "alem", 5, True, own, (), (0, 1), "", obs=obs, extra={"spots": spots, "memory": obs.memory}
        )
        for k in range(2)
    ]
    message = ("batch", [], [("hash", v, 0) for v in views], 3, False)
    wire_plain(Spot, SpotObs, Bare)
    try:
        assert _Pickler(io.BytesIO(), ArrayMirrorSender()).dispatch_table[Spot] is _reduce_plain
        fast = ArrayMirrorSender().dumps(message)
        WIRE_PLAIN.difference_update({Spot, SpotObs, Bare, OwnUnit})
        plain = ArrayMirrorSender().dumps(message)
    finally:
        WIRE_PLAIN.difference_update({Spot, SpotObs, Bare})
        WIRE_PLAIN.add(OwnUnit)
    # the same pickle: what the worker unpickles, and how (keys interned, shared objects shared)
    assert fast == plain
    got = ArrayMirrorReceiver().loads(fast)[2]
    a, b = got[0][1], got[1][1]
    assert (
        (a.obs.spots, a.obs.status) == (spots, obs.status)
        and type(a.obs.spots[0]) is Spot
        and type(a.own) is OwnUnit
        and a.own == own
    )
    assert [list(x.__dict__.items()) for x in a.obs.spots] == [list(x.__dict__.items()) for x in spots]
    assert a.obs is b.obs and a.extra["spots"] is a.obs.spots and a.extra["memory"] is a.obs.memory
    assert np.array_equal(a.obs.memory.blocks, obs.memory.blocks) and list(a.obs.__dict__) == list(
        obs.__dict__
    )
    assert type(a.obs.empty[0]) is Bare and a.obs.empty[0].__dict__ == {}


def test_types_that_pickle_otherwise_are_refused():
    from compass.core.types import WIRE_PLAIN, wire_plain

    @dataclass(frozen=True, slots=True)
    class Slotted:
        x: int

    class Stateful:
        def __getstate__(self):
            return {}

    class Reduced:
        def __reduce__(self):
            return (Reduced, ())

    class Parted(Reduced):
        pass

    for cls in (Slotted, Stateful, Reduced, Parted):
        with pytest.raises(TypeError, match=cls.__qualname__):
            wire_plain(cls)
        assert cls not in WIRE_PLAIN


def test_frames_read_back_whole_and_in_order_whatever_the_reads_return():
    """The worker's and the parent's reader take what ``Connection`` writes: frames of any size
    (a body over 16 KB goes in two writes, over the pipe's capacity in many reads), several in
    one read (the rest is kept), and the end of the pipe as ``EOFError``."""
    import os
    import threading
    from multiprocessing.connection import Connection

    from compass.sandbox.wire import FrameReader

    r, w = os.pipe()
    bodies = [b"a", b"", bytes(range(256)) * 80, b"x" * 300_000, b"tail"]  # 20 KB, 300 KB
    reader = FrameReader(r)
    assert not reader.readable(0.01)
    out = Connection(w, readable=False)

    def write_all() -> None:
        for body in bodies:
            out.send_bytes(body)
        out.close()

    writer = threading.Thread(target=write_all)
    writer.start()
    assert reader.readable(5)
    got = [bytes(reader.read()) for _ in bodies]
    writer.join()
    assert got == bodies
    with pytest.raises(EOFError):
        reader.read()
    os.close(r)

    r, w = os.pipe()
    reader = FrameReader(r)
    os.write(w, b"".join(len(b).to_bytes(4, "big") + b for b in (b"one", b"two")) + b"\x00\x00")
    assert reader.read() == b"one"
    assert reader.readable(0) and reader.read() == b"two"  # kept from the first read
    os.write(w, b"\x00\x05ab")  # the rest of a header, then a body cut short
    os.write(w, b"cde")
    assert reader.read() == b"abcde"
    os.close(w)
    os.close(r)


def test_replies_come_back_as_plain_values_and_nothing_else():
    """The parent reads a worker's replies as builtin values only: a worker that a skill took
    over cannot send back a pickle that runs code in the parent (a class, a function, a reduce)."""
    import os
    import pickle
    from multiprocessing.connection import Connection

    from compass.sandbox.wire import FrameReader

    r, w = os.pipe()
    out, reader = Connection(w, readable=False), FrameReader(r)
    replies = [(0, 5, None, 120), (1, None, ("f: boom", "runtime", "Traceback..."), 3)]
    out.send(replies)
    assert reader.recv() == replies

    class Boom:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    for hostile in (Boom(), np.int64(3), Entity):
        out.send_bytes(pickle.dumps([(0, hostile, None, 1)]))
        with pytest.raises(pickle.UnpicklingError, match="refused"):
            reader.recv()
    out.close()
    os.close(r)


def test_alem_map_memory_arrives_through_its_journal():
    """ALEM's map memory goes whole once, then as the updates it journaled (a step's tiles): the
    worker's copy equals the parent's after every message, also when more updates than the
    journal keeps came between two messages (sent whole again), and stays read-only."""
    from compass.games.alem.obs import AlemMemory

    rng = np.random.default_rng(1)
    memory = AlemMemory(3)
    send, recv = ArrayMirrorSender(), ArrayMirrorReceiver()
    sizes = []
    for step in range(30):
        for _ in range(12 if step % 7 == 6 else int(rng.integers(0, 3))):
            n = 90
            rows, cols = rng.integers(0, 48, n), rng.integers(0, 48, n)
            blocks, coord, items = rng.integers(0, 40, n), rng.integers(-5, 5, n), rng.integers(0, 4, n)
            memory.update(int(rng.integers(0, 3)), rows, cols, blocks, coord, step, items)
        data = send.dumps(("batch", [memory, memory]))
        sizes.append(len(data))
        got = recv.loads(data)[1]
        assert got[0] is got[1] and id(memory) in send._journaled  # one object, as in the parent
        for name in ("blocks", "items", "coord", "seen_step"):
            assert getattr(got[0], name).tobytes() == getattr(memory, name).tobytes(), (step, name)
        assert (got[0].level, got[0].step) == (memory.level, memory.step)
        assert [k for k in vars(got[0])] == [k for k in vars(memory) if not k.startswith("_wire")]
    assert max(sizes[1:6]) < 3_000 < sizes[6] < sizes[0] + 1_000  # changes; whole after 12 updates
    with pytest.raises(ValueError):
        got[0].blocks[0, 0, 0] = 1
    recv.loads(send.dumps(("reset", [0])))
    recv.loads(send.dumps(("reset", [0])))  # left out of two messages: forgotten on both sides
    assert recv._mirrors == {} and send._journaled == {}
