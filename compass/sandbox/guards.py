"""Runtime guards injected into every skill's globals, and the per-call budget.

Skill code is hostile until proven otherwise. The compile-time policy (``policy.py``) refuses
``_`` names, frame/code attributes, ``format``/``format_map`` and a few more; what it cannot
decide from the source is decided here, cheaply, before the C code runs:

* loops, comprehensions and function calls tick one budget; once exhausted it stays tripped, so
  a skill that catches the exception and keeps going is stopped at its next tick;
* operators and string/bytes/int methods that can build a huge value in one C call (``*``,
  ``**``, ``<<``, ``%`` and f-string widths, ``join``, ``center``, ``replace``, ``to_bytes``, ...)
  check the size of what they would build;
* the importable modules are allow-listed namespaces without infinite iterators, module objects
  or classes whose methods run unguarded host code (``collections.UserString``);
* the skill API's helpers are sealed (callable, nothing else reachable) and its constants frozen.

What stays possible (many modest allocations, a slow numpy call on API data) is bounded by the
isolated worker's ``RLIMIT_AS``/``RLIMIT_CPU`` and its per-item CPU deadline.
"""

from __future__ import annotations

import builtins
import collections
import functools
import gc
import heapq
import itertools
import math
import operator
import random as _random
import re
import reprlib
import time
import types

from RestrictedPython import safe_builtins
from RestrictedPython.Guards import full_write_guard
from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from compass.core.errors import CompassError

MAX_SEQUENCE = 1_000_000  # elements (or characters) a skill may build in one operation
MAX_INT_BITS = 100_000
MAX_WIDTH = 10_000  # format widths and precisions
TIME_CHECK_EVERY = 256  # ticks between clock checks (power of two)
#: The budget's clock: CPU seconds of the calling thread. A process that waits for a core (a
#: loaded machine, a paused VM) does not spend a skill's time, so the same call under the same
#: seed passes or fails alike however busy the machine is (a wall clock made traces differ).
CLOCK = time.thread_time

# Attributes refused at compile time and by getattr(): format strings reach attributes that the
# policy forbids; numpy arrays reachable from API data could write files or hand out pointers.
DENIED_ATTRIBUTES = frozenset({"format", "format_map", "tofile", "dump", "ctypes"}) | INSPECT_ATTRIBUTES
# Methods that can build a huge str/bytes in one C call: read through ``_getattr_`` and checked.
SIZED_METHODS = frozenset(
    {"join", "center", "ljust", "rjust", "zfill", "expandtabs", "replace", "translate", "to_bytes"}
)


class SkillError(CompassError):
    """A skill failed: it raised, ran out of budget, returned a bad action or did not compile."""

    exit_code = 1  # the request was fine; the skill's code is what failed

    def __init__(self, message: str, skill: str = "", kind: str = "runtime", traceback: str = "") -> None:
        super().__init__(message)
        self.skill = skill
        self.kind = kind
        self.traceback = traceback


class BudgetExceeded(SkillError):
    """The skill ran too many loop iterations or for too long in one call."""


