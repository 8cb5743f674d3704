"""What the guards leave alone (honest idioms keep working) and what they tell a skill author."""

from __future__ import annotations

import pytest

from compass.sandbox import SkillExecutor, compile_skill

API = "compass.games.combat.skill_api"


HONEST = """def f(obs):
    import math
    from collections import Counter, deque
    from functools import reduce
    d = parse_obs(obs)
    label = f"{d.own_health:.2f}|{len(d.enemies):>3}|{'x':^5}" + '%5.1f %s' % (1.5, 'a')
    parts = ', '.join(str(e.id) for e in d.enemies).replace(',', ';').center(40).zfill(41)
    c = Counter('aab')
    q = deque([1, 2]) * 2
    ok = (
        sorted(c.elements()) == ['a', 'a', 'b'] and len(q) == 4 and math.factorial(10) == 3628800
        and math.prod([2, 3]) == 6 and reduce(lambda a, b: a + b, [1, 2, 3]) == 6
        and pow(2, 10) == 1024 and pow(3, 4, 5) == 1 and (7).to_bytes(2, 'big') == b'\\x00\\x07'
        and list(iter([1, 2].pop, 1)) == [2] and len(label) > 10 and len(parts) == 41
        and [x for x in range(5) if x % 2] == [1, 3] and max(*[1, 2]) == 2
    )
    return STOP if ok else NOOP
"""


def test_honest_idioms_still_work(view):
    r = SkillExecutor(API).run(compile_skill(HONEST, "f", "combat"), view)
    assert r.error is None and r.action == 1


def test_bad_action_names_file_and_return_line(view):
    src = "def f(obs):\n    d = parse_obs(obs)\n    if d.alive:\n        return 'north'\n    return STOP\n"
    r = SkillExecutor(API).run(compile_skill(src, "f", "combat", "skills/f.py", line_offset=5), view)
    assert r.error.kind == "invalid_action"
    assert str(r.error).startswith("skills/f.py:9: f returned 'north' (str)")


def test_budget_caught_by_the_skill_still_counts(view):
    src = "def f(obs):\n    try:\n        while True:\n            pass\n    except Exception:\n        return STOP\n"
    r = SkillExecutor(API, max_ticks=5_000).run(compile_skill(src, "f", "combat"), view)
    assert r.error.kind == "budget" and "the skill caught it" in str(r.error)
    assert r.action == 0 or r.action in view.avail_actions


def test_comprehensions_and_calls_count_against_the_budget(view):
    src = "def f(obs):\n    def g(x):\n        return x\n    return STOP + 0 * sum([g(i) for i in range(100)])\n"
    r = SkillExecutor(API).run(compile_skill(src, "f", "combat"), view)
    assert r.error is None and r.ticks >= 200  # 100 items + 100 calls (+ the skill's own call)


def test_sealed_api_hands_out_calls_and_read_only_data():
    from compass.sandbox.guards import Sealer

    costs = {"shelter": {"wood": [2]}}
    sealed = Sealer().seal({"BUILD_COSTS": costs, "double": lambda x: 2 * x})
    assert sealed["double"](4) == 8
    assert not hasattr(sealed["double"], "__globals__") and not hasattr(sealed["double"], "__closure__")
    with pytest.raises(TypeError):
        sealed["BUILD_COSTS"]["shelter"] = {}
    with pytest.raises(TypeError):
        sealed["BUILD_COSTS"]["shelter"]["wood"] += (1,)
    assert costs == {"shelter": {"wood": [2]}}  # the host's dict is untouched
