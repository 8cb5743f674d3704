"""Optional process isolation: skills run in a worker process with a memory cap and a hard deadline.

In-process guards stop loops and the usual memory bombs cheaply; this executor also survives
what they cannot (a C-level allocation loop, a segfaulting extension): the worker runs under
``RLIMIT_AS`` and is killed and restarted when a call overruns. Same interface as
:class:`~compass.sandbox.runtime.SkillExecutor`, at the cost of an IPC round trip per call.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import time
from dataclasses import replace
from typing import Any

from compass.core.types import AgentView
from compass.sandbox.guards import SkillError
from compass.sandbox.runtime import CompiledSkill, SkillExecutor, SkillResult, compile_skill, load_api

__all__ = ["IsolatedExecutor"]


def _worker(conn: Any, api: str, seed: int, max_ticks: int, max_seconds: float, memory_mb: int) -> None:
    import resource

    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    executor = SkillExecutor(api, seed=seed, max_ticks=max_ticks, max_seconds=max_seconds)
    compiled: dict[str, CompiledSkill] = {}
    while True:
        msg = conn.recv()
        if msg is None:
            return
        (name, source, filename, line_offset, code_hash), view = msg
        skill = compiled.get(code_hash)
        if skill is None:
            skill = compiled[code_hash] = compile_skill(source, name, "", filename, line_offset)
        try:
            r = executor.run(skill, view)
            err = None if r.error is None else (str(r.error), r.error.kind, r.error.traceback)
        except MemoryError:
            r, err = None, (f"{name}: memory limit ({memory_mb} MB) exceeded", "resource", "")
        conn.send((None if r is None else r.action, err, 0 if r is None else r.ticks))


class IsolatedExecutor:
    """Runs skills in a separate process (``spawn``: forking a JAX process is unsafe)."""

    def __init__(
        self,
        api: str,
        seed: int = 0,
        max_ticks: int = 200_000,
        max_seconds: float = 0.5,
        memory_mb: int = 1024,
    ) -> None:
        self.api = load_api(api)
        self._args = (api, seed, max_ticks, max_seconds, memory_mb)
        self.deadline = max_seconds * 4 + 1.0  # the worker's own budget fires first; this is the backstop
        self._ctx = mp.get_context("spawn")
        self._proc = None
        self._conn = None
        self._start()

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_worker, args=(child, *self._args), daemon=True)
        self._proc.start()
        self._conn = parent

    def _restart(self) -> None:
        self._proc.kill()
        self._proc.join(timeout=5)
        self._start()

    def run(self, skill: CompiledSkill, view: AgentView) -> SkillResult:
        """Like ``SkillExecutor.run``; a dead or stuck worker becomes a SkillError and is replaced."""
        start = time.perf_counter()
        payload = (
            (skill.name, skill.source, skill.filename, skill.line_offset, skill.code_hash),
            replace(view, render=None, text_fn=None),
        )
        error: SkillError | None = None
        action, ticks = None, 0
        try:
            self._conn.send(payload)
            if self._conn.poll(self.deadline):
                action, err, ticks = self._conn.recv()
                if err is not None:
                    error = SkillError(err[0], skill.name, err[1], err[2])
            else:
                error = SkillError(
                    f"{skill.name}: no answer within {self.deadline:.1f} s; worker restarted",
                    skill.name,
                    "budget",
                )
                self._restart()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError) as e:
            error = SkillError(
                f"{skill.name}: skill worker died ({type(e).__name__}); restarted", skill.name, "resource"
            )
            self._restart()
        if action is None:
            action = self.api.default_action(view)
        return SkillResult(int(action), error, ticks, time.perf_counter() - start)

    def close(self) -> None:
        """Stop the worker."""
        if self._proc is not None and self._proc.is_alive():
            with contextlib.suppress(BrokenPipeError, OSError):  # a worker that already died needs no goodbye
                self._conn.send(None)
            self._proc.join(timeout=2)
            if self._proc.is_alive():
                self._proc.kill()
