"""The isolated worker pool: locked down, batched, same results as in-process, replaced when it hangs or dies."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from compass.config import RunConfig
from compass.core.family import get_family
from compass.sandbox import SkillExecutor, compile_skill
from compass.sandbox.executors import make_executor
from compass.sandbox.isolated import PARTS_FROM, IsolatedExecutor

API = "compass.games.combat.skill_api"
SLOW = "def slow(obs):\n    n = 0\n    for i in range(150000):\n        n += i\n    return STOP\n"
C_HANG = "def hang(obs):\n    while True:\n        sorted(range(10**6), key=lambda x: -x)\n"
RANDOM = "def rnd(obs):\n    d = parse_obs(obs)\n    return random.choice(d.available_actions)\n"


@pytest.fixture(scope="module")
def views():
    fam = get_family("combat")
    records = [json.loads(x) for x in fam.observations_path.read_text().splitlines() if x.strip()]
    texts = [r["text"] for r in records if r["alive"] and "Enemy #" in r["text"]][:5]
    return [replace(fam.view_from_text(t), agent_id=i) for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def isolated():
    os.environ["COMPASS_TEST_API_KEY"] = "sk-do-not-leak"
    ex = IsolatedExecutor(API, max_seconds=0.3, memory_mb=768)
    yield ex
    ex.close()
    os.environ.pop("COMPASS_TEST_API_KEY", None)


def test_isolation_is_the_default():
    assert RunConfig().isolation == "process"
    ex = make_executor(API, 0)
    try:
        assert isinstance(ex, IsolatedExecutor)
    finally:
        ex.close()
    with pytest.raises(ValueError, match="valid: process, inprocess"):
        make_executor(API, 0, "sandboxed")


def test_worker_is_locked_down(isolated):
    pid = isolated.pids()[0]
    environ = open(f"/proc/{pid}/environ", "rb").read().decode()
    assert "sk-do-not-leak" not in environ and "COMPASS_TEST_API_KEY" not in environ
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    # stdin/reply pipes, /dev/null on 1 and 2, the (unlinked) progress page: nothing inherited.
    assert len(fds) <= 5, fds
    assert all(t.startswith("pipe:") or t == "/dev/null" or "compass-progress" in t for t in fds.values()), (
        fds
    )
    limits = {
        line[:26].strip(): line[26:].split() for line in open(f"/proc/{pid}/limits").read().splitlines()[1:]
    }
    assert limits["Max address space"][0] == str(768 * 1024 * 1024)
    assert limits["Max file size"][0] == "0"
    assert int(limits["Max open files"][0]) <= len(fds) + 1


def test_batched_results_equal_in_process_random_included(isolated, views, combat_library):
    skills = [combat_library.compiled["race_adaptive_combat"], compile_skill(RANDOM, "rnd", "combat")]
    local = SkillExecutor(API, seed=3)
    isolated.reset(3)
    for skill in skills:
        for _ in range(3):
            batch = [(skill, v) for v in views]
            got = isolated.run_batch(batch)
            want = local.run_batch(batch)
            assert [r.action for r in got] == [r.action for r in want]
            assert all(r.error is None for r in got)


def test_a_batch_larger_than_a_pipe_arrives_whole(isolated, views, combat_library):
    # A batch of many episodes' views is sent in one write; a pipe takes it in parts.
    from compass.sandbox.isolated import _wire_view
    from compass.sandbox.wire import ArrayMirrorSender

    skill = combat_library.compiled["race_adaptive_combat"]
    batch = [
        (skill, replace(v, agent_id=k % 5, step=k, entities=tuple(replace(e, x=e.x + k) for e in v.entities)))
        for k in range(40)
        for v in views
    ]
    wire = [(skill.code_hash, _wire_view(v, skill.reads_text), 0) for _, v in batch]
    assert len(ArrayMirrorSender().dumps(("batch", [], wire, 1))) > 64 * 1024
    isolated.reset(5)
    got = isolated.run_batch(batch)
    assert [r.action for r in got] == [r.action for r in SkillExecutor(API, seed=5).run_batch(batch)]
    assert all(r.error is None for r in got)


def test_hung_worker_is_replaced_and_the_others_keep_their_results(isolated, views):
    honest = compile_skill("def ok(obs):\n    return STOP\n", "ok", "combat")
    hang = compile_skill(C_HANG, "hang", "combat")
    pid = isolated.pids()[0]
    restarts = isolated.restarts
    # run_batch returning at all is the behaviour (a hang in C code would block it forever); how
    # long detection takes is a measured figure (benchmarks/bench_sandbox.py), not a test bound.
    results = isolated.run_batch([(honest, views[0]), (hang, views[1]), (honest, views[2])])
    assert results[1].error is not None and results[1].error.kind == "budget"
    assert "worker replaced" in str(results[1].error)
    assert [results[0].error, results[2].error] == [None, None]
    assert [results[0].action, results[2].action] == [1, 1]
    assert isolated.restarts == restarts + 1 and isolated.pids()[0] != pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the hung worker is gone, not left running


def _many_views(views, n):
    """``n`` distinct views (each pickled on its own, not shared within a message)."""
    return [
        replace(
            views[k % 5],
            agent_id=k % 5,
            step=k,
            entities=tuple(replace(e, x=e.x + k) for e in views[k % 5].entities),
        )
        for k in range(n)
    ]


def test_a_batch_in_parts_equals_in_process_item_by_item(isolated, views, combat_library):
    # With parts on, a batch goes in parts of 1, 2, 4, ... items, each run as it arrives; the answers are the
    # in-process executor's, in order, with the random stream and lanes as one message had them.
    skill = combat_library.compiled["race_adaptive_combat"]
    rnd = compile_skill(RANDOM, "rnd", "combat")
    many = _many_views(views, 23)  # parts of 1, 2, 4, 8 and 8
    batch = [(rnd if k % 3 else skill, v) for k, v in enumerate(many)]
    lanes = [k % 2 for k in range(len(batch))]
    local = SkillExecutor(API, seed=11)
    isolated.parts_from = PARTS_FROM
    isolated.reset_lanes([11, 12])
    local.reset_lanes([11, 12])
    try:
        for _ in range(3):
            got, want = isolated.run_batch(batch, lanes), local.run_batch(batch, lanes)
            assert [r.action for r in got] == [r.action for r in want]
            assert [r.error for r in got] == [None] * len(batch)
    finally:
        isolated.parts_from = None


@pytest.mark.timeout(120)
def test_a_hang_in_the_first_part_does_not_block_sending_the_rest(isolated, views):
    # The first item hangs in C while the later parts hold more than a pipe takes: the parent
    # must not wait on a full pipe forever (it writes without blocking, under the hard deadline).
    from compass.sandbox.isolated import _wire_view
    from compass.sandbox.wire import ArrayMirrorSender

    honest = compile_skill("def ok(obs):\n    return STOP\n", "ok", "combat")
    hang = compile_skill(C_HANG, "hang", "combat")
    many = _many_views(views, 400)
    rest = [(honest.code_hash, _wire_view(v, True), 0) for v in many[1:]]
    assert len(ArrayMirrorSender().dumps(("items", rest, False))) > 2 * 64 * 1024
    restarts = isolated.restarts
    isolated.parts_from = PARTS_FROM
    try:
        results = isolated.run_batch([(hang, many[0])] + [(honest, v) for v in many[1:]])
    finally:
        isolated.parts_from = None
    assert results[0].error is not None and results[0].error.kind == "budget"
    assert "worker replaced" in str(results[0].error)
    assert all(r.error is None and r.action == 1 for r in results[1:])
    assert isolated.restarts == restarts + 1


def test_a_slow_parent_between_parts_is_not_a_hang(isolated, views, monkeypatch):
    # The worker runs a part, then waits for the next while the parent (loaded, cold) pickles it for
    # longer than the hard deadline: the worker is idle, not stuck, and nobody's skill may fail.
    from compass.sandbox.wire import ArrayMirrorSender

    honest = compile_skill("def ok(obs):\n    return STOP\n", "ok", "combat")
    dumps = ArrayMirrorSender.dumps

    def slow_dumps(self, message, more=False):
        # Slow only for the large parts (of 1, 2, 4, ... items: the last four here), which fill the pipe,
        # so the parent waits on a worker whose page shows no new item for longer than the hard deadline.
        if message[0] == "items" and len(message[1]) >= 30:
            time.sleep(isolated.hard_seconds + 0.3)
        return dumps(self, message, more)

    monkeypatch.setattr(ArrayMirrorSender, "dumps", slow_dumps)
    restarts = isolated.restarts
    isolated.parts_from = PARTS_FROM
    try:
        results = isolated.run_batch(
            [(honest, v) for v in _many_views(views, 400)]
        )  # the last parts fill the pipe
    finally:
        isolated.parts_from = None
    assert [str(r.error) for r in results if r.error is not None] == []
    assert all(r.action == 1 for r in results)
    assert isolated.restarts == restarts


def test_a_half_written_progress_record_is_not_a_hang(isolated, views, monkeypatch):
    # The worker writes its progress record without a lock, and ``pack_into`` zeroes it first: a
    # worker preempted inside that write shows the parent the next item's number with zeros after
    # it, for as many reads as the parent makes. In the CI run on 130a5eb such a read (a start time
    # of zero) failed seed 0's first agent with "no answer within 32 s" in a 0.3 s batch.
    import sys

    from compass.sandbox.isolated import _Worker
    from compass.sandbox.worker import PROGRESS

    slow = compile_skill(SLOW, "slow", "combat")  # milliseconds: the reply is not there at once
    real = _Worker.started
    zeros = PROGRESS.unpack(bytes(PROGRESS.size))

    def half_written(self):
        record = real(self)
        if sys._getframe(1).f_code.co_name == "_send":  # before the batch goes: the worker is idle
            return record
        return (record[0] + 1, *zeros[1:])

    monkeypatch.setattr(_Worker, "started", half_written)
    restarts = isolated.restarts
    results = isolated.run_batch([(slow, v) for v in views[:3]])
    assert [str(r.error) for r in results if r.error is not None] == []
    assert [r.action for r in results] == [1, 1, 1] and isolated.restarts == restarts


def _wait_until_dead(pid: int, timeout: float = 5.0) -> None:
    """Until ``pid`` has exited (gone, or a zombie its parent has not reaped yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.01)


