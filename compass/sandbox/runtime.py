"""Compile skill source once; run it every step on an agent's view, safely.

A failing skill never ends an episode: any exception, an exhausted budget or an action that is
not available becomes a :class:`SkillError` on the result, and the unit takes the family's safe
default action.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import CodeType, ModuleType
from typing import Protocol

import numpy as np

from compass.core.types import CURRENT_OBS, AgentView
from compass.sandbox.guards import (
    DEFAULT_MAX_SECONDS,
    DEFAULT_MAX_TICKS,
    PREIMPORTED,
    Budget,
    BudgetExceeded,
    Sealer,
    SkillError,
    exception_text,
    make_builtins,
    make_guards,
    make_modules,
    safe_repr,
)
from compass.sandbox.policy import compile_restricted_skill


def load_api(api: str | ModuleType) -> ModuleType:
    """The skill API module (``make_api(view, rng)``, ``default_action(view)``) by dotted path.

    The sandbox knows no game: each game family names its API module (``GameFamily.skill_api``),
    and a path (not the module) is what crosses into an isolated worker process.
    """
    return api if isinstance(api, ModuleType) else importlib.import_module(api)


@dataclass(frozen=True)
class CompiledSkill:
    """Skill source compiled under the sandbox policy."""

    name: str
    family: str
    source: str
    code: CodeType
    code_hash: str
    filename: str
    line_offset: int = 0
    #: False when the skill does nothing with its argument but ``parse_obs`` it: it is then called
    #: with :data:`~compass.core.types.CURRENT_OBS` and the view's text is never written for it.
    reads_text: bool = True


def code_hash(source: str) -> str:
    """Content hash used in traces and the embedding cache."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def _check_shape(tree: ast.Module, name: str, filename: str) -> None:
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    others = [
        n
        for n in tree.body
        if not isinstance(n, ast.FunctionDef)
        and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    if others:
        raise SkillError(
            f"{filename}:{others[0].lineno}: a skill file holds only its function "
            f"(found a top-level {type(others[0]).__name__})",
            name,
            "compile",
        )
    if [f.name for f in funcs] != [name]:
        raise SkillError(
            f"{filename}: expected exactly one function named {name!r}, found "
            f"{[f.name for f in funcs] or 'none'}",
            name,
            "compile",
        )
    args = funcs[0].args
    if len(args.args) != 1 or args.vararg or args.kwonlyargs or args.kwarg or args.defaults:
        raise SkillError(
            f"{filename}:{funcs[0].lineno}: {name} must take exactly one argument (obs), without a default",
            name,
            "compile",
        )
    if funcs[0].decorator_list:
        # A decorator runs when the file is loaded, outside any call's budget.
        raise SkillError(f"{filename}:{funcs[0].lineno}: {name} takes no decorators", name, "compile")


# The skill API functions that give the same answer for CURRENT_OBS as for the agent's own text.
_SERVES_CURRENT = frozenset({"parse_obs", "default_action"})


def reads_text(func: ast.FunctionDef) -> bool:
    """Whether a skill may see more of its argument than ``parse_obs(obs)`` gives it.

    False only when every use of the argument's name is the sole argument of a call to the API's
    ``parse_obs`` or ``default_action`` (which serve the same for :data:`CURRENT_OBS` as for the
    text) and the skill never binds those names itself; anything else (string tests, slicing,
    passing it to a helper, a nested function's own ``obs``) keeps the text. Conservative by
    construction: a False here can only be wrong if those names are not the API's, which the
    check excludes.
    """
    arg = func.args.args[0].arg
    served: set[int] = set()
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _SERVES_CURRENT
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == arg
        ):
            served.add(id(node.args[0]))
    for node in ast.walk(func):
        if isinstance(node, ast.Name):
            if node.id == arg and id(node) not in served:
                return True
            if node.id in _SERVES_CURRENT and not isinstance(node.ctx, ast.Load):
                return True
        elif isinstance(node, ast.arg) and node.arg in _SERVES_CURRENT:
            return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if getattr(node, "name", None) in _SERVES_CURRENT:
                return True
        elif isinstance(node, ast.alias) and (node.asname or node.name) in _SERVES_CURRENT:
            return True
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and set(node.names) & {arg, *_SERVES_CURRENT}:
            return True
    return False


