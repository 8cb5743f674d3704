"""Isolated skill execution, the default: a pool of long-lived, locked-down worker processes.

Each step's skill calls of all agents go to the worker(s) as one batch (one round trip per step,
not per agent); the worker answers item by item. A batch of batched episodes' items goes in
parts the worker runs as they arrive when asked (``parts_from``), so the parent pickles while it
works. A worker whose item runs past the hard deadline (CPU seconds, so a loaded machine cannot
make an honest skill miss it), that does not answer at all within the wall-clock backstop, or
that dies (``RLIMIT_AS``, ``RLIMIT_CPU``, a crash in C), is killed and replaced by a warm spare:
the agent whose skill was running gets a :class:`SkillError` and the default action, the agents
before it keep their results, and the agents after it are run again on the new worker. Workers
start from a scrubbed environment (no API keys) with only their pipes open; see
:mod:`compass.sandbox.worker` for the limits they run under.

With one worker (the default) results equal the in-process executor's, ``random`` included.
With more, agents are pinned to workers (``agent_id % workers``) and each worker has its own
seeded ``random`` stream.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from compass.core.types import AgentView
from compass.sandbox.guards import DEFAULT_MAX_SECONDS, DEFAULT_MAX_TICKS, SkillError
from compass.sandbox.runtime import CompiledSkill, SkillResult, load_api
from compass.sandbox.wire import ArrayMirrorSender, FrameReader, frame_header
from compass.sandbox.worker import PROGRESS

__all__ = ["IsolatedExecutor", "WorkerStartError", "worker_env"]

_SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None  # memory-backed where Linux has it

# Variables a worker may see; everything else (API keys, tokens, cloud credentials) stays behind.
ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONHASHSEED", "SYSTEMROOT")
STARTUP_SECONDS = 120.0  # importing the API on a loaded two-core machine can take a while
#: Wall-clock seconds, beyond the hard deadline, that a worker may go without answering or starting
#: another item before it is taken for hung although the CPU deadline has not ended it. Skills cannot
#: sleep or wait on anything, so only a stalled process (swapping, a paused machine) comes near it.
WALL_BACKSTOP_SECONDS = 30.0
PARTS_FROM = 8  # with parts on, a batch of this many items or more goes in parts (IsolatedExecutor._send)

#: ``wait(ready)``: returns once ``ready(timeout)`` is true, raises ``TimeoutError`` when the worker
#: is past its deadline (:meth:`IsolatedExecutor._watch`)
Wait = Callable[[Callable[[float], bool]], None]


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _wire_view(view: AgentView, with_text: bool) -> AgentView:
    """The view as a worker gets it: no callables, and the text only for a skill that reads it
    (the worker compiles the same source, so it calls that skill with the same argument)."""
    out = object.__new__(type(view))
    out.__dict__.update(view.__dict__)
    out.__dict__.update(render=None, text_fn=None, text=view.text if with_text else "")
    return out


class WorkerStartError(RuntimeError):
    """A worker could not start: the sandbox itself is broken (not a skill's fault)."""


def worker_env() -> dict[str, str]:
    """The scrubbed environment of a worker: allow-listed variables plus the import path."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p or ".") for p in sys.path if p is not None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # One BLAS thread: no thread pool reserving address space under RLIMIT_AS.
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    return env


@dataclass
class _Worker:
    proc: subprocess.Popen
    send: Connection
    recv: Connection
    progress: mmap.mmap
    progress_path: str
    reader: FrameReader  # what comes back on ``recv``
    ready: bool = False
    known: set[str] = field(default_factory=set)  # code hashes this worker has compiled
    sent_seq: int = 0  # the worker's item counter when the current batch was sent
    wire: ArrayMirrorSender = field(default_factory=ArrayMirrorSender)  # large arrays as deltas
    failed: OSError | None = None  # why a later part of the current batch could not be sent
    _out: select.poll | None = None

    def post(self, message: tuple, wait: Wait, more: bool = False) -> None:
        """Send one message after ``init`` (the worker reads them all through its mirror);
        ``more``: a part of a batch that goes on (:meth:`ArrayMirrorSender.dumps`).

        One write where the pipe has room, framed as ``Connection.send_bytes`` frames it: that
        writes the length and a body over 16 KB (a batch of episodes' views) separately, so the
        worker, woken by the first write, would go back to sleep until the second. The pipe does
        not block (set in ``_spawn``): when it is full, ``wait`` decides how long the worker may
        take to read, so a worker stuck in a skill of an earlier part cannot hang the parent here.
        """
        data = self.wire.dumps(message, more)
        view = memoryview(frame_header(len(data)) + data)
        fd = self.send.fileno()
        while view:
            try:
                view = view[os.write(fd, view) :]  # a signal can cut a write short
            except BlockingIOError:
                wait(self.writable)

    def writable(self, timeout: float) -> bool:
        """Whether the pipe to the worker takes more within ``timeout`` seconds."""
        if self._out is None:
            self._out = select.poll()
            self._out.register(self.send.fileno(), select.POLLOUT)
        return bool(self._out.poll(max(0, math.ceil(timeout * 1000))))

    def started(self) -> tuple[int, int]:
        """(sequence, index) of the item the worker started last; possibly half written."""
        return PROGRESS.unpack_from(self.progress, 0)


_SIGNALS = {signal.SIGKILL: "killed", signal.SIGXCPU: "CPU limit", signal.SIGSEGV: "crashed (SIGSEGV)"}


class IsolatedExecutor:
    """Runs skills in locked-down worker processes; same interface as ``SkillExecutor``.

    ``hard_seconds`` (default twice the budget plus 0.5) is the CPU time one item may use before
    the worker's profiling timer ends it: the budget stops Python-level loops first; this stops a
    loop in C. Both count CPU time, not wall time, so whether a skill fails does not depend on how
    busy the machine is (same seed, same trace). ``wall_seconds`` bounds a worker that stops
    answering without using CPU.
    """

    def __init__(
        self,
        api: str,
        seed: int = 0,
        max_ticks: int = DEFAULT_MAX_TICKS,
        max_seconds: float = DEFAULT_MAX_SECONDS,
        memory_mb: int = 1024,
        workers: int = 1,
        hard_seconds: float | None = None,
        spare: bool = True,
        parts_from: int | None = None,
    ) -> None:
        if not isinstance(api, str):
            raise TypeError("an isolated executor takes the API module's dotted path")
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.api = load_api(api)
        self.seed = seed
        self._lane_seeds: list[int] = [seed]  # one per lane (reset_lanes); one lane by default
        self._init = (api, max_ticks, max_seconds, memory_mb)
        # The worker's own budget fires first for Python-level loops; this catches C-level hangs.
        self.hard_seconds = hard_seconds if hard_seconds is not None else 2 * max_seconds + 0.5
        self.restarts = 0
        self.parts_from = parts_from  # None: every batch in one message
        self._spare_on = spare
        self._spare: _Worker | None = None
        self._workers = [self._spawn(i) for i in range(workers)]
        if spare:
            self._spare = self._spawn(0)

    @property
    def wall_seconds(self) -> float:
        """The wall-clock backstop: the hard deadline plus :data:`WALL_BACKSTOP_SECONDS`."""
        return self.hard_seconds + WALL_BACKSTOP_SECONDS

    # --- processes -------------------------------------------------------------------------------

    def _spawn(self, index: int) -> _Worker:
        with warnings.catch_warnings():
            # JAX warns on any fork; this child runs no Python before exec, so nothing can deadlock.
            warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
            proc = self._popen()
        fd, path = tempfile.mkstemp(prefix="compass-progress-", dir=_SHM_DIR)
        os.ftruncate(fd, PROGRESS.size)
        progress = mmap.mmap(fd, PROGRESS.size)
        os.close(fd)
        recv = Connection(os.dup(proc.stdout.fileno()), writable=False)
        w = _Worker(
            proc,
            Connection(os.dup(proc.stdin.fileno()), readable=False),
            recv,
            progress,
            path,
            FrameReader(recv.fileno()),
        )
        proc.stdin.close()
        proc.stdout.close()
        api, max_ticks, max_seconds, memory_mb = self._init
        init = (
            "init",
            api,
            self._seeds_of(index),
            max_ticks,
            max_seconds,
            self.hard_seconds,
            memory_mb,
            path,
        )
        w.send.send(init)
        os.set_blocking(w.send.fileno(), False)  # see _Worker.post
        return w

    @staticmethod
    def _popen() -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-B", "-m", "compass.sandbox.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=worker_env(),
            cwd=tempfile.gettempdir(),
            close_fds=True,
            start_new_session=True,  # Ctrl-C in the terminal goes to the parent, which stops the workers
        )

    def _seeds_of(self, index: int) -> list[int]:
        """Worker ``index``'s seed of each lane (each worker has its own stream per lane)."""
        return [seed + 1_000_003 * index for seed in self._lane_seeds]

    def _wait_ready(self, w: _Worker) -> None:
        if w.ready:
            return
        try:
            if w.reader.readable(STARTUP_SECONDS):
                msg = w.reader.recv()
                if msg[0] == "ready":
                    w.ready = True
                    _unlink(w.progress_path)  # mapped on both sides; the name is no longer needed
                    return
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        self._kill(w)
        raise WorkerStartError(
            f"skill worker did not start (exit code {w.proc.returncode}); "
            f"try: {sys.executable} -m compass.sandbox.worker"
        )

    def _kill(self, w: _Worker) -> None:
        with contextlib.suppress(ProcessLookupError):
            w.proc.kill()
        w.proc.wait()
        _unlink(w.progress_path)
        for conn in (w.send, w.recv):
            with contextlib.suppress(OSError):
                conn.close()

    def _replace(self, index: int) -> None:
        """Kill worker ``index`` and put the warm spare (or a fresh worker) in its place."""
        self._kill(self._workers[index])
        self.restarts += 1
        fresh = self._spare if self._spare is not None and self._spare.proc.poll() is None else None
        if fresh is not None:
            # The spare was seeded as worker 0 with the seeds of when it started.
            fresh.post(("reset", self._seeds_of(index)), self._patient)
            self._wait_ready(fresh)
            fresh.reader.recv()
        self._workers[index] = fresh or self._spawn(index)
        self._spare = self._spawn(0) if self._spare_on else None

    # --- running ---------------------------------------------------------------------------------

    def run(self, skill: CompiledSkill, view: AgentView) -> SkillResult:
        """Like ``SkillExecutor.run``; a dead or stuck worker becomes a SkillError and is replaced."""
        return self.run_batch([(skill, view)])[0]

    def run_batch(
        self, items: Sequence[tuple[CompiledSkill, AgentView]], lanes: Sequence[int] | None = None
    ) -> list[SkillResult]:
        """Run all (skill, view) calls of one step: one message per worker, answers streamed back
        (item ``k`` in lane ``lanes[k]``, default lane 0: batched episodes share the round trip)."""
        results: list[SkillResult | None] = [None] * len(items)
        self._item_lanes = list(lanes) if lanes is not None else [0] * len(items)
        n = len(self._workers)
        groups: dict[int, list[int]] = {}
        for k, (_, view) in enumerate(items):
            groups.setdefault(view.agent_id % n if n > 1 else 0, []).append(k)
        for w_index, ks in groups.items():
            self._send(w_index, ks, items)
        for w_index, ks in groups.items():
            self._collect(w_index, ks, items, results)
        return results  # type: ignore[return-value]

    def _send(self, w_index: int, ks: list[int], items: Sequence[tuple[CompiledSkill, AgentView]]) -> None:
        """Send items ``ks`` to worker ``w_index``: in one message, or with ``parts_from`` set
        (e.g. :data:`PARTS_FROM`), a batch of that many items or more (batched episodes) in parts
        of 1, 2, 4, ... items.

        The worker runs each part as it arrives while the parent pickles the next: pickling a
        view costs a third to a fifth of rebuilding and running it, so after the first item the
        worker is not kept waiting, and where a second core is free the parent's pickling of all
        but the first part overlaps the worker's work (one message has the worker start only
        after the last view is pickled). Each part costs a write and a read more, so a single
        episode's few items go in one message. Off unless asked: where no second core is free
        (the shared development machine) the parts cost 5-10 % more CPU and save no time, so runs
        ask only where one is (``RunConfig.sandbox_parts_from``'s ``auto``,
        :func:`compass.sandbox.executors.resolve_parts_from`).
        A part that cannot be sent (the worker died or is stuck on an earlier item) is left for
        :meth:`_collect`, which finds out whose skill it was.
        """
        batch = [items[k] for k in ks]
        payload = [
            (skill.code_hash, _wire_view(view, skill.reads_text), self._item_lanes[k])
            for k, (skill, view) in zip(ks, batch, strict=True)
        ]
        split = self.parts_from is not None and len(payload) >= self.parts_from
        parts, size = [], 1 if split else len(payload)
        while payload:
            parts.append(payload[:size])
            payload, size = payload[size:], size * 2
        cpu = math.ceil(self.hard_seconds * len(batch)) + 1
        for attempt in range(2):
            w = self._workers[w_index]
            self._wait_ready(w)
            if w.proc.poll() is not None:
                # It died between steps (nothing of ours ran): replace it, blame nobody. A pipe to a
                # dead process may still accept the message, so the send below would not tell.
                if attempt:
                    raise WorkerStartError("skill workers keep dying before they get any work")
                self._replace(w_index)
                continue
            new = [
                (skill.code_hash, skill.name, skill.source, skill.filename, skill.line_offset)
                for skill in {skill.code_hash: skill for skill, _ in batch}.values()
                if skill.code_hash not in w.known
            ]
            w.sent_seq = w.started()[0]
            w.failed = None
            try:
                w.post(("batch", new, parts[0], cpu, len(parts) > 1), self._patient, more=len(parts) > 1)
            except OSError:
                if attempt:
                    raise WorkerStartError("skill workers keep dying before they get any work") from None
                self._replace(w_index)  # it died between steps: nothing ran, nobody is to blame
                continue
            w.known.update(code_hash for code_hash, *_ in new)
            wait = self._watching(w)
            for i in range(1, len(parts)):
                more = i + 1 < len(parts)
                try:
                    w.post(("items", parts[i], more), wait, more=more)
                except OSError as exc:  # TimeoutError included: it hangs on an item sent before
                    w.failed = exc
                    return
            return

    def _collect(
        self,
        w_index: int,
        ks: list[int],
        items: Sequence[tuple[CompiledSkill, AgentView]],
        results: list[SkillResult | None],
    ) -> None:
        w = self._workers[w_index]
        start = time.perf_counter()
        try:
            if w.failed is not None:
                raise w.failed
            replies = self._await(w)
        except (TimeoutError, EOFError, OSError, pickle.UnpicklingError) as exc:
            stalled = isinstance(exc, TimeoutError)
            refused = isinstance(exc, pickle.UnpicklingError)
            seq, index = w.started()  # stable now: the worker is dead, stalled, or done with the batch
            culprit = index if seq > w.sent_seq else 0
            if not stalled and not refused:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    w.proc.wait(timeout=2)  # reap it to learn what ended it
            # Its profiling timer ended the worker: the item ran past the hard deadline.
            over_cpu = w.proc.returncode == -signal.SIGPROF
            hung = stalled or over_cpu
            why = (
                f"no answer within {self.wall_seconds:.0f} s (stalled?)"
                if stalled
                else f"no answer within {self.hard_seconds:.2f} s of CPU (stuck in C code?)"
                if over_cpu
                else f"its worker sent a reply that is not plain values ({exc})"
                if refused
                else f"its worker died ({self._death(w)})"
            )
            self._replace(w_index)
            k = ks[culprit]
            skill, view = items[k]
            error = SkillError(
                f"{skill.name}: {why}; worker replaced", skill.name, "budget" if hung else "resource"
            )
            results[k] = SkillResult(
                int(self.api.default_action(view)), error, 0, time.perf_counter() - start
            )
            # Replies come in one message per batch: the other agents run again on the new worker.
            rest = [j for j in ks if j != k]
            if rest:
                self._send(w_index, rest, items)
                self._collect(w_index, rest, items, results)
            return
        elapsed = time.perf_counter() - start
        for k_local, action, err, ticks in replies:
            k = ks[k_local]
            skill, view = items[k]
            error = None if err is None else SkillError(err[0], skill.name, err[1], err[2])
            if action is None:
                action = self.api.default_action(view)
            results[k] = SkillResult(int(action), error, ticks, elapsed)

    def _await(self, w: _Worker) -> list:
        """The worker's replies to the batch just sent; TimeoutError when one item overruns."""
        self._watch(w, w.reader.readable)
        return w.reader.recv()

    def _watch(self, w: _Worker, ready: Callable[[float], bool]) -> None:
        """Until ``ready(timeout)`` (a reply to read, room in the pipe) while worker ``w`` runs the
        current batch; TimeoutError when for the wall-clock backstop it neither gets ready nor starts
        another item (an item past the hard deadline in CPU time ends the worker itself).

        Timed by the parent's clock from the last change it saw on the progress page, which the
        worker writes without a lock: a half-written record can only look like a change, so it can
        delay the backstop by one period but never trigger it (a start time read half written once
        made an honest item look hung since boot)."""
        seen = w.started()
        deadline = time.monotonic() + self.wall_seconds
        while not ready(max(deadline - time.monotonic(), 0.0)):
            now = w.started()
            if now == seen:
                raise TimeoutError("skill worker neither answers nor starts another item")
            seen, deadline = now, time.monotonic() + self.wall_seconds

    def _watching(self, w: _Worker) -> Wait:
        return lambda ready: self._watch(w, ready)

    def _patient(self, ready: Callable[[float], bool]) -> None:
        """A worker between batches reads what it is sent, within the wall-clock backstop."""
        if not ready(self.wall_seconds):
            raise TimeoutError("skill worker does not read its pipe")

    @staticmethod
    def _death(w: _Worker) -> str:
        code = w.proc.returncode
        if code is not None and code < 0:
            return _SIGNALS.get(-code, f"signal {-code}")
        return f"exit code {code}"

    def reset(self, seed: int) -> None:
        """Forget every namespace and reseed ``random`` in every worker (no restart)."""
        self.reset_lanes([seed])

    def reset_lanes(self, seeds: Sequence[int]) -> None:
        """One lane per seed in every worker, each as :meth:`reset` to that seed would leave it."""
        self.seed, self._lane_seeds = seeds[0], list(seeds)
        for i, w in enumerate(self._workers):
            self._wait_ready(w)
            w.post(("reset", self._seeds_of(i)), self._patient)
        for w in self._workers:
            if not w.reader.readable(self.wall_seconds) or w.reader.recv() != ("ok",):
                raise WorkerStartError("skill worker did not confirm a reset")

    def pids(self) -> list[int]:
        """Process ids of the active workers (for inspection and tests)."""
        for w in self._workers:
            self._wait_ready(w)
        return [w.proc.pid for w in self._workers]

    def close(self) -> None:
        """Stop the workers (and the spare)."""
        for w in [*self._workers, *([self._spare] if self._spare else [])]:
            with contextlib.suppress(OSError):
                w.post(("exit",), self._patient)
            try:
                w.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            self._kill(w)
        self._workers = []
        self._spare = None

    def __enter__(self) -> IsolatedExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        # No module globals here: at interpreter shutdown they may already be None.
        try:
            for w in [*self._workers, *([self._spare] if self._spare else [])]:
                w.proc.kill()
        except (OSError, AttributeError, TypeError):
            # Half-built executor (no _workers yet), already-gone process, or shutdown teardown:
            # nothing left to stop; the worker also exits when its pipe closes.
            return