def test_worker_death_is_an_error_for_the_running_agent_only(isolated, views):
    honest = compile_skill("def ok(obs):\n    return STOP\n", "ok", "combat")
    slow = compile_skill(SLOW, "slow", "combat")
    pid = isolated.pids()[0]

    def kill_soon():
        time.sleep(0.15)
        os.kill(pid, signal.SIGSEGV)  # what a crash in C code looks like from outside

    killer = threading.Thread(target=kill_soon)
    batch = [(honest, views[0]), *[(slow, v) for v in views[1:]]]
    killer.start()
    results = isolated.run_batch(batch)
    killer.join()
    _wait_until_dead(pid)  # the signal is sent; let it land before the next batch
    failed = [r for r in results if r.error is not None]
    if failed:  # the kill landed while a skill ran: that agent, and only it, failed
        assert len(failed) == 1 and "worker died (crashed (SIGSEGV))" in str(failed[0].error)
    assert results[0].error is None and results[0].action == 1
    # On a quiet machine the batch can finish before the kill lands; the death is then found when
    # the next batch starts, which must run cleanly on a fresh worker either way.
    after = isolated.run_batch(batch)
    assert all(r.error is None for r in after), [str(r.error) for r in after]
    assert isolated.pids()[0] != pid


def test_memory_cap_stops_what_the_guards_let_through(isolated, views):
    # Each list passes the size guards; together they pass the worker's address-space limit.
    bomb = compile_skill(
        "def f(obs):\n    x = [[0] * 900000 for i in range(400)]\n    return 1\n", "f", "combat"
    )
    r = isolated.run(bomb, views[0])
    assert r.error is not None and r.error.kind in ("resource", "budget"), r.error
    assert isolated.run(compile_skill("def g(obs):\n    return 1\n", "g", "combat"), views[0]).error is None