def compile_skill(
    source: str, name: str, family: str, filename: str | None = None, line_offset: int = 0
) -> CompiledSkill:
    """Compile ``source`` defining ``def name(obs)``; errors say file and line.

    ``line_offset`` is the number of file lines before ``source`` (a skill file's metadata
    header), so that errors and tracebacks name lines of the file a person edits.
    """
    filename = filename or f"<skill {name}>"
    padded = "\n" * line_offset + source
    try:
        tree = ast.parse(padded, filename=filename)
    except SyntaxError as e:
        raise SkillError(f"{filename}:{e.lineno}: syntax error: {e.msg}", name, "compile") from None
    _check_shape(tree, name, filename)
    try:
        code = compile_restricted_skill(padded, filename)
    except SyntaxError as e:
        # RestrictedPython joins every violation ("Line N: ...") into one message.
        raise SkillError(
            f"{filename}: not allowed in a skill: {_restricted_errors(e)}", name, "compile"
        ) from None
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    return CompiledSkill(
        name, family, source, code, code_hash(source), filename, line_offset, reads_text(func)
    )


@dataclass
class SkillResult:
    """What one call produced: the action the unit takes and, if the skill failed, why."""

    action: int
    error: SkillError | None
    ticks: int
    seconds: float


class Executor(Protocol):
    """What runs compiled skills on views: in-process (:class:`SkillExecutor`) or isolated workers."""

    def run(self, skill: CompiledSkill, view: AgentView) -> SkillResult: ...

    def run_batch(
        self, items: Sequence[tuple[CompiledSkill, AgentView]], lanes: Sequence[int] | None = None
    ) -> list[SkillResult]:
        """All agents' calls of one step, in order (one round trip for an isolated executor);
        ``lanes[k]``: the lane (episode of a batch, :meth:`reset_lanes`) item ``k`` runs in."""
        ...

    def reset(self, seed: int) -> None:
        """Forget every namespace and reseed ``random``, as a fresh executor would start."""
        ...

    def reset_lanes(self, seeds: Sequence[int]) -> None:
        """One lane per seed, each as a fresh executor reset to that seed would be (its own
        namespaces and ``random`` stream): batched episodes share one executor and one batch
        per step, and each plays as it would alone."""
        ...

    def close(self) -> None: ...


class SkillExecutor:
    """Runs compiled skills in this process; keeps one namespace per (skill, agent).

    Per-agent namespaces keep decentralised agents from sharing state through module globals.
    For trusted skills only: the guards stop what can be stopped cheaply, but only the isolated
    workers bound memory and C-level work.
    """

    def __init__(
        self,
        api: str | ModuleType,
        seed: int | Sequence[int] = 0,
        max_ticks: int = DEFAULT_MAX_TICKS,
        max_seconds: float = DEFAULT_MAX_SECONDS,
        memory_note: str = "out of memory",
    ) -> None:
        self.api = load_api(api)
        self.budget = Budget(max_ticks, max_seconds)
        self.memory_note = memory_note
        self._sealer = Sealer()
        if isinstance(seed, int):
            self.reset(seed)
        else:
            self.reset_lanes(seed)

    def reset(self, seed: int) -> None:
        """Forget every namespace and reseed ``random``."""
        self.reset_lanes([seed])

    def reset_lanes(self, seeds: Sequence[int]) -> None:
        """One lane per seed, each with its own namespaces and ``random`` (see :class:`Executor`)."""
        self._lanes = [self._fresh_lane(seed) for seed in seeds]
        self._lane = -1
        self._use_lane(0)

    def _fresh_lane(self, seed: int) -> tuple:
        rng = random.Random(seed)
        modules = make_modules(rng)
        # math and random are pre-imported: the paper's skills call random.choice without importing it.
        base = {
            "__builtins__": make_builtins(modules, self.budget),
            **make_guards(self.budget),
            **{name: modules[name] for name in PREIMPORTED},
        }
        return rng, base, {}

    def _use_lane(self, lane: int) -> None:
        if lane != self._lane:
            self.rng, self._base, self._namespaces = self._lanes[lane]
            self._lane = lane

    def _namespace(self, skill: CompiledSkill, agent_id: int) -> dict:
        key = (skill.code_hash, agent_id)
        ns = self._namespaces.get(key)
        if ns is None:
            ns = dict(self._base)
            ns["__name__"] = f"skill_{skill.name}"
            exec(skill.code, ns)  # defines the skill function only (shape checked at compile)
            self._namespaces[key] = ns
        return ns

    def close(self) -> None:
        """Nothing to release in-process (the isolated executor stops its workers)."""

    def run_batch(
        self, items: Sequence[tuple[CompiledSkill, AgentView]], lanes: Sequence[int] | None = None
    ) -> list[SkillResult]:
        """Run each (skill, view) in order (item ``k`` in lane ``lanes[k]``; default lane 0)."""
        if lanes is None:
            return [self.run(skill, view) for skill, view in items]
        return [self.run(skill, view, lane) for (skill, view), lane in zip(items, lanes, strict=True)]

    def run(self, skill: CompiledSkill, view: AgentView, lane: int = 0) -> SkillResult:
        """Call the skill on ``view.text`` (or :data:`CURRENT_OBS`, see ``reads_text``) in ``lane``;
        never raises for skill faults."""
        self._use_lane(lane)
        start = time.perf_counter()
        budget = self.budget
        budget.start()
        error: SkillError | None = None
        action = None
        try:
            # Loading the file runs skill code too (annotations): inside the budget and the try.
            ns = self._namespace(skill, view.agent_id)
            ns.update(self._sealer.seal(self.api.make_api(view, self.rng)))
            action = ns[skill.name](view.text if skill.reads_text else CURRENT_OBS)
        except SkillError as e:
            e.skill = skill.name
            e.traceback = _skill_traceback(skill)
            error = e
        except RecursionError:
            error = SkillError(
                f"{skill.name}: recursion too deep", skill.name, "budget", _skill_traceback(skill)
            )
        except MemoryError:
            error = SkillError(f"{skill.name}: {self.memory_note}", skill.name, "resource")
        except KeyboardInterrupt:
            raise  # a real Ctrl-C: skills cannot name KeyboardInterrupt (it is not in their builtins)
        except BaseException as e:  # any fault in untrusted code becomes a recorded error, by design
            error = SkillError(
                f"{skill.name}: {exception_text(e)}", skill.name, "runtime", _skill_traceback(skill)
            )
        if budget.tripped is not None and (error is None or error.kind != "budget"):
            # The skill caught the budget exception and went on: its result does not count.
            error = BudgetExceeded(
                f"{skill.name}: {budget.tripped} (the skill caught it)", skill.name, "budget"
            )
        if error is None:
            error = _check_action(skill, action, view, budget.line)
        if error is not None:
            action = self.api.default_action(view)
        return SkillResult(int(action), error, budget.ticks, time.perf_counter() - start)


