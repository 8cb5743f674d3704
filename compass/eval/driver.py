"""Run a plan: skip finished episodes, play the rest on local worker processes or Ray, append rows.

Local: ``workers == 1`` plays in this process; more use a ``spawn`` process pool (JAX and fork do
not mix). Ray: one task per batch with ``num_cpus=1`` declared, scheduled by Ray, results
streamed back with ``ray.wait`` as they finish. Both call the same
:func:`compass.eval.episode.play_batch`, so they give the same per-seed results.

Batches: the episodes of one configuration and env that can be batched
(:func:`compass.eval.episode.batch_key`) are played up to ``batch`` at a time in one vmapped env;
the others (a VLM planner, an enemy team driven by controllers, an env kind its family does not
batch) one by one, as batches of one. Per-seed rows are the same either way (``wall_s`` aside).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compass.eval.episode import batch_key, play_batch
from compass.eval.spec import Job, Plan, SpecError
from compass.eval.store import REPORT_FILES, EpisodeStore, read_meta, write_meta
from compass.sandbox.executors import resolve_parts_from
from compass.util.atomic import atomic_write_text


@dataclass
class Prepared:
    """A run directory ready to (re)start: what is done and what is left."""

    run_dir: Path
    store: EpisodeStore
    todo: list[Job]
    total: int


def prepare(plan: Plan, out: str | Path) -> Prepared:
    """Open ``<out>/<plan.name>``; refuse it if a configuration of the same name changed since."""
    run_dir = Path(out) / plan.name
    meta = read_meta(run_dir)
    old = meta.get("configs", {})
    for c in plan.configs:
        if c.name in old and old[c.name]["key"] != c.key():
            raise SpecError(
                f"{run_dir} already holds configuration {c.name!r} with different settings; "
                "rename it, or use another --out or spec name"
            )
    store = EpisodeStore(run_dir)
    configs = {**old, **{c.name: {"key": c.key(), "fields": c.fields()} for c in plan.configs}}
    order = list(dict.fromkeys([*meta.get("config_order", []), *(c.name for c in plan.configs)]))
    write_meta(run_dir, {"name": plan.name, "configs": configs, "config_order": order})
    atomic_write_text(run_dir / "spec.yaml", plan.source)
    for f in REPORT_FILES:  # a stale report must not pass for this run's result until it is rewritten
        (run_dir / f).unlink(missing_ok=True)
    done = store.done()
    jobs = plan.jobs(run_dir)
    return Prepared(run_dir, store, [j for j in jobs if j.key not in done], len(jobs))


def _init_worker() -> None:
    import os

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


#: episodes per batch by default: past a few dozen the step's host work dominates (benchmarks/README.md)
DEFAULT_BATCH = 16


def batches(jobs: list[Job], batch: int, workers: int = 1) -> list[list[Job]]:
    """``jobs`` in batches: those with one :func:`batch_key` in runs of at most ``batch`` (fewer,
    so that every worker gets one, when there are not enough for all), the rest alone; in order."""
    groups: dict[Any, list[Job]] = {}
    out: list[list[Job]] = []
    for j in jobs:
        key = batch_key(j) if batch > 1 else None
        if key is None:
            out.append([j])
        else:
            groups.setdefault(key, []).append(j)
    for group in groups.values():
        size = max(1, min(batch, -(-len(group) // max(workers, 1))))
        out.extend(group[i : i + size] for i in range(0, len(group), size))
    return out


def with_players(chunks: list[list[Job]], players: int | None) -> list[list[Job]]:
    """``chunks`` with each job's ``sandbox_parts_from: auto`` settled for ``players`` processes
    playing episodes at once (:func:`compass.sandbox.executors.resolve_parts_from`; None: no core
    is known to be free, as on Ray, which gives every CPU a task)."""

    def settled(job: Job) -> Job:
        if job.config_fields.get("sandbox_parts_from", "auto") != "auto":
            return job
        parts = resolve_parts_from("auto", players) if players is not None else None
        return replace(job, config_fields={**job.config_fields, "sandbox_parts_from": parts})

    return [[settled(j) for j in chunk] for chunk in chunks]


def local_chunks(jobs: list[Job], workers: int, batch: int = DEFAULT_BATCH) -> tuple[list[list[Job]], int]:
    """The batches :func:`run_local` plays (:func:`batches`, ``auto`` settled by
    :func:`with_players`) and how many processes play them at once (1: this one)."""
    chunks = batches(jobs, batch, workers)
    players = 1 if workers <= 1 or len(chunks) <= 1 else min(workers, len(chunks))
    return with_players(chunks, players), players


def run_local(jobs: list[Job], workers: int, batch: int = DEFAULT_BATCH) -> Iterator[dict[str, Any]]:
    """Rows as episodes (or batches of them) finish (in completion order)."""
    chunks, players = local_chunks(jobs, workers, batch)
    if players == 1:
        for chunk in chunks:
            yield from play_batch(chunk)
        return
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=players, mp_context=ctx, initializer=_init_worker)
    try:
        pending = {pool.submit(play_batch, c) for c in chunks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                yield from f.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run_ray(
    jobs: list[Job], address: str, workers: int, batch: int = DEFAULT_BATCH
) -> Iterator[dict[str, Any]]:
    """Rows from Ray tasks as they finish. ``address``: ``local`` starts a private instance with
    ``workers`` CPUs; ``auto`` joins the running cluster; else a cluster address (``ray://host:10001``)."""
    try:
        import ray
    except ImportError:
        raise ImportError('--ray needs Ray: pip install "compass-agents[ray]"') from None
    started = not ray.is_initialized()
    if started:
        if address == "local":
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            try:
                ray.init(address=address, log_to_driver=False)
            except ConnectionError as e:
                raise ConnectionError(f"cannot reach the Ray cluster at {address!r}: {e}") from None
    remote = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=False)(play_batch)
    try:
        pending = [remote.remote(c) for c in with_players(batches(jobs, batch, workers), None)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            try:
                yield from ray.get(done[0])
            except ray.exceptions.RayTaskError as e:
                for r in pending:
                    ray.cancel(r, force=True)
                cause = getattr(e, "cause", None)
                raise (cause if isinstance(cause, Exception) else e) from None
    finally:
        if started:
            ray.shutdown()


def run_eval(
    prepared: Prepared,
    workers: int,
    ray_address: str | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    batch: int = DEFAULT_BATCH,
) -> list[dict[str, Any]]:
    """Play what is left, appending each row as it arrives; return all rows of the run directory.
    ``batch``: most episodes of one configuration in one batched env (1: one by one)."""
    todo = prepared.todo
    rows = run_ray(todo, ray_address, workers, batch) if ray_address else run_local(todo, workers, batch)
    try:
        for row in rows:
            prepared.store.append(row)
            if on_row is not None:
                on_row(row)
    finally:
        prepared.store.close()
    return prepared.store.rows
