"""The parent-to-worker wire format: pickles, with large numpy arrays sent once and then as changes,
and each view's entities as rows of values.

A view can carry large arrays that change little between steps (ALEM's per-agent map memory:
~190 KB per agent, of which a step changes the ~100 tiles in sight; it is journaled now, below).
Pickling them whole every step cost ~10 ms a step for three agents. The parent keeps a copy of each array as last sent to
a worker; the worker keeps a mirror; a step sends only the elements that changed. Arrays are
keyed by the parent object's ``id`` (the parent holds a reference, so the id is not reused while
it is mirrored); arrays that two messages in a row leave out are forgotten on both sides.

Entities are most of a view (SMAX: ~5 a view, 16 fields each) and a batch of episodes sends
hundreds a step. Pickled as objects, each costs a ``__reduce_ex__`` and a keyed state dict;
sent as a tuple of field values and rebuilt with the same fields in the same order, SMAX 5v5
views cost ~20% less CPU to pickle, ~10% less to unpickle and ~20% fewer bytes (the worker gets
equal views).
A family's observation types (ALEM: ~25 small records a view, the ``ObsData`` holding them)
pickle by their instance dicts; registered with
:func:`compass.core.types.wire_plain`, they skip ``__reduce_ex__``'s search for hooks they do not
have: the same bytes (so the worker unpickles them as before) for ~60 % of the CPU.
The hooks are in the pickler's ``dispatch_table``, looked up by exact type in C, so no other
object costs a Python call.
A type registered with :func:`compass.core.types.wire_journaled` (ALEM's map memory) goes whole
once, then as the changes it journaled since the sender last sent it (a step's ~100 tiles),
made on the worker's copy: comparing its arrays with those last sent read ~190 KB an agent every
step, out of cache after the env's step.

Messages are framed as ``multiprocessing.connection`` frames them; :class:`FrameReader` reads one
in a single system call where ``Connection`` takes two (and a selector per ``poll``).
"""

from __future__ import annotations

import copyreg
import io
import math
import operator
import os
import pickle
import select
import struct
from dataclasses import fields
from typing import Any

import numpy as np

from compass.core.types import WIRE_JOURNALED, WIRE_PLAIN, AgentView, Entity

MIN_BYTES = 4096  # smaller arrays are pickled as they are
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # item size -> same-width unsigned type
FRAME = struct.Struct("!i")  # multiprocessing.connection's length header (-1: a "!Q" length follows)
_LONG_FRAME = struct.Struct("!Q")
_READ = 65536  # a pipe's default capacity: one read takes what one write of a message put there