class _GCClock:
    """CPU seconds this process's threads have spent in garbage collections, from ``gc.callbacks``.

    A full collection of a large host process's heap (JAX, torch, an evaluation's results) can
    stop a skill for seconds in the middle of a call; that work is the process's, not the
    skill's, so the budget does not count it. The clock's ``start`` hook is the first
    callback and its ``stop`` hook the last at import, so other callbacks' work counts as the
    collection's too.
    """

    __slots__ = ("total", "_since")

    def __init__(self) -> None:
        self.total = 0.0
        self._since = 0.0

    def start(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._since = CLOCK()

    def stop(self, phase: str, info: dict) -> None:
        if phase == "stop":
            self.total += CLOCK() - self._since


GC_CLOCK = _GCClock()
# At most this much collection time is left out of one call: code a skill leaves to run in a
# collection (a generator's ``finally`` closed by the collector) runs inside that window too, so
# the window cannot be unbounded. The isolated worker's hard deadline bounds a call anyway.
GC_GRACE_SECONDS = 10.0
gc.callbacks.insert(0, GC_CLOCK.start)
gc.callbacks.append(GC_CLOCK.stop)


class Budget:
    """Counts loop iterations, comprehension items and calls of one skill call, and its time.

    The time is the calling thread's CPU time since :meth:`start` (:data:`CLOCK`) less the time
    spent in garbage collections meanwhile (:class:`_GCClock`, up to ``GC_GRACE_SECONDS``). Once
    exceeded it stays tripped for the rest of the call: every later tick raises again, and the
    executor reports the overrun even if the skill swallowed the exception.
    """

    __slots__ = ("max_ticks", "max_seconds", "ticks", "deadline", "gc_at_start", "tripped", "line")

    def __init__(self, max_ticks: int, max_seconds: float) -> None:
        self.max_ticks = max_ticks
        self.max_seconds = max_seconds
        self.ticks = 0
        self.deadline = 0.0
        self.gc_at_start = 0.0
        self.tripped: str | None = None
        self.line: int | None = None

    def start(self) -> None:
        self.ticks = 0
        self.tripped = None
        self.line = None
        self.gc_at_start = GC_CLOCK.total
        self.deadline = CLOCK() + self.max_seconds

    def tick(self) -> None:
        self.ticks += 1
        if self.tripped is not None or not self.ticks & (TIME_CHECK_EVERY - 1):
            self._check()

    def ctick(self) -> bool:
        """The tick of a comprehension item (an ``if`` clause, so it must be true)."""
        self.ticks += 1
        if self.tripped is not None or not self.ticks & (TIME_CHECK_EVERY - 1):
            self._check()
        return True

    def _check(self) -> None:
        if self.tripped is None:
            if self.ticks > self.max_ticks:
                self.tripped = f"loop budget exceeded ({self.max_ticks} iterations)"
            elif CLOCK() - min(GC_CLOCK.total - self.gc_at_start, GC_GRACE_SECONDS) > self.deadline:
                self.tripped = f"time budget exceeded ({self.max_seconds:.2f} s of CPU)"
        if self.tripped is not None:
            raise BudgetExceeded(self.tripped, kind="budget")

    def returned(self, value, line: int):
        """``return value`` of the skill function, remembering the line for the action check."""
        self.line = line
        return value


def too_big(kind: str) -> SkillError:
    """The error of an operation refused because its result would be too large."""
    return SkillError(f"refused: {kind} larger than the sandbox allows", kind="resource")


def _sized_len(x) -> int | None:
    try:
        return len(x) if hasattr(type(x), "__len__") else None
    except Exception:
        return None


def guarded_mul(a, b):
    """``a * b`` unless it would build a sequence of more than MAX_SEQUENCE elements."""
    ta, tb = type(a), type(b)
    if (ta is float or ta is int) and (tb is float or tb is int):
        if ta is int and tb is int and a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise too_big("integer")
        return a * b
    # Any sized operand (str, list, deque, ...) repeated by an int: check the result's length.
    if isinstance(b, int) and ta is not float:
        n = _sized_len(a)
        if n is not None and n * b > MAX_SEQUENCE:
            raise too_big("sequence")
    if isinstance(a, int) and tb is not float:
        n = _sized_len(b)
        if n is not None and n * a > MAX_SEQUENCE:
            raise too_big("sequence")
    return a * b


def guarded_pow(a, b, mod=None):
    """``a ** b`` (and ``pow``) without astronomically large integers or modular exponents."""
    if mod is not None:
        if isinstance(b, int) and isinstance(mod, int) and b.bit_length() * mod.bit_length() > 1 << 22:
            raise too_big("modular exponent")
        return pow(a, b, mod)
    if isinstance(a, int) and isinstance(b, int) and b > 0 and a.bit_length() * b > MAX_INT_BITS:
        raise too_big("integer")
    return a**b


def guarded_lshift(a, b):
    """``a << b`` without astronomically large integers."""
    if isinstance(b, int) and b > MAX_INT_BITS:
        raise too_big("integer")
    return a << b


_NUMBERS = re.compile(r"\d+")
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[^a-zA-Z%]*[a-zA-Z%]")


def check_format_spec(spec: str) -> None:
    """Refuse widths/precisions above MAX_WIDTH in an f-string or ``%`` spec."""
    if "*" in spec:
        raise SkillError("'*' widths are not allowed in skill format strings", kind="policy")
    for number in _NUMBERS.findall(spec):
        if len(number) > 6 or int(number) > MAX_WIDTH:
            raise too_big(f"format width {number[:12]}")


def guarded_mod(a, b):
    """``a % b``: string formatting checks its widths first; numbers are unaffected."""
    if type(a) is str or type(a) is bytes:
        spec = a if type(a) is str else a.decode("latin-1")
        if len(spec) > MAX_SEQUENCE:
            raise too_big("format string")
        for m in _PERCENT_SPEC.findall(spec):
            check_format_spec(m[1:])
    return a % b


def format_value(value, spec: str, conversion: int):
    """``f"{value!c:spec}"`` with the width and precision checked."""
    check_format_spec(spec)
    if conversion == 115:
        value = str(value)
    elif conversion == 114:
        value = repr(value)
    elif conversion == 97:
        value = ascii(value)
    return format(value, spec)


# --- str/bytes/int methods that can build a huge value in one call -----------------------------------


def _text_len(x) -> int:
    return len(x) if isinstance(x, (str, bytes, bytearray)) else 0


def _m_join(self, iterable):
    # Counted item by item: a generator of big strings is refused before it is all in memory.
    items, total, sep = [], 0, len(self)
    for item in iterable:
        total += _text_len(item) + sep
        if total > MAX_SEQUENCE:
            raise too_big("joined string")
        items.append(item)
    return self.join(items)


def _m_width(name):
    def method(self, width, *args):
        if isinstance(width, int) and width > MAX_SEQUENCE:
            raise too_big(f"{name} width")
        return getattr(self, name)(width, *args)

    return method


def _m_expandtabs(self, tabsize=8):
    if (
        isinstance(tabsize, int)
        and self.count("\t" if isinstance(self, str) else b"\t") * tabsize > MAX_SEQUENCE
    ):
        raise too_big("expanded string")
    return self.expandtabs(tabsize)


def _m_replace(self, old, new, count=-1):
    n = self.count(old) if count < 0 else min(count, self.count(old))
    if len(self) + n * (_text_len(new) - _text_len(old)) > MAX_SEQUENCE:
        raise too_big("replaced string")
    return self.replace(old, new, count)


def _m_translate(self, table, *args):
    if isinstance(table, dict) and isinstance(self, str):
        longest = max((_text_len(v) for v in table.values()), default=0)
        if longest > 1 and len(self) * longest > MAX_SEQUENCE:
            raise too_big("translated string")
    return self.translate(table, *args)


def _m_to_bytes(self, length=1, *args, **kwargs):
    if isinstance(length, int) and length > MAX_SEQUENCE:
        raise too_big("byte string")
    return self.to_bytes(length, *args, **kwargs)


_SIZED = {
    "join": _m_join,
    "center": _m_width("center"),
    "ljust": _m_width("ljust"),
    "rjust": _m_width("rjust"),
    "zfill": _m_width("zfill"),
    "expandtabs": _m_expandtabs,
    "replace": _m_replace,
    "translate": _m_translate,
    "to_bytes": _m_to_bytes,
}
_SIZED_TYPES = (str, bytes, int)


def _sized_method(obj, name: str):
    method = _SIZED[name]
    if isinstance(obj, type):

        def unbound(self, *args, **kwargs):
            if not isinstance(self, obj):
                raise TypeError(f"{obj.__name__}.{name} needs a {obj.__name__}")
            return method(self, *args, **kwargs)

        return unbound
    return functools.partial(method, obj)


_MISSING = object()


def guarded_getattr(obj, name, default=_MISSING):
    """Attribute access for skill code that the policy could not turn into a plain read."""
    if name in DENIED_ATTRIBUTES:
        raise SkillError(f"attribute {name!r} is not allowed in skills", kind="policy")
    if name in SIZED_METHODS and (isinstance(obj, _SIZED_TYPES) or obj in _SIZED_TYPES):
        if getattr(obj, name, None) is None:
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")
        return _sized_method(obj, name)
    return getattr(obj, name) if default is _MISSING else getattr(obj, name, default)


def checked_getattr(obj, name, *default):
    """The ``getattr`` builtin for skills: dynamic names get the checks literal ones get at compile time."""
    if not isinstance(name, str) or name.startswith("_") or name in DENIED_ATTRIBUTES:
        raise SkillError(f"getattr of {safe_repr(name)} is not allowed", kind="policy")
    return guarded_getattr(obj, name, *default)


def checked_hasattr(obj, name) -> bool:
    """``hasattr`` with getattr's checks (a denied name is simply absent)."""
    if not isinstance(name, str) or name.startswith("_") or name in DENIED_ATTRIBUTES:
        return False
    return hasattr(obj, name)


# --- the importable modules ---------------------------------------------------------------------------


class _Module(types.SimpleNamespace):
    """An allow-listed module namespace (not a module: ``from X import Y`` cannot reach ``sys.modules``)."""

    def __repr__(self) -> str:
        return f"<skill module {self.__dict__.get('name', '?')}>"


def _module(name: str, **members) -> _Module:
    ns = _Module(**members)
    ns.name = name
    return ns


def _pick(mod, names: str) -> dict:
    return {k: getattr(mod, k) for k in names.split()}


class _Counter(collections.Counter):
    """``collections.Counter`` whose ``elements()`` cannot stream 10**18 items from C."""

    def elements(self):
        total = sum(v for v in self.values() if isinstance(v, int) and v > 0)
        if total > MAX_SEQUENCE:
            raise too_big("Counter.elements()")
        return super().elements()


_Counter.__name__ = _Counter.__qualname__ = "Counter"


def _math_namespace() -> _Module:
    def factorial(n):
        if isinstance(n, int) and n > 5_000:
            raise too_big("factorial")
        return math.factorial(n)

    def comb(n, k):
        if isinstance(n, int) and n > MAX_INT_BITS:
            raise too_big("comb")
        return math.comb(n, k)

    def perm(n, k=None):
        if isinstance(n, int) and (k if isinstance(k, int) else n) * max(n.bit_length(), 1) > MAX_INT_BITS:
            raise too_big("perm")
        return math.perm(n, k)

    def prod(iterable, *, start=1):
        items = list(iterable)
        if len(items) > MAX_SEQUENCE:
            raise too_big("prod")
        bits = sum(x.bit_length() for x in items if isinstance(x, int))
        if bits + (start.bit_length() if isinstance(start, int) else 0) > MAX_INT_BITS:
            raise too_big("integer")
        return math.prod(items, start=start)

    def lcm(*ints):
        if sum(x.bit_length() for x in ints if isinstance(x, int)) > MAX_INT_BITS:
            raise too_big("integer")
        return math.lcm(*ints)

    members = {k: getattr(math, k) for k in dir(math) if not k.startswith("_")}
    members.update(factorial=factorial, comb=comb, perm=perm, prod=prod, lcm=lcm)
    return _module("math", **members)


def _random_namespace(rng: _random.Random) -> _Module:
    def choices(population, weights=None, *, cum_weights=None, k=1):
        if isinstance(k, int) and k > MAX_SEQUENCE:
            raise too_big("random.choices")
        return rng.choices(population, weights, cum_weights=cum_weights, k=k)

    def sample(population, k, *, counts=None):
        if isinstance(k, int) and k > MAX_SEQUENCE:
            raise too_big("random.sample")
        return rng.sample(population, k, counts=counts)

    members = _pick(rng, "random uniform randint randrange choice shuffle gauss")
    return _module("random", choices=choices, sample=sample, **members)


def make_modules(rng: _random.Random) -> dict[str, object]:
    """The modules a skill may import; ``random`` is the episode's seeded generator.

    Explicit allow-lists: no infinite iterators (``count``, ``cycle``, ``repeat``), no
    combinatorial ones, no ``collections.abc``, no ``User*`` classes (their methods run
    unguarded str/list code), nothing of ``functools`` that wraps or inspects functions.
    """
    return {
        "math": _math_namespace(),
        "random": _random_namespace(rng),
        "collections": _module(
            "collections",
            Counter=_Counter,
            **_pick(collections, "OrderedDict defaultdict deque namedtuple ChainMap"),
        ),
        "itertools": _module(
            "itertools",
            **_pick(
                itertools,
                "accumulate chain compress dropwhile filterfalse groupby islice pairwise starmap "
                "takewhile tee zip_longest",
            ),
        ),
        "heapq": _module(
            "heapq",
            **_pick(heapq, "heapify heappop heappush heappushpop heapreplace merge nlargest nsmallest"),
        ),
        "functools": _module("functools", **_pick(functools, "partial reduce lru_cache cache cmp_to_key")),
    }


ALLOWED_MODULES = ("math", "random", "collections", "itertools", "heapq", "functools")
#: Modules bound as globals of every skill (the paper's skills call random.choice unimported).
PREIMPORTED = ("math", "random")
#: Per-call budget of a skill unless an executor is given others.
DEFAULT_MAX_TICKS = 200_000
DEFAULT_MAX_SECONDS = 0.5

# Exceptions a skill must not be able to raise: they pass ``except Exception`` in host code.
_HOST_EXCEPTIONS = frozenset({"BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit"})


def make_builtins(modules: dict[str, object], budget: Budget) -> dict[str, object]:
    """Safe builtins plus the few extras skills commonly use, and an allow-listed ``__import__``."""

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level or name not in modules:
            raise SkillError(
                f"import of {safe_repr(name)} is not allowed; allowed: {', '.join(ALLOWED_MODULES)}",
                kind="policy",
            )
        module = modules[name]
        for member in fromlist or ():
            if member == "*" or member.startswith("_") or member == "name" or not hasattr(module, member):
                raise SkillError(f"{name} has no {safe_repr(member)} a skill may import", kind="policy")
        return module

    def guarded_iter(obj, *sentinel):
        if not sentinel:
            return iter(obj)
        if len(sentinel) > 1:
            raise TypeError("iter expected at most 2 arguments")
        return _call_until(obj, sentinel[0], budget)

    b = {k: v for k, v in safe_builtins.items() if k not in _HOST_EXCEPTIONS}
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
        "next",
        "isinstance",
    ):
        b[name] = getattr(builtins, name)
    b["getattr"] = checked_getattr
    b["hasattr"] = checked_hasattr
    b["iter"] = guarded_iter
    b["pow"] = guarded_pow
    b["range"] = guarded_range
    b["bytes"] = guarded_bytes
    b["__import__"] = guarded_import
    return b


