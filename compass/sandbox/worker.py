"""The isolated skill worker: ``python -m compass.sandbox.worker``, spoken to over stdin/stdout.

Started by :class:`~compass.sandbox.isolated.IsolatedExecutor` with a scrubbed environment and
no file descriptors but its pipes. It imports the family's skill API, then locks itself down
before it runs any skill:

* ``RLIMIT_AS`` (memory), ``RLIMIT_FSIZE`` = 0 (no file can grow), ``RLIMIT_NOFILE`` at the
  descriptors it holds (no file or socket can be opened), ``RLIMIT_CORE`` = 0;
* ``RLIMIT_CPU`` re-armed before every batch (CPU seconds for that batch, then ``SIGXCPU``);
* a profiling timer (``ITIMER_PROF``) re-armed before every item: an item that runs the hard
  deadline's CPU seconds (a loop in C the budget cannot see) ends the process by ``SIGPROF``;
* ``SIGINT`` ignored (Ctrl-C is the parent's to handle; the parent stops the worker);
* the imports' objects frozen out of the garbage collector, young collections every
  :data:`GC_YOUNG` objects (a batch's views would otherwise set off full collections).

Protocol (``multiprocessing.connection`` framing, pickles both ways; the parent is trusted, the
worker's replies carry only ints and strings, and the parent unpickles them as builtin values only):

* parent → ``("init", api, seeds, max_ticks, max_seconds, hard_seconds, memory_mb, progress)``;
  worker → ``("ready", pid)``; ``progress`` names a small shared-memory file the worker maps (and closes
  the descriptor of) before it locks down: it writes ``(sequence, index)`` of each item it starts
  (the parent times the wall-clock backstop from the changes it sees there);
* every message after ``init`` is read through :class:`~compass.sandbox.wire.ArrayMirrorReceiver`
  (large numpy arrays in views arrive once, then as changes);
* parent → ``("batch", new_skills, items, cpu_seconds, more)`` where ``new_skills`` are
  ``(code_hash, name, source, filename, line_offset)`` the worker has not seen and ``items`` are
  ``(code_hash, view, lane)``; while ``more`` is true, the batch goes on in parts
  ``("items", items, more)``, each run as it arrives (the parent pickles the next part meanwhile);
  after the last part the worker answers with one list of ``(index, action, error, ticks)`` for
  the whole batch, ``error`` None or ``(message, kind, traceback)``;
* parent → ``("reset", seeds)`` (one per lane: batched episodes, each with its own namespaces
  and ``random``); worker → ``("ok",)``;  parent → ``("exit",)``: exit.
"""

from __future__ import annotations

import gc
import mmap
import os
import resource
import signal
import struct
import sys
from multiprocessing.connection import Connection

GC_YOUNG = 20_000  # objects allocated (and not freed) between young collections; Python's default: 700
#: (sequence number of the item started, its index in the batch). Written without a lock, so the
#: parent may read it half written (``pack_into`` zeroes the record first): no time is kept here, as a
#: torn start time made the parent take an honest item for one hung since boot (CI on 130a5eb).
PROGRESS = struct.Struct("<qq")


def _lock_down(memory_mb: int) -> None:
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # The lowest free descriptor number becomes the limit: nothing new can be opened.
    probe = os.dup(0)
    os.close(probe)
    resource.setrlimit(resource.RLIMIT_NOFILE, (probe, probe))


class _CpuLimit:
    """``RLIMIT_CPU``'s soft limit at the CPU seconds used so far plus a batch's allowance.

    The limit is the same as setting it before every batch; it is only set when that value
    changes (when the seconds used cross a whole second), which saves two system calls a step.
    Nothing else in the worker changes it: skills cannot reach ``resource``.
    """

    def __init__(self) -> None:
        self.soft, self.hard = resource.getrlimit(resource.RLIMIT_CPU)

    def arm(self, seconds: float) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(usage.ru_utime + usage.ru_stime + seconds) + 1
        if self.hard != resource.RLIM_INFINITY:
            soft = min(soft, self.hard)
        if soft != self.soft:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, self.hard))
            self.soft = soft