class ArrayMirrorSender:
    """Parent side: ``dumps(message)`` with large arrays as full copies, deltas or "unchanged"."""

    def __init__(self) -> None:
        # id -> (live array, copy as sent, its bytes)
        self._sent: dict[int, tuple[np.ndarray, np.ndarray, bytes]] = {}
        self._journaled: dict[int, tuple[Any, int]] = {}  # id -> (object, its wire_version as sent)
        self._used: set[int] = set()
        self._stale: list[int] = []  # keys the previous message left out (while a message is in parts)
        self._open = False  # a message in parts has begun: its arrays are forgotten after its last

    def dumps(self, message: tuple, more: bool = False) -> bytes:
        """``message`` pickled, then the list of array keys the worker may forget, pickled after it.

        An array is forgotten when two messages in a row leave it out. ``more``: another part of
        the same message follows (a batch sent in parts, so the worker runs the first items while
        the rest are pickled); the parts count as one message, and only the last names arrays to
        forget. The list is made after the message is pickled, so it never names an array the
        message sends: the worker drops the keys after rebuilding the message, and an array left
        out of one message (a ``reset`` between two batches, an agent skipped for a step) and sent
        again in the next would otherwise be dropped right after it arrived, and the batch after
        that would name a mirror the worker no longer has.
        """
        if not self._open:
            # left out of the previous message
            self._stale = [k for k in (*self._sent, *self._journaled) if k not in self._used]
            self._used = set()
        buf = io.BytesIO()
        _Pickler(buf, self).dump(message)
        self._open = more
        forget = [] if more else [k for k in self._stale if k not in self._used]
        for k in forget:
            # after pickling: a key still held cannot be another object's id
            self._sent.pop(k, None)
            self._journaled.pop(k, None)
        pickle.dump(forget, buf, pickle.HIGHEST_PROTOCOL)
        return buf.getvalue()

    def _reduce(self, obj: np.ndarray) -> Any:
        if obj.nbytes < MIN_BYTES or obj.dtype.hasobject:
            return obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)  # what pickle does without us
        return _mirrored, self._pid(obj)

    def _reduce_journaled(self, obj: Any) -> Any:
        """A :func:`~compass.core.types.wire_journaled` object: its changes since this sender last
        sent it, or the object whole (its arrays as bytes, not mirrored: the worker's copy changes
        through its journal, not through the array mirror)."""
        key = id(obj)
        self._used.add(key)
        version = obj.wire_version()
        entry = self._journaled.get(key)
        self._journaled[key] = (obj, version)  # holds obj: the key is not reused while mirrored
        if entry is not None and entry[0] is obj:
            changes = obj.wire_since(entry[1])
            if changes is not None:
                return _journaled, ("changes", key, changes)
        state, arrays = {}, {}
        for name, value in obj.__dict__.items():
            if name.startswith("_wire"):
                continue
            state[name] = value  # (an array's entry keeps its place in the dict, filled in below)
            if type(value) is np.ndarray:
                state[name] = None
                arrays[name] = (value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
        return _journaled, ("whole", key, type(obj), state, arrays)

    def _pid(self, obj: np.ndarray) -> tuple:
        key = id(obj)
        self._used.add(key)
        entry = self._sent.get(key)
        if entry is not None and entry[1].shape == obj.shape and entry[1].dtype == obj.dtype:
            # Unchanged arrays are common: comparing bytes with those last sent costs a copy and
            # a memcmp, numpy's elementwise != five to twenty times that (int16: ~20 µs for 41 KB).
            raw = obj.tobytes()
            if raw == entry[2]:
                return ("same", key)
            bits = _BITS.get(obj.dtype.itemsize)
            if bits is not None:
                # Compared as unsigned integers of the same width: bit for bit, so a float's
                # -0.0 after 0.0 (equal as floats) is a change, and an unchanged NaN is not.
                cur, last = obj.reshape(-1), entry[1].reshape(-1)
                changed = np.flatnonzero(cur.view(bits) != last.view(bits))
                if changed.size * 4 < cur.size:
                    values = cur[changed]
                    last[changed] = values
                    # ``raw`` is the C-order bytes of obj, which last now equals: no second copy
                    self._sent[key] = (obj, entry[1], raw)
                    return ("delta", key, changed.astype(np.int64).tobytes(), values.tobytes())
        raw = np.ascontiguousarray(obj).tobytes()
        self._sent[key] = (obj, np.array(obj, order="C", copy=True), raw)
        return ("full", key, obj.dtype.str, obj.shape, raw)


class _Pickler(pickle.Pickler):
    """Plain pickle but for exact ``np.ndarray`` (mirrored), ``AgentView`` (entity rows) and the
    types registered with :func:`compass.core.types.wire_plain` (the same bytes, sooner)."""

    def __init__(self, file: io.BytesIO, sender: ArrayMirrorSender) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        table: dict[type, Any] = dict.fromkeys(WIRE_PLAIN, _reduce_plain)
        table.update(dict.fromkeys(WIRE_JOURNALED, sender._reduce_journaled))
        table.update({np.ndarray: sender._reduce, AgentView: self._reduce_view})
        self.dispatch_table = table
        self._rows: dict[int, tuple[tuple, ...]] = {}  # id(entities) -> rows, for this message

    def _reduce_view(self, view: AgentView) -> Any:
        """A view with its entities as rows of field values (when they are all plain ``Entity``)."""
        state = dict(view.__dict__)
        entities = state.get("entities")
        if type(entities) is not tuple or not set(map(type, entities)) <= {Entity}:
            return view.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
        state["entities"] = None  # keeps its place in the dict: the copy's attributes keep their order
        # Views that share one entities tuple share one rows tuple: pickle sends it once, as it
        # would the tuple of objects.
        rows = self._rows.get(id(entities))
        if rows is None:
            rows = self._rows[id(entities)] = tuple(map(_entity_row, entities))
        return _view_from_rows, (type(view), state, rows)


def _reduce_plain(obj: Any, _newobj=copyreg.__newobj__) -> tuple:
    """What ``object.__reduce_ex__`` returns for an object pickled by its instance dict, without
    its search for hooks the class does not have (:func:`compass.core.types.wire_plain`)."""
    return _newobj, (type(obj),), obj.__dict__ or None


_ENTITY_FIELDS = tuple(f.name for f in fields(Entity))
_entity_row = operator.attrgetter(*_ENTITY_FIELDS)


def _view_from_rows(cls: type, state: dict[str, Any], rows: tuple[tuple, ...]) -> AgentView:
    """Rebuild a view sent by :func:`_reduce_view`: its entities as ``Entity`` objects again."""
    view = cls.__new__(cls)
    state["entities"] = tuple(map(_entity_from_row, rows))
    view.__dict__.update(state)  # as unpickling does: straight into the dict, past descriptors
    return view


def _entity_from_row(row: tuple, _new=object.__new__, _cls=Entity, _names=_ENTITY_FIELDS) -> Entity:
    entity = _new(_cls)
    entity.__dict__.update(zip(_names, row, strict=True))  # frozen: no __setattr__; as unpickling does
    return entity


class ArrayMirrorReceiver:
    """Worker side: ``loads(data)`` rebuilds the message from its mirrors (read-only arrays)."""

    def __init__(self) -> None:
        self._mirrors: dict[int, Any] = {}  # arrays, and journaled objects

    def loads(self, data: bytes) -> Any:
        global _RECEIVER
        _RECEIVER = self
        stream = io.BytesIO(data)
        try:
            message = pickle.load(stream)
        finally:
            _RECEIVER = None
        for k in pickle.load(stream):
            self._mirrors.pop(k, None)
        return message

    def load_array(self, *pid: Any) -> np.ndarray:
        kind, key = pid[0], pid[1]
        if kind == "full":
            _, _, dtype, shape, raw = pid
            arr = np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape).copy()
        else:
            arr = self._mirrors[key]
            if kind == "delta":
                idx = np.frombuffer(pid[2], dtype=np.int64)
                arr.flags.writeable = True
                arr.reshape(-1)[idx] = np.frombuffer(pid[3], dtype=arr.dtype)
        # A skill must not change the mirror: the next step's delta assumes the parent's copy.
        arr.flags.writeable = False
        self._mirrors[key] = arr
        return arr

    def load_journaled(self, kind: str, key: int, *rest: Any) -> Any:
        """A journaled object sent whole, or its mirror with the changes made (``wire_apply``)."""
        if kind == "whole":
            cls, state, arrays = rest
            obj = cls.__new__(cls)
            obj.__dict__.update(state)
            for name, (dtype, shape, raw) in arrays.items():
                arr = np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape).copy()
                arr.flags.writeable = False  # as mirrored arrays: a skill must not change them
                obj.__dict__[name] = arr
        else:
            obj = self._mirrors[key]
            obj.wire_apply(rest[0])
        self._mirrors[key] = obj
        return obj