def test_worker_pool_pins_agents_and_survives_a_hang(views):
    with IsolatedExecutor(API, max_seconds=0.3, workers=2, spare=False) as pool:
        honest = compile_skill("def ok(obs):\n    return STOP\n", "ok", "combat")
        hang = compile_skill(C_HANG, "hang", "combat")
        assert len(set(pool.pids())) == 2
        results = pool.run_batch([(hang if v.agent_id == 3 else honest, v) for v in views])
        assert [r.error is None for r in results] == [True, True, True, False, True]
        assert all(r.error is None for r in pool.run_batch([(honest, v) for v in views]))


@pytest.mark.slow  # embeds a new library and compiles SMAX
def test_episode_with_hostile_skills_goes_on(tmp_path):
    """A real SMAX episode whose only skill hangs for agent 0 and bombs memory for agent 1."""
    from compass.episode.session import run
    from compass.episode.trace import read_trace

    lib = tmp_path / "lib" / "combat"
    lib.mkdir(parents=True)
    (lib / "hostile_fight.py").write_text(
        "def hostile_fight(obs: str) -> int:\n"
        '    """Attack the nearest enemy."""\n'
        "    d = parse_obs(obs)\n"
        "    if d.agent_id == 0:\n"
        "        return sum(iter(int, 1))\n"
        "    if d.agent_id == 1:\n"
        "        return len('x' * 10**10)\n"
        "    targets = [e for e in d.enemies if e.can_attack]\n"
        "    return attack(targets[0].id) if targets else default_action()\n"
    )
    cfg = RunConfig(
        env="smax:protoss_5_vs_5", library=tmp_path / "lib", out=tmp_path, run_id="h", max_steps=12
    )
    summary = run(cfg)
    steps = [r for r in read_trace(tmp_path / "h") if r["kind"] == "step"]
    assert len(steps) == summary["episodes"][0]["steps"] >= 2
    first = steps[0]
    kinds = {e["agent"]: e["kind"] for e in first["errors"]}
    assert kinds == {0: "budget", 1: "resource"}
    assert all({e["agent"] for e in s.get("errors", [])} == {0, 1} for s in steps)
    assert summary["episodes"][0]["skill_errors"] == 2 * len(steps)


