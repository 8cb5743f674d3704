"""Sandbox: escapes refused, budgets enforced, failures become safe actions with a traceback."""

from __future__ import annotations

import pytest

from compass.sandbox import SkillError, SkillExecutor, compile_skill

ESCAPES = {
    "import_os": "def f(obs):\n    import os\n    return os.getpid()\n",
    "open_file": "def f(obs):\n    return open('/etc/passwd').read()\n",
    "dunder_attr": "def f(obs):\n    return obs.__class__\n",
    "dyn_getattr": "def f(obs):\n    return getattr(obs, '__class__')\n",
    "str_format": "def f(obs):\n    return '{0.__class__}'.format(obs)\n",
    "gen_frame": "def f(obs):\n    g = (x for x in [1])\n    return g.gi_frame\n",
    "eval": "def f(obs):\n    return eval('1')\n",
}


@pytest.fixture()
def view(smax_protoss):
    return smax_protoss.reset(0)[0]


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_escapes_are_refused(name, view):
    src = ESCAPES[name]
    try:
        skill = compile_skill(src, "f", "combat")
    except SkillError as e:
        assert e.kind == "compile"
        return
    result = SkillExecutor("compass.games.combat.skill_api").run(skill, view)
    assert result.error is not None, name
    assert result.action in view.avail_actions


@pytest.mark.parametrize(
    "src,kind",
    [
        ("def f(obs):\n    while True:\n        pass\n", "budget"),
        (
            "def f(obs):\n    n = 0\n    for i in range(10**6):\n        for j in range(10**6):\n            n += 1\n    return n\n",
            "budget",
        ),
        ("def f(obs):\n    return len('a' * 10**10)\n", "resource"),
        ("def f(obs):\n    return len([0] * 10**9)\n", "resource"),
        ("def f(obs):\n    return 10 ** 10 ** 8\n", "resource"),
        ("def f(obs):\n    def g(n):\n        return g(n + 1)\n    return g(0)\n", "budget"),
    ],
)
def test_loops_and_memory_bombs_end_with_skill_error(src, kind, view):
    result = SkillExecutor("compass.games.combat.skill_api", max_seconds=2.0).run(
        compile_skill(src, "f", "combat"), view
    )
    assert result.error is not None and result.error.kind == kind
    assert result.action in view.avail_actions


def test_raising_skill_gets_traceback_with_its_line_and_safe_action(view):
    src = "def f(obs):\n    obs_data = parse_obs(obs)\n    return 1 // 0\n"
    result = SkillExecutor("compass.games.combat.skill_api").run(
        compile_skill(src, "f", "combat", "f.py"), view
    )
    assert result.error.kind == "runtime" and "ZeroDivisionError" in str(result.error)
    assert "line 3" in result.error.traceback and "1 // 0" in result.error.traceback
    assert result.action in view.avail_actions


def test_unavailable_or_non_int_action_is_an_error(view):
    ex = SkillExecutor("compass.games.combat.skill_api")
    for body, msg in (
        ("return 99", "not available"),
        ("return 'north'", "not an action index"),
        ("return None", "not an action index"),
    ):
        r = ex.run(compile_skill(f"def f(obs):\n    {body}\n", "f", "combat"), view)
        assert r.error.kind == "invalid_action" and msg in str(r.error)


def test_allowed_modules_and_paper_idioms_work(view):
    src = """def f(obs):
    import math
    import heapq
    from collections import Counter
    obs_data = parse_obs(obs)
    scores = {}
    scores[1] = 1.0
    scores[1] += 2.0
    scores[1] *= 2
    x = random.choice([1])
    assert math.sqrt(4) == 2 and heapq.nsmallest(1, [3, 1]) == [1] and Counter('aa')['a'] == 2
    return 1 if scores[1] == 6.0 and x == 1 else 0
"""
    r = SkillExecutor("compass.games.combat.skill_api").run(compile_skill(src, "f", "combat"), view)
    assert r.error is None and r.action == 1


def test_compile_errors_name_the_line():
    with pytest.raises(SkillError, match=r"f.py:2: syntax error"):
        compile_skill("def f(obs):\n    return (\n", "f", "combat", "f.py")
    with pytest.raises(SkillError, match="exactly one function named 'f'"):
        compile_skill("def g(obs):\n    return 1\n", "f", "combat")


def test_sandboxed_skill_runs_every_shipped_skill(view, combat_library):
    ex = SkillExecutor("compass.games.combat.skill_api")
    for name, compiled in combat_library.compiled.items():
        r = ex.run(compiled, view)
        assert r.error is None, (name, r.error)


def test_common_builtins_are_available(view):
    src = "def f(obs):\n    pairs = sorted(zip([3, 1], [1, 2]))\n    return 1 if tuple(pairs[0]) == (1, 2) else 0\n"
    assert (
        SkillExecutor("compass.games.combat.skill_api").run(compile_skill(src, "f", "combat"), view).action
        == 1
    )
