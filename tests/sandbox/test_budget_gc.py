"""The budget of a skill call counts the skill's own CPU time: not the host's garbage
collections, not the time its process waits for a core.

A full collection of a large process's heap (JAX, torch, an evaluation's results) can stop a
skill for seconds in the middle of its call; before, the in-process executor then stopped an
honest skill on its 0.3-0.5 s budget (two full-suite runs of ``test_hostile``). The pause here is
a real collection, made long by a ``gc`` callback that spins inside it (a collection of a
multi-gigabyte heap, without the heap). A process that waits for a core (a loaded machine, a
paused VM) spends wall time and no CPU: with a wall-clock budget and deadline, an honest skill
failed once in a full CI run and a resumed evaluation's rows differed from the uninterrupted
ones (``test_batched``); here the wait is a sleep inside the call.
"""

from __future__ import annotations

import gc
import time

import pytest

from compass.sandbox import SkillExecutor, compile_skill

API = "compass.games.combat.skill_api"
BUDGET = 0.3
PAUSE = 0.2  # per collection, three of them: twice the budget in all


def spin(seconds: float) -> None:
    """Use ``seconds`` of this thread's CPU, as a collection of a large heap does."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


# Allocates a container per iteration (each collection is triggered by the skill's own work) and
# ticks the budget often enough for its clock to be read after the pauses.
ALLOCATES = (
    "def f(obs):\n    keep = []\n    for i in range(20000):\n        keep.append([i])\n    return STOP\n"
)
# A skill that is slow by itself (~50 µs of work per iteration, far more than the budget in all)
# and allocates as it goes, so collections pause it too.
SLOW = (
    "def f(obs):\n    keep = []\n    for i in range(100000):\n"
    "        keep.append([sum(range(2000))])\n    return STOP\n"
)


@pytest.fixture
def slow_collections():
    """While armed, the next three collections each take PAUSE seconds longer."""
    pauses: list[float] = []
    armed = [False]

    def pause(phase: str, info: dict) -> None:
        if phase == "start" and armed[0] and len(pauses) < 3:
            spin(PAUSE)
            pauses.append(PAUSE)

    threshold = gc.get_threshold()
    gc.set_threshold(200, *threshold[1:])  # the skill's allocations trigger collections at once
    gc.callbacks.append(pause)
    try:
        yield armed, pauses
    finally:
        gc.callbacks.remove(pause)
        gc.set_threshold(*threshold)


def run(source: str, view, armed: list[bool]):
    ex = SkillExecutor(API, max_seconds=BUDGET)
    skill = compile_skill(source, "f", "combat")
    ex.run(skill, view)  # namespaces made, API warm: the timed call is the skill's own work
    armed[0] = True
    try:
        return ex.run(skill, view)
    finally:
        armed[0] = False


def test_a_collection_pause_inside_the_call_does_not_stop_the_skill(view, slow_collections):
    armed, pauses = slow_collections
    r = run(ALLOCATES, view, armed)
    assert sum(pauses) == 3 * PAUSE  # the call was paused for twice its budget ...
    assert r.seconds > 3 * PAUSE
    assert r.error is None and r.action == 1  # ... and the skill's own answer stands


def test_a_slow_skill_is_still_stopped_with_or_without_pauses(view, slow_collections):
    armed, pauses = slow_collections
    alone = SkillExecutor(API, max_seconds=BUDGET).run(compile_skill(SLOW, "f", "combat"), view)
    assert alone.error is not None and alone.error.kind == "budget"
    assert "time budget exceeded" in str(alone.error)
    r = run(SLOW, view, armed)
    assert sum(pauses) == 3 * PAUSE
    assert r.error is not None and r.error.kind == "budget" and "time budget exceeded" in str(r.error)
    # stopped when its own time ran out: the pauses came on top, not instead
    assert r.seconds > BUDGET + sum(pauses)


# A skill API for the worker: the combat family's, whose make_api (inside the call's budget)
# makes the next three collections in the worker pause.
PAUSING_API = f"""
import gc
import time

from compass.games.combat import skill_api as _base

EXPORTS = _base.EXPORTS
default_action = _base.default_action
_armed = [0]


def _pause(phase, info):
    if phase == "start" and _armed[0] > 0:
        _armed[0] -= 1
        end = time.thread_time() + {PAUSE}
        while time.thread_time() < end:
            pass


gc.callbacks.append(_pause)


def make_api(view, rng):
    _armed[0] = 3
    # as slow_collections does: the skill's allocations trigger collections at once (the worker
    # itself collects only every GC_YOUNG objects, set after this module is imported)
    gc.set_threshold(200, *gc.get_threshold()[1:])
    return _base.make_api(view, rng)
"""


def test_the_isolated_worker_leaves_out_its_collection_pauses_too(view, tmp_path, monkeypatch):
    from compass.sandbox.isolated import IsolatedExecutor

    (tmp_path / "gc_pausing_api.py").write_text(PAUSING_API)
    monkeypatch.syspath_prepend(str(tmp_path))  # the worker's import path is the parent's
    # hard_seconds: the parent's deadline for a stuck worker, out of the way of the pauses
    with IsolatedExecutor("gc_pausing_api", max_seconds=BUDGET, hard_seconds=10.0, spare=False) as ex:
        honest = ex.run(compile_skill(ALLOCATES, "f", "combat"), view)
        slow = ex.run(compile_skill(SLOW, "f", "combat"), view)
    assert honest.error is None and honest.action == 1 and honest.seconds > 3 * PAUSE
    assert (
        slow.error is not None and slow.error.kind == "budget" and "time budget exceeded" in str(slow.error)
    )
    assert slow.seconds > BUDGET + 3 * PAUSE


# A skill API whose make_api (inside the call's budget) sleeps: the worker waits, as a process
# waiting for a core does, past the budget and past the hard deadline, using no CPU.
STALLING_API = """
import time

from compass.games.combat import skill_api as _base

EXPORTS = _base.EXPORTS
default_action = _base.default_action


def make_api(view, rng):
    time.sleep({stall})
    return _base.make_api(view, rng)
"""


def test_a_call_that_waits_without_cpu_is_not_stopped(view, tmp_path, monkeypatch):
    from compass.sandbox.isolated import IsolatedExecutor

    hard = 2 * BUDGET + 0.5
    (tmp_path / "stalling_api.py").write_text(STALLING_API.format(stall=hard + 0.5))
    monkeypatch.syspath_prepend(str(tmp_path))
    inproc = SkillExecutor("stalling_api", max_seconds=BUDGET).run(
        compile_skill(ALLOCATES, "f", "combat"), view
    )
    assert inproc.error is None and inproc.action == 1 and inproc.seconds > hard
    with IsolatedExecutor("stalling_api", max_seconds=BUDGET, spare=False) as ex:
        assert ex.hard_seconds == hard
        r = ex.run(compile_skill(ALLOCATES, "f", "combat"), view)
        slow = ex.run(compile_skill(SLOW, "f", "combat"), view)
        restarts = ex.restarts
    assert r.error is None and r.action == 1 and r.seconds > hard  # waited past both, not stopped
    assert restarts == 0
    # a skill that spends its budget is stopped as before, the wait on top
    assert (
        slow.error is not None and slow.error.kind == "budget" and "time budget exceeded" in str(slow.error)
    )