def serve(inp: Connection, out: Connection) -> None:
    """Answer the parent until it says goodbye or goes away."""
    from compass.sandbox.runtime import SkillExecutor, compile_skill
    from compass.sandbox.wire import ArrayMirrorReceiver, FrameReader

    op, api, seed, max_ticks, max_seconds, hard_seconds, memory_mb, progress_path = inp.recv()
    assert op == "init", op
    # The parent's progress page: the index of the item running now, so that when this process
    # hangs in C the parent knows whose skill it was (replies go in one message per batch).
    fd = os.open(progress_path, os.O_RDWR)
    progress = mmap.mmap(fd, PROGRESS.size)
    os.close(fd)
    note = f"memory limit ({memory_mb} MB) exceeded"
    executor = SkillExecutor(api, seed=seed, max_ticks=max_ticks, max_seconds=max_seconds, memory_note=note)
    compiled: dict = {}
    wire = ArrayMirrorReceiver()
    frames = FrameReader(inp.fileno())  # after init: ``recv`` above read exactly its own frame
    cpu = _CpuLimit()
    seq = 1
    replies: list = []  # of the batch being run (it may come in parts)
    # What is alive now (the API's modules, the executor) lives as long as the process: out of the
    # collector's sight, so full collections do not walk it. And young collections only every
    # GC_YOUNG objects: at the default 700, unpickling a batch of views (~300 objects each) ran
    # several collections, each moving the views still in use to an older generation, and full
    # collections followed every few batches (ALEM, 16 episodes a batch: ~10% of the worker's CPU).
    gc.freeze()
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    _lock_down(memory_mb)
    out.send(("ready", os.getpid()))
    while True:
        try:
            msg = wire.loads(frames.read())
        except EOFError:
            return
        if msg[0] == "exit":
            return
        if msg[0] == "reset":
            executor.reset_lanes(msg[1])
            out.send(("ok",))
            continue
        if msg[0] == "batch":
            _, new_skills, items, cpu_seconds, more = msg
            for code_hash, name, source, filename, line_offset in new_skills:
                compiled[code_hash] = compile_skill(source, name, "", filename, line_offset)
            cpu.arm(cpu_seconds)
            replies = []
        else:  # ("items", items, more): the next part of the batch begun above
            _, items, more = msg
        items.reverse()
        while items:
            # Popped: each view is freed once it has run, and the objects alive stay few.
            code_hash, view, lane = items.pop()
            k = len(replies)  # the item's index in the whole batch
            PROGRESS.pack_into(progress, 0, seq, k)
            seq += 1
            # SIGPROF's default action ends the process: nothing a skill runs can catch it.
            signal.setitimer(signal.ITIMER_PROF, hard_seconds)
            try:
                r = executor.run(compiled[code_hash], view, lane)
                err = None if r.error is None else (str(r.error), r.error.kind, r.error.traceback)
                reply = (k, r.action, err, r.ticks)
            except MemoryError:
                reply = (k, None, (f"{note} outside the skill", "resource", ""), 0)
            except BaseException as e:  # a fault of the API itself on a hostile input; stay up
                reply = (k, None, (f"skill API failed: {type(e).__name__}", "runtime", ""), 0)
            replies.append(reply)
        signal.setitimer(signal.ITIMER_PROF, 0)  # reading and pickling are not an item's
        if not more:
            out.send(replies)


def main() -> None:
    """Entry point: move the reply channel off fd 1 so stray output cannot corrupt it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past RLIMIT_FSIZE fails instead of killing
    reply_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    sys.stdout = sys.stderr = open(1, "w", closefd=False)  # noqa: SIM115 - fd 1 is /dev/null now
    serve(Connection(0, writable=False), Connection(reply_fd, readable=False))


if __name__ == "__main__":
    main()
