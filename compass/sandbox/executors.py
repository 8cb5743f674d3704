"""Which executor runs skills: isolated worker processes or in-process, warm ones from a pool.

Here, above both executors (:mod:`compass.sandbox.runtime`, :mod:`compass.sandbox.isolated`), so
neither imports the other's module back.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from compass.sandbox.isolated import IsolatedExecutor
from compass.sandbox.runtime import Executor, SkillExecutor

ISOLATION_MODES = ("process", "inprocess")


def make_executor(api: str, seed: int, isolation: str = "process", workers: int = 1) -> Executor:
    """The executor for a run: isolated worker processes (default) or in-process (trusted skills only).

    ``workers`` is the size of the worker pool (one is enough on two cores); in-process ignores it.
    """
    if isolation == "process":
        return IsolatedExecutor(api, seed=seed, workers=workers)
    if isolation != "inprocess":
        raise ValueError(f"unknown isolation {isolation!r}; valid: {', '.join(ISOLATION_MODES)}")
    return SkillExecutor(api, seed=seed)


_POOL: dict[tuple[str, str, int], list[Executor]] = {}
_POOL_LOCK = threading.Lock()


@contextmanager
def pooled_executor(api: str, seed: int, isolation: str = "process", workers: int = 1) -> Iterator[Executor]:
    """An executor reset to ``seed``, taken from a per-process pool and given back afterwards.

    Episodes, synthesis, repair and checks reuse warm executors (and their worker processes):
    a worker starts once per process, not once per episode or per candidate. Reset gives the same
    namespaces and ``random`` stream as a fresh executor.
    """
    key = (api, isolation, workers)
    with _POOL_LOCK:
        free = _POOL.setdefault(key, [])
        executor = free.pop() if free else None
    if executor is None:
        executor = make_executor(api, seed, isolation, workers)
        atexit.register(executor.close)
    else:
        executor.reset(seed)
    try:
        yield executor
    finally:
        with _POOL_LOCK:
            _POOL[key].append(executor)


def candidate_executor(api: str, seed: int, isolation: str = "process"):
    """The executor that tries candidate skills (synthesis, repair, checks): a pooled one."""
    return pooled_executor(api, seed, isolation)