def allowed_builtins() -> tuple[str, ...]:
    """Names of the builtins a skill can call (functions and types; exception classes left out), sorted.

    The prompts' sandbox rules are rendered from this, so they cannot contradict the sandbox.
    """
    granted = make_builtins({}, Budget(DEFAULT_MAX_TICKS, DEFAULT_MAX_SECONDS))
    return tuple(
        sorted(
            n
            for n, v in granted.items()
            if not n.startswith("_")
            and n not in ("True", "False", "None", "Ellipsis")
            and not (isinstance(v, type) and issubclass(v, BaseException))
        )
    )


def _call_until(fn, sentinel, budget: Budget):
    # iter(callable, sentinel) runs in C and never ends for iter(int, 1): tick every call.
    tick = budget.tick
    while True:
        tick()
        value = fn()
        if value == sentinel:
            return
        yield value


def guarded_bytes(*args, **kwargs):
    """``bytes`` that refuses to allocate a huge zero-filled buffer from an int."""
    if args and isinstance(args[0], int) and args[0] > MAX_SEQUENCE:
        raise too_big("bytes")
    return bytes(*args, **kwargs)


def guarded_range(*args):
    """``range`` capped at MAX_SEQUENCE elements."""
    r = range(*args)
    if len(r) > MAX_SEQUENCE:
        raise too_big("range")
    return r


