"""Process isolation: a memory-capped worker survives what in-process guards cannot stop."""

from __future__ import annotations

import pytest

from compass.sandbox import compile_skill
from compass.sandbox.isolated import IsolatedExecutor


@pytest.fixture(scope="module")
def isolated():
    ex = IsolatedExecutor("compass.games.combat.skill_api", max_seconds=0.5, memory_mb=1500)
    yield ex
    ex.close()


def test_isolated_run_matches_in_process(isolated, smax_protoss, combat_library):
    from compass.sandbox import SkillExecutor

    views = smax_protoss.reset(0)
    skill = combat_library.compiled["race_adaptive_combat"]
    local = SkillExecutor("compass.games.combat.skill_api")
    for v in views:
        assert isolated.run(skill, v).action == local.run(skill, v).action


def test_memory_cap_and_restart(isolated, smax_protoss):
    view = smax_protoss.reset(0)[0]
    # Builds ~3 GB through nested lists: each step passes the size guards, the cap stops it.
    bomb = compile_skill(
        "def f(obs):\n    x = [[0] * 900000 for i in range(400)]\n    return 1\n", "f", "combat"
    )
    r = isolated.run(bomb, view)
    # Stopped either by the memory cap (MemoryError) or, if allocation is slow, by the hard deadline.
    assert r.error is not None and r.error.kind in ("resource", "runtime", "budget")
    assert r.seconds < isolated.hard_seconds + 2.0
    ok = compile_skill("def g(obs):\n    return 1\n", "g", "combat")
    assert isolated.run(ok, view).error is None  # the worker is usable again
