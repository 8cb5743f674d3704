"""Which executor runs skills: isolated worker processes or in-process, warm ones from a pool.

Here, above both executors (:mod:`compass.sandbox.runtime`, :mod:`compass.sandbox.isolated`), so
neither imports the other's module back.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from compass.sandbox.isolated import PARTS_FROM, IsolatedExecutor
from compass.sandbox.runtime import Executor, SkillExecutor

ISOLATION_MODES = ("process", "inprocess")


def free_cores(players: int, cores: int | None = None) -> bool:
    """Whether this machine has a core beyond ``players`` processes playing episodes (each with its
    own skill worker): ``cores`` defaults to the CPUs this process may run on."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores > players


def resolve_parts_from(
    setting: int | Literal["auto"] | None, players: int, cores: int | None = None
) -> int | None:
    """The isolated executor's ``parts_from`` for ``RunConfig.sandbox_parts_from``: a number or
    None as given; ``auto``: :data:`PARTS_FROM` where a core is free of the ``players`` processes
    that play episodes (:func:`free_cores`), else None (one message per batch).

    Parts pay only where the worker can run the first items while the parent pickles the rest on
    another core; where every core plays an episode they only add CPU (benchmarks/README.md).
    """
    if setting != "auto":
        return setting
    return PARTS_FROM if free_cores(players, cores) else None


def make_executor(
    api: str, seed: int, isolation: str = "process", workers: int = 1, parts_from: int | None = None
) -> Executor:
    """The executor for a run: isolated worker processes (default) or in-process (trusted skills only).

    ``workers`` is the size of the worker pool (one is enough on two cores) and ``parts_from`` the
    batch size from which a batch goes in parts (:class:`IsolatedExecutor`); in-process ignores both.
    """
    if isolation == "process":
        return IsolatedExecutor(api, seed=seed, workers=workers, parts_from=parts_from)
    if isolation != "inprocess":
        raise ValueError(f"unknown isolation {isolation!r}; valid: {', '.join(ISOLATION_MODES)}")
    return SkillExecutor(api, seed=seed)


_POOL: dict[tuple[str, str, int], list[Executor]] = {}
_POOL_LOCK = threading.Lock()


@contextmanager
def pooled_executor(
    api: str, seed: int, isolation: str = "process", workers: int = 1, parts_from: int | None = None
) -> Iterator[Executor]:
    """An executor reset to ``seed``, taken from a per-process pool and given back afterwards.

    Episodes, synthesis, repair and checks reuse warm executors (and their worker processes):
    a worker starts once per process, not once per episode or per candidate. Reset gives the same
    namespaces and ``random`` stream as a fresh executor. ``parts_from`` is set on the executor
    each time it is taken (it changes how batches are sent, not what they give).
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
    if isinstance(executor, IsolatedExecutor):
        executor.parts_from = parts_from
    try:
        yield executor
    finally:
        with _POOL_LOCK:
            _POOL[key].append(executor)


def candidate_executor(api: str, seed: int, isolation: str = "process"):
    """The executor that tries candidate skills (synthesis, repair, checks): a pooled one."""
    return pooled_executor(api, seed, isolation)