def test_worker_that_died_between_steps_is_replaced_without_blame(views):
    with IsolatedExecutor(API, max_seconds=0.3) as ex:
        honest = compile_skill("def ok(obs):\n    return STOP\n", "ok", "combat")
        assert all(r.error is None for r in ex.run_batch([(honest, v) for v in views]))
        pid = ex.pids()[0]
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)  # let it die (the executor reaps it)
        results = ex.run_batch([(honest, v) for v in views])
        assert all(r.error is None and r.action == 1 for r in results)
        assert ex.pids()[0] != pid


def test_synthesis_tries_candidates_through_the_run_executor(views):
    from compass.planner.synthesis import try_skill

    hang = C_HANG.replace("def hang(", "def cand(")
    err = try_skill(hang, "cand", "combat", views[0], seed=0, isolation="process")
    assert err is not None and err.kind == "budget" and "worker replaced" in str(err)
    ok = "def cand(obs):\n    return STOP\n"
    assert try_skill(ok, "cand", "combat", views[0], seed=0, isolation="process") is None
    bomb = "def cand(obs):\n    return len('x'.center(10**10))\n"
    assert "center width" in str(try_skill(bomb, "cand", "combat", views[0], isolation="inprocess"))


@pytest.mark.parametrize("isolation", ["inprocess", "process"])
def test_lanes_play_as_separate_executors(views, isolation):
    """Batched episodes share one executor and one batch per step, one lane each: every lane's
    ``random`` stream is the one a fresh executor with its seed has, whatever the others do."""
    skill = compile_skill(RANDOM, "rnd", "combat")
    seeds = [3, 4, 3]
    alone = []
    for seed in seeds:
        ex = SkillExecutor(API, seed=seed)
        alone.append([[ex.run(skill, v).action for v in views] for _ in range(4)])
    shared = (
        SkillExecutor(API, seed=0) if isolation == "inprocess" else IsolatedExecutor(API, seed=0, spare=False)
    )
    try:
        shared.reset_lanes(seeds)
        got: list[list[list[int]]] = [[], [], []]
        for _ in range(4):
            items = [(skill, v) for _ in seeds for v in views]
            lanes = [b for b in range(len(seeds)) for _ in views]
            actions = [r.action for r in shared.run_batch(items, lanes)]
            for b in range(len(seeds)):
                got[b].append(actions[b * len(views) : (b + 1) * len(views)])
        assert got == alone and alone[0] == alone[2] and alone[0] != alone[1]
        shared.reset(4)  # back to one lane: as fresh again
        assert [shared.run(skill, v).action for v in views] == alone[1][0]
    finally:
        shared.close()
