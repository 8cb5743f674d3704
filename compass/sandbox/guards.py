"""Runtime guards injected into every skill's globals, and the per-call budget."""

from __future__ import annotations

import builtins
import collections
import functools
import heapq
import itertools
import math
import operator
import random as _random
import time
import types

from RestrictedPython import safe_builtins
from RestrictedPython.Guards import full_write_guard
from RestrictedPython.transformer import INSPECT_ATTRIBUTES

MAX_SEQUENCE = 1_000_000  # elements a skill may build with one * or range()
MAX_INT_BITS = 100_000


class SkillError(Exception):
    """A skill failed: it raised, ran out of budget, returned a bad action or did not compile."""

    def __init__(self, message: str, skill: str = "", kind: str = "runtime", traceback: str = "") -> None:
        super().__init__(message)
        self.skill = skill
        self.kind = kind
        self.traceback = traceback


class BudgetExceeded(SkillError):
    """The skill ran too many loop iterations or for too long in one call."""


class Budget:
    """Counts loop iterations of one call; checks the wall clock every 1024 ticks."""

    __slots__ = ("max_ticks", "max_seconds", "ticks", "deadline")

    def __init__(self, max_ticks: int, max_seconds: float) -> None:
        self.max_ticks = max_ticks
        self.max_seconds = max_seconds
        self.ticks = 0
        self.deadline = 0.0

    def start(self) -> None:
        self.ticks = 0
        self.deadline = time.perf_counter() + self.max_seconds

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks & 1023 == 0:
            if self.ticks > self.max_ticks:
                raise BudgetExceeded(f"loop budget exceeded ({self.max_ticks} iterations)", kind="budget")
            if time.perf_counter() > self.deadline:
                raise BudgetExceeded(f"time budget exceeded ({self.max_seconds:.2f} s)", kind="budget")


def _too_big(kind: str) -> SkillError:
    return SkillError(f"refused: {kind} larger than the sandbox allows", kind="resource")


def guarded_mul(a, b):
    """``a * b`` unless it would build a sequence of more than MAX_SEQUENCE elements."""
    ta, tb = type(a), type(b)
    if (ta is float or ta is int) and (tb is float or tb is int):
        if ta is int and tb is int and a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise _too_big("integer")
        return a * b
    if isinstance(a, (str, bytes, list, tuple)) and isinstance(b, int) and len(a) * b > MAX_SEQUENCE:
        raise _too_big("sequence")
    if isinstance(b, (str, bytes, list, tuple)) and isinstance(a, int) and len(b) * a > MAX_SEQUENCE:
        raise _too_big("sequence")
    return a * b


def guarded_pow(a, b):
    """``a ** b`` without astronomically large integers."""
    if type(a) is int and type(b) is int and b > 0 and a.bit_length() * b > MAX_INT_BITS:
        raise _too_big("integer")
    return a**b


def guarded_lshift(a, b):
    """``a << b`` without astronomically large integers."""
    if type(b) is int and b > MAX_INT_BITS:
        raise _too_big("integer")
    return a << b


_INPLACE = {
    "+=": operator.add,
    "-=": operator.sub,
    "*=": guarded_mul,
    "/=": operator.truediv,
    "//=": operator.floordiv,
    "%=": operator.mod,
    "**=": guarded_pow,
    "<<=": guarded_lshift,
    ">>=": operator.rshift,
    "|=": operator.or_,
    "&=": operator.and_,
    "^=": operator.xor,
}


def inplacevar(op: str, x, y):
    """RestrictedPython's hook for ``x op= y`` on names."""
    if op in ("+=", "-=") and type(x) in (int, float) and type(y) in (int, float):
        return x + y if op == "+=" else x - y
    if op == "+=" and isinstance(x, list):
        x += y  # keep list identity, as Python does
        return x
    return _INPLACE[op](x, y)


def guarded_bytes(*args, **kwargs):
    """``bytes`` that refuses to allocate a huge zero-filled buffer from an int."""
    if args and isinstance(args[0], int) and args[0] > MAX_SEQUENCE:
        raise _too_big("bytes")
    return bytes(*args, **kwargs)


def guarded_range(*args):
    """``range`` capped at MAX_SEQUENCE elements."""
    r = range(*args)
    if len(r) > MAX_SEQUENCE:
        raise _too_big("range")
    return r