def _describe(value: object) -> str:
    if value is None or type(value) in (str, float, bool):
        return f"{safe_repr(value)} ({type(value).__name__})"
    return f"a {type(value).__name__[:60]}"


def _check_action(
    skill: CompiledSkill, action: object, view: AgentView, line: int | None
) -> SkillError | None:
    name = skill.name
    where = f"{skill.filename}:{line}: " if line is not None else f"{skill.filename}: "
    # Exactly an int (numpy ints from API data too): a host object or an int subclass is refused
    # before anything calls its methods.
    if type(action) is not int and not isinstance(action, np.integer):
        tail = "" if line is not None else " (no return statement reached)"
        return SkillError(
            f"{where}{name} returned {_describe(action)}, not an action index{tail}", name, "invalid_action"
        )
    if int(action) not in view.avail_actions:
        return SkillError(
            f"{where}{name} returned action {int(action)}, which is not available "
            f"(available: {list(view.avail_actions)})",
            name,
            "invalid_action",
        )
    return None


def _skill_traceback(skill: CompiledSkill, limit: int = 8) -> str:
    """The traceback lines inside the skill's own file, so a VLM repairing it sees only its code.

    Walks the frames directly (no ``linecache``: nothing is read from disk) and keeps the last
    ``limit`` skill frames (a runaway recursion has a thousand).
    """
    exc = sys.exc_info()[1]
    tb = sys.exc_info()[2]
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == skill.filename:
            frames.append((tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    lines = [""] * skill.line_offset + skill.source.splitlines()
    out = [
        f'  File "{skill.filename}", line {n}, in {fn}\n    {lines[n - 1].strip() if 0 < n <= len(lines) else ""}'
        for n, fn in frames[-limit:]
    ]
    if len(frames) > limit:
        out.insert(0, f"  ... {len(frames) - limit} more frames")
    return "Traceback (skill frames):\n" + "\n".join(out) + f"\n{exception_text(exc)}"


def _restricted_errors(e: SyntaxError) -> str:
    errors = e.args[0] if e.args and isinstance(e.args[0], (tuple, list)) else e.args
    return "; ".join(str(x) for x in errors)
