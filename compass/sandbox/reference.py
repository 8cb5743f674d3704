"""What a skill may use, as prompt text rendered from the code that enforces it.

:func:`api_reference` lists a skill API module's exported names (``EXPORTS``) with their
signatures and the first line of their docstrings, plus the fields of the observation type its
``parse_obs`` returns; :func:`sandbox_rules` lists the builtins, modules and limits of the
sandbox. The synthesis and repair prompts embed both (``<<<skill_api>>>``, ``<<<sandbox_rules>>>``),
so a prompt cannot offer a helper that does not exist or forbid a builtin the sandbox grants.

An API module provides ``EXPORTS`` (names), ``make_api(view, rng)`` (which must not read ``view``
before a helper is called: the reference is rendered from ``make_api(None, rng)``) and optionally
``OBSERVATION_TYPES`` (the type ``parse_obs`` returns, then the record types it holds).
"""

from __future__ import annotations

import dataclasses
import inspect
import random
from types import ModuleType

from compass.sandbox.guards import (
    ALLOWED_MODULES,
    DEFAULT_MAX_SECONDS,
    DEFAULT_MAX_TICKS,
    PREIMPORTED,
    allowed_builtins,
    make_modules,
)

MAX_VALUE_CHARS = 90  # constants with a longer repr are shown by type and size


def first_line(doc: str | None) -> str:
    """The first sentence-line of a docstring (``""`` if none)."""
    return (inspect.cleandoc(doc).splitlines() or [""])[0].strip() if doc else ""


def _annotation(ann: object) -> str:
    if ann is inspect.Parameter.empty:
        return ""
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
    return text.replace("'", "")


def signature(name: str, fn: object) -> str:
    """``name(a: int, b: str = 'x') -> int`` as a skill calls it (annotations as written)."""
    try:
        sig = inspect.signature(fn)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"{name}(...)"
    params = []
    for p in sig.parameters.values():
        text = p.name
        ann = _annotation(p.annotation)
        if ann:
            text += f": {ann}"
        if p.default is not inspect.Parameter.empty:
            text += f" = {p.default!r}" if ann else f"={p.default!r}"
        params.append(text)
    ret = _annotation(sig.return_annotation)
    return f"{name}({', '.join(params)})" + (f" -> {ret}" if ret else "")


def _doc(fn: object) -> str:
    doc = getattr(fn, "__doc__", None)
    if doc is None and hasattr(fn, "func"):  # functools.partial
        doc = fn.func.__doc__  # type: ignore[attr-defined]
    return first_line(doc)


def _constant(name: str, value: object) -> str:
    text = repr(value)
    if len(text) <= MAX_VALUE_CHARS:
        return f"{name} = {text}"
    size = f" of {len(value)}" if hasattr(value, "__len__") else ""  # type: ignore[arg-type]
    return f"{name}: {type(value).__name__}{size}"


def type_fields(cls: type) -> list[str]:
    """Public data fields (``name: type`` where declared), properties and ``.methods()`` of ``cls``."""
    out: list[str] = []
    if dataclasses.is_dataclass(cls):
        out += [
            f"{f.name}: {_annotation(f.type)}" for f in dataclasses.fields(cls) if not f.name.startswith("_")
        ]
    else:
        slots = [s for k in reversed(cls.__mro__) for s in getattr(k, "__slots__", ())]
        if slots:
            out += [s for s in dict.fromkeys(slots) if not s.startswith("_")]
        else:
            try:
                out += [k for k in vars(cls()) if not k.startswith("_")]
            except TypeError:  # needs arguments: nothing to show without an instance
                pass
    for k, v in vars(cls).items():
        if k.startswith("_"):
            continue
        if isinstance(v, property):
            out.append(k)
        elif inspect.isfunction(v):
            sig = signature(k, v).replace("(self, ", "(").replace("(self)", "()")
            out.append("." + sig)  # a method: called on the object
    return out


def api_reference(module: ModuleType) -> str:
    """The API section of a prompt: every exported name with its signature and first doc line."""
    api = module.make_api(None, random.Random(0))
    missing = [n for n in module.EXPORTS if n not in api]
    if missing:
        raise ValueError(f"{module.__name__}: EXPORTS names {missing} that make_api does not provide")
    lines = ["Skill API (globals of every skill; do not import them):"]
    constants = []
    for name in module.EXPORTS:
        value = api[name]
        if callable(value) and not isinstance(value, type):
            doc = _doc(value)
            lines.append(f"- {signature(name, value)}" + (f": {doc}" if doc else ""))
        else:
            constants.append(_constant(name, value))
    if constants:
        lines.append("- Constants: " + "; ".join(constants))
    types = getattr(module, "OBSERVATION_TYPES", ())
    for k, cls in enumerate(types):
        head = f"{cls.__name__} (what parse_obs returns)" if k == 0 else cls.__name__
        lines.append(f"- {head}: {', '.join(type_fields(cls))}")
    return "\n".join(lines)


def module_members() -> dict[str, tuple[str, ...]]:
    """What each importable module offers a skill (its allow-listed public names), by module."""
    modules = make_modules(random.Random(0))
    return {
        name: tuple(sorted(k for k in vars(modules[name]) if not k.startswith("_") and k != "name"))
        for name in ALLOWED_MODULES
    }


def sandbox_rules(max_ticks: int = DEFAULT_MAX_TICKS, max_seconds: float = DEFAULT_MAX_SECONDS) -> str:
    """The sandbox's rules as a prompt section: builtins, modules, refused constructs, budget."""
    members = module_members()
    offers = "; ".join(f"{name}: {', '.join(members[name])}" for name in ALLOWED_MODULES if name != "math")
    return "\n".join(
        [
            "Sandbox rules (enforced when the skill is compiled and run):",
            f"- Builtins: {', '.join(allowed_builtins())}, and the standard exception classes "
            "(ValueError, KeyError, ...). No other builtin exists (no open, eval, exec, compile, "
            "globals, input); print writes nothing.",
            f"- Modules: {' and '.join(PREIMPORTED)} are already globals; `import` works only for "
            f"{', '.join(ALLOWED_MODULES)}. math has its usual functions and constants; the others "
            f"offer only: {offers} (random is seeded per episode).",
            '- Refused: names and attributes starting with "_", str.format (use f-strings or %), '
            "other imports, huge sequences, strings or integers.",
            f"- Budget per call: {max_ticks} loop iterations and {max_seconds:g} s. A skill that raises, "
            "runs out of budget or returns an action that is not available is replaced by the default "
            "action for that step and reported as an error.",
        ]
    )