_STR_FORMAT = frozenset({"format", "format_map"})


_MISSING = object()


def guarded_getattr(obj, name, default=_MISSING):
    """Attribute access for skill code (names with ``_`` are refused at compile time).

    ``str.format`` is refused: format strings can reach attributes RestrictedPython forbids.
    """
    if name in _STR_FORMAT and isinstance(obj, str):
        raise SkillError("str.format is not allowed in skills; use f-strings or %", kind="policy")
    return getattr(obj, name) if default is _MISSING else getattr(obj, name, default)


def checked_getattr(obj, name, *default):
    """The ``getattr`` builtin for skills: dynamic names get the checks literal ones get at compile time."""
    if not isinstance(name, str) or name.startswith("_") or name in INSPECT_ATTRIBUTES:
        raise SkillError(f"getattr of {name!r} is not allowed", kind="policy")
    return guarded_getattr(obj, name, *default)


def _module(name: str, **members) -> types.SimpleNamespace:
    ns = types.SimpleNamespace(**members)
    ns.__name__ = name
    return ns


def _public(mod, exclude: frozenset[str] = frozenset()) -> dict:
    return {k: getattr(mod, k) for k in dir(mod) if not k.startswith("_") and k not in exclude}


def make_modules(rng: _random.Random) -> dict[str, object]:
    """The modules a skill may import; ``random`` is the episode's seeded generator."""
    rand = _module(
        "random",
        **{
            k: getattr(rng, k)
            for k in ("random", "uniform", "randint", "choice", "choices", "shuffle", "sample", "gauss")
        },
    )
    # Infinite or combinatorial iterators can exhaust memory inside one C call; leave them out.
    iters = _module(
        "itertools",
        **_public(
            itertools,
            frozenset(
                {
                    "count",
                    "cycle",
                    "repeat",
                    "product",
                    "permutations",
                    "combinations",
                    "combinations_with_replacement",
                }
            ),
        ),
    )
    return {
        "math": _module("math", **_public(math)),
        "random": rand,
        "collections": _module("collections", **_public(collections, frozenset({"abc"}))),
        "itertools": iters,
        "heapq": _module("heapq", **_public(heapq)),
        "functools": _module("functools", **_public(functools, frozenset({"wraps", "update_wrapper"}))),
    }


ALLOWED_MODULES = ("math", "random", "collections", "itertools", "heapq", "functools")


def make_builtins(modules: dict[str, object]) -> dict[str, object]:
    """Safe builtins plus the few extras skills commonly use, and an allow-listed ``__import__``."""

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name not in modules:
            raise SkillError(
                f"import of {name!r} is not allowed; allowed: {', '.join(ALLOWED_MODULES)}", kind="policy"
            )
        return modules[name]

    b = dict(safe_builtins)
    for name in (
        "min",
        "max",
        "sum",
        "any",
        "all",
        "enumerate",
        "map",
        "filter",
        "reversed",
        "list",
        "sorted",
        "zip",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "iter",
        "next",
        "hasattr",
        "getattr",
        "isinstance",
    ):
        b[name] = getattr(builtins, name)
    b["getattr"] = checked_getattr
    b["range"] = guarded_range
    b["bytes"] = guarded_bytes
    b["__import__"] = guarded_import
    return b


def make_guards(budget: Budget) -> dict[str, object]:
    """The underscore hooks RestrictedPython-compiled code calls."""
    return {
        "_getattr_": guarded_getattr,
        "_getitem_": operator.getitem,
        "_getiter_": iter,
        # Iteration is unguarded (``_getiter_`` is ``iter``), so unpacking needs no guard either.
        "_iter_unpack_sequence_": _plain_unpack,
        "_unpack_sequence_": _plain_unpack,
        "_write_": full_write_guard,
        "_inplacevar_": inplacevar,
        "_tick_": budget.tick,
        "_mul_": guarded_mul,
        "_pow_": guarded_pow,
        "_lshift_": guarded_lshift,
        "_print_": _NoPrint,
    }


def _plain_unpack(it, spec, getiter):
    return it


class _NoPrint:
    """``print`` in a skill goes nowhere (skills run every step; output would flood the terminal)."""

    def __init__(self, _getattr=None) -> None:
        pass

    def _call_print(self, *args, **kwargs) -> None:
        pass

    def __call__(self) -> str:
        return ""