_INPLACE = {
    "+=": operator.add,
    "-=": operator.sub,
    "*=": guarded_mul,
    "/=": operator.truediv,
    "//=": operator.floordiv,
    "%=": guarded_mod,
    "**=": guarded_pow,
    "<<=": guarded_lshift,
    ">>=": operator.rshift,
    "|=": operator.or_,
    "&=": operator.and_,
    "^=": operator.xor,
    "@=": operator.matmul,
}


def inplacevar(op: str, x, y):
    """RestrictedPython's hook for ``x op= y`` on names."""
    if op in ("+=", "-=") and type(x) in (int, float) and type(y) in (int, float):
        return x + y if op == "+=" else x - y
    if op == "+=" and isinstance(x, list):
        if _sized_len(y) is not None and len(x) + len(y) > MAX_SEQUENCE:
            raise too_big("list")
        x += y  # keep list identity, as Python does
        return x
    return _INPLACE[op](x, y)


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
        "_ctick_": budget.ctick,
        "_ret_": budget.returned,
        "_mul_": guarded_mul,
        "_pow_": guarded_pow,
        "_lshift_": guarded_lshift,
        "_mod_": guarded_mod,
        "_fmt_": format_value,
        "_print_": _NoPrint,
        "_apply_": _apply,
    }


