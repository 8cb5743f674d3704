"""Every hostile skill of the corpus is refused at compile time or stopped with a SkillError naming the cause.

Default mode (isolated workers): the hostile skill runs as agent 1 in a batch between two honest
agents; their actions must be exactly what they are without it, the hostile agent gets the
default action, the worker stays usable (the episode goes on) and the host keeps its secret,
its module globals and its files. Everything but the ``WORKER_ONLY`` entries is also stopped
in-process (the policy and the guards work in both modes); only ``WORKER_ONLY`` entries need the
worker's memory limit or hard deadline.
"""

from __future__ import annotations

import gc
import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from compass.core.family import get_family
from compass.games.combat.skill_api import default_action
from compass.sandbox import SkillError, SkillExecutor, compile_skill
from compass.sandbox.isolated import IsolatedExecutor

from .hostile import CORPUS, WORKER_ONLY

API = "compass.games.combat.skill_api"
SECRET = "compass-hostile-secret-4f1c"
HONEST = "def honest(obs):\n    d = parse_obs(obs)\n    for e in d.enemies:\n        return attack(e.id) if e.can_attack else move('north')\n    return NOOP\n"


def test_corpus_is_big_and_covers_every_category():
    categories = {c for c, _, _ in CORPUS.values()}
    assert len(CORPUS) >= 80
    assert categories == {"escape", "hang", "crash", "memory", "action"}


@pytest.fixture(scope="module")
def views():
    fam = get_family("combat")
    records = [json.loads(x) for x in fam.observations_path.read_text().splitlines() if x.strip()]
    texts = [r["text"] for r in records if r["alive"] and "Enemy #" in r["text"]][:3]
    return [replace(fam.view_from_text(t), agent_id=i) for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def honest():
    return compile_skill(HONEST, "honest", "combat")


@pytest.fixture(scope="module")
def reference(views, honest):
    results = SkillExecutor(API).run_batch([(honest, v) for v in views])
    assert all(r.error is None for r in results)
    return [r.action for r in results]


@pytest.fixture(scope="module")
def isolated():
    os.environ["COMPASS_HOSTILE_SECRET"] = SECRET  # workers must never see it
    ex = IsolatedExecutor(API, max_seconds=0.3, memory_mb=768)
    yield ex
    ex.close()
    os.environ.pop("COMPASS_HOSTILE_SECRET", None)


def _host_state() -> tuple:
    import compass.games.combat.skill_api as api

    return (
        sorted((k, id(v)) for k, v in vars(api).items()),
        api.NOOP,
        api.STOP,
        os.environ.get("COMPASS_HOSTILE_SECRET"),
        sorted(p.name for p in Path("/tmp").glob("pwned*")),
    )


def _check_stopped(name: str, result, view) -> None:
    _, cause, _ = CORPUS[name]
    assert result.error is not None, f"{name}: not stopped (action {result.action})"
    text = f"{result.error.kind}: {result.error}"
    assert re.search(cause, text, re.S), f"{name}: stopped for the wrong reason: {text[:300]}"
    assert SECRET not in text and SECRET not in result.error.traceback
    assert len(text) < 2_000, f"{name}: unbounded error text"
    assert result.action == default_action(view)  # the unit takes the family's safe action


def _compile(name: str):
    _, cause, src = CORPUS[name]
    try:
        return compile_skill(src, "f", "combat", f"<hostile {name}>")
    except SkillError as e:
        assert e.kind == "compile"
        assert re.search(cause, f"compile: {e}", re.S), f"{name}: refused for the wrong reason: {e}"
        return None


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_hostile_skill_is_stopped_in_the_default_mode(name, isolated, views, honest, reference):
    skill = _compile(name)
    if skill is None:
        return
    before = _host_state()
    results = isolated.run_batch([(honest, views[0]), (skill, views[1]), (honest, views[2])])
    _check_stopped(name, results[1], views[1])
    assert [results[0].action, results[2].action] == [reference[0], reference[2]], (
        "other agents' actions changed"
    )
    assert results[0].error is None and results[2].error is None
    assert _host_state() == before
    # The episode goes on: the next step's batch runs normally on the (possibly replaced) worker.
    again = isolated.run_batch([(honest, v) for v in views])
    assert [r.action for r in again] == reference and all(r.error is None for r in again)


# `generator_ignores_exit` leaves a generator that yields again when Python finalises it after the
# run (the skill's result is already recorded): the interpreter reports that as unraisable, not a leak.
@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <generator object f.<locals>.g:pytest.PytestUnraisableExceptionWarning"
)
@pytest.mark.parametrize("name", sorted(n for n in CORPUS if n not in WORKER_ONLY))
def test_what_the_guards_stop_is_stopped_in_process_too(name, views, honest, reference):
    skill = _compile(name)
    if skill is None:
        return
    ex = SkillExecutor(API, max_seconds=0.3)
    before = _host_state()
    # A full collection of the test process's heap (JAX, torch and every earlier test's objects)
    # can pause a skill for seconds and trip the wall-clock budget first: collect and freeze that
    # heap before, so the budget measures the skill.
    gc.collect()
    gc.freeze()
    try:
        results = ex.run_batch([(honest, views[0]), (skill, views[1]), (honest, views[2])])
    finally:
        gc.unfreeze()
    _check_stopped(name, results[1], views[1])
    assert [results[0].action, results[2].action] == [reference[0], reference[2]]
    assert _host_state() == before
