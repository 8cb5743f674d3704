"""The prompts' API and sandbox sections are rendered from the code that enforces them."""

from __future__ import annotations

import random
import types

import pytest

from compass.core.types import AgentView
from compass.sandbox import SkillExecutor, compile_skill
from compass.sandbox.guards import ALLOWED_MODULES, Budget, allowed_builtins, make_builtins, make_modules
from compass.sandbox.reference import api_reference, module_members, sandbox_rules, signature, type_fields


def test_sandbox_rules_list_exactly_the_builtins_skills_get():
    granted = make_builtins(make_modules(random.Random(0)), Budget(1000, 1.0))
    names = allowed_builtins()
    assert set(names) <= set(granted) and "open" not in names and "eval" not in names
    assert {"sorted", "zip", "tuple", "getattr", "range"} <= set(names)
    rules = sandbox_rules()
    line = next(x for x in rules.splitlines() if x.startswith("- Builtins: "))
    assert line.startswith("- Builtins: " + ", ".join(names) + ",")
    assert all(m in rules for m in ALLOWED_MODULES) and "200000 loop iterations" in rules
    members = module_members()
    modules = make_modules(random.Random(0))
    for name, names in members.items():
        assert all(hasattr(modules[name], n) for n in names)
    assert "accumulate" in members["itertools"] and "count" not in members["itertools"]
    assert "itertools: " + ", ".join(members["itertools"]) in rules


def test_every_listed_builtin_works_in_a_skill(tmp_path):
    """What the rules promise, a skill can call (no name in the list raises NameError)."""
    body = "\n".join(f"    assert callable({n}) or {n} is not None" for n in allowed_builtins())
    src = f"def probe(obs):\n{body}\n    import collections, itertools, heapq, functools\n    return 1\n"
    view = AgentView(0, "combat", 0, True, None, (), (1,), "x")  # type: ignore[arg-type]
    api = types.ModuleType("probe_api")
    api.make_api = lambda view, rng: {}
    api.default_action = lambda view: 1
    result = SkillExecutor(api).run(compile_skill(src, "probe", "combat"), view)
    assert result.error is None, result.error


def _module(**exports) -> types.ModuleType:
    mod = types.ModuleType("fake_api")
    mod.EXPORTS = tuple(exports)
    mod.make_api = lambda view, rng: dict(exports)
    return mod


def test_api_reference_lists_exports_with_signatures_and_first_doc_lines():
    def nearest(d, names: str, within: int = 3) -> int:
        """Closest thing.

        More words the prompt does not need."""
        return 0

    text = api_reference(_module(nearest=nearest, LIMIT=7, TABLE=tuple(range(100))))
    assert "- nearest(d, names: str, within: int = 3) -> int: Closest thing." in text
    assert "More words" not in text
    assert "LIMIT = 7" in text and "TABLE: tuple of 100" in text


def test_api_reference_refuses_exports_make_api_lacks():
    mod = _module(a=lambda: 1)
    mod.EXPORTS = ("a", "ghost")
    with pytest.raises(ValueError, match="ghost"):
        api_reference(mod)


def test_type_fields_show_methods_as_methods():
    class Thing:
        __slots__ = ("x", "_hidden")

        def can(self, action: int) -> bool:
            return True

    assert type_fields(Thing) == ["x", ".can(action: int) -> bool"]
    assert signature("f", lambda a, b=2: 0) == "f(a, b=2)"