def _apply(fn, *args, **kwargs):
    """RestrictedPython's hook for calls with ``*args``/``**kwargs``."""
    return fn(*args, **kwargs)


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


# --- the skill API, sealed ---------------------------------------------------------------------------


class Helper:
    """A skill API function as skills see it: callable, and nothing else reachable from it."""

    __slots__ = ("_fn", "_name")

    def __init__(self, fn, name: str) -> None:
        self._fn = fn
        self._name = name

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<skill API {self._name}>"


def freeze(value):
    """A read-only deep copy of API data: a skill cannot change what the host or other agents see."""
    if isinstance(value, (str, bytes, int, float, complex, bool, type(None), range)):
        return value
    if isinstance(value, (dict, types.MappingProxyType)):
        return types.MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    return value


class Sealer:
    """Seals a family's ``make_api`` dict per call; stable entries are sealed once and reused."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[object, object]] = {}

    def seal(self, api: dict[str, object]) -> dict[str, object]:
        out = {}
        for name, value in api.items():
            hit = self._cache.get(name)
            if hit is not None and hit[0] is value:
                out[name] = hit[1]
                continue
            if isinstance(value, types.ModuleType):
                raise TypeError(f"skill API entry {name!r} is a module; export its functions instead")
            sealed = Helper(value, name) if callable(value) else freeze(value)
            self._cache[name] = (value, sealed)
            out[name] = sealed
        return out


# --- error text that cannot recurse or explode -------------------------------------------------------

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = 120
_REPR.maxother = 120
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 8


def safe_repr(value) -> str:
    """A short repr of an untrusted value: bounded depth and length, never raises."""
    try:
        return _REPR.repr(value)[:300]
    except BaseException:  # a hostile value's repr must not take the host down
        return f"<{type(value).__name__}>"


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of a skill's exception, bounded (its args may be hostile values)."""
    args = exc.args
    if len(args) == 1 and isinstance(args[0], str):
        msg = args[0][:500]
    else:
        msg = ", ".join(safe_repr(a) for a in args[:4])
    name = type(exc).__name__[:60]
    return f"{name}: {msg}" if msg else name