_RECEIVER: ArrayMirrorReceiver | None = None  # the receiver whose loads() is running


def _mirrored(*pid: Any) -> np.ndarray:
    """Called by the unpickler for each mirrored array (pickled as a reference to this function)."""
    if _RECEIVER is None:
        raise pickle.UnpicklingError("a mirrored array outside ArrayMirrorReceiver.loads")
    return _RECEIVER.load_array(*pid)


def _journaled(*pid: Any) -> Any:
    """Called by the unpickler for each journaled object (:meth:`ArrayMirrorSender._reduce_journaled`)."""
    if _RECEIVER is None:
        raise pickle.UnpicklingError("a journaled object outside ArrayMirrorReceiver.loads")
    return _RECEIVER.load_journaled(*pid)


def frame_header(size: int) -> bytes:
    """The length header ``multiprocessing.connection`` puts before a message of ``size`` bytes."""
    return FRAME.pack(size) if size <= 0x7FFFFFFF else FRAME.pack(-1) + _LONG_FRAME.pack(size)


class FrameReader:
    """Reads ``multiprocessing.connection`` frames from a pipe, usually in one ``read``.

    ``Connection.recv_bytes`` reads the header and the body with two system calls, and
    ``Connection.poll`` builds a selector each call; a step's round trip pays for both on each
    side. Bytes read past a frame are kept for the next one.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buf: bytes | bytearray = b""
        self._poll: select.poll | None = None

    def _complete(self) -> tuple[int, int] | None:
        """(start, end) of the first whole frame in the buffer, if there is one."""
        buf = self._buf
        if len(buf) < FRAME.size:
            return None
        (n,) = FRAME.unpack_from(buf)
        start = FRAME.size
        if n == -1:
            if len(buf) < FRAME.size + _LONG_FRAME.size:
                return None
            (n,) = _LONG_FRAME.unpack_from(buf, FRAME.size)
            start += _LONG_FRAME.size
        return (start, start + n) if len(buf) >= start + n else None

    def readable(self, timeout: float) -> bool:
        """Whether a frame (or the end of the pipe) can be read within ``timeout`` seconds."""
        if self._complete() is not None:
            return True
        if self._poll is None:
            self._poll = select.poll()
            self._poll.register(self.fd, select.POLLIN)
        return bool(self._poll.poll(max(0, math.ceil(timeout * 1000))))

    def read(self) -> bytes | bytearray:
        """The next frame's body (a ``bytearray`` when it took several reads); ``EOFError`` when
        the pipe ends first."""
        while (span := self._complete()) is None:
            chunk = os.read(self.fd, _READ)
            if not chunk:
                raise EOFError
            if not self._buf:
                self._buf = chunk  # the usual case: the whole frame in one read, no copy
            else:
                if type(self._buf) is bytes:
                    self._buf = bytearray(self._buf)  # a long message: grow in place
                self._buf += chunk
        start, end = span
        body, self._buf = self._buf[start:end], self._buf[end:]
        return body

    def recv(self) -> Any:
        """The next frame unpickled as builtin values only (a worker's replies: tuples, lists,
        ints, strings, None): a class or function named in it is refused with
        ``pickle.UnpicklingError``, so a worker that a skill took over cannot make the parent
        run code by what it sends back."""
        return _BuiltinsOnly(io.BytesIO(self.read())).load()


class _BuiltinsOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused: a reply naming {module}.{name}"[:200])
