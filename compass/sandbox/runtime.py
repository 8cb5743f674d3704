"""Compile skill source once; run it every step on an agent's view, safely.

A failing skill never ends an episode: any exception, an exhausted budget or an action that is
not available becomes a :class:`SkillError` on the result, and the unit takes the family's safe
default action.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import numbers
import random
import sys
import time
import traceback
from dataclasses import dataclass
from types import CodeType, ModuleType
from typing import Protocol

from compass.core.types import AgentView
from compass.sandbox.guards import Budget, SkillError, make_builtins, make_guards, make_modules
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
    if len(args.args) != 1 or args.vararg or args.kwonlyargs:
        raise SkillError(
            f"{filename}:{funcs[0].lineno}: {name} must take exactly one argument (obs)", name, "compile"
        )


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
    return CompiledSkill(name, family, source, code, code_hash(source), filename, line_offset)


@dataclass
class SkillResult:
    """What one call produced: the action the unit takes and, if the skill failed, why."""

    action: int
    error: SkillError | None
    ticks: int
    seconds: float


class Executor(Protocol):
    """What runs a compiled skill on a view: in-process (:class:`SkillExecutor`) or isolated."""

    def run(self, skill: CompiledSkill, view: AgentView) -> SkillResult: ...

    def close(self) -> None: ...


class SkillExecutor:
    """Runs compiled skills for one episode; keeps one namespace per (skill, agent).

    Per-agent namespaces keep decentralised agents from sharing state through module globals.
    """

    def __init__(
        self, api: str | ModuleType, seed: int = 0, max_ticks: int = 200_000, max_seconds: float = 0.5
    ) -> None:
        self.api = load_api(api)
        self.rng = random.Random(seed)
        self.budget = Budget(max_ticks, max_seconds)
        modules = make_modules(self.rng)
        # math and random are pre-imported: the paper's skills call random.choice without importing it.
        self._base = {
            "__builtins__": make_builtins(modules),
            **make_guards(self.budget),
            "math": modules["math"],
            "random": modules["random"],
        }
        self._namespaces: dict[tuple[str, int], dict] = {}

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
        """Nothing to release in-process (the process-isolated executor stops its worker)."""

    def run(self, skill: CompiledSkill, view: AgentView) -> SkillResult:
        """Call the skill on ``view.text``; never raises for skill faults."""
        start = time.perf_counter()
        ns = self._namespace(skill, view.agent_id)
        ns.update(self.api.make_api(view, self.rng))
        self.budget.start()
        error: SkillError | None = None
        action = None
        try:
            action = ns[skill.name](view.text)
        except SkillError as e:
            e.skill = skill.name
            e.traceback = _skill_traceback(skill)
            error = e
        except RecursionError:
            error = SkillError(
                f"{skill.name}: recursion too deep", skill.name, "budget", _skill_traceback(skill)
            )
        except Exception as e:  # any fault in untrusted code becomes a recorded error, by design
            error = SkillError(
                f"{skill.name}: {type(e).__name__}: {e}", skill.name, "runtime", _skill_traceback(skill)
            )
        if error is None:
            error = _check_action(skill.name, action, view)
        if error is not None:
            action = self.api.default_action(view)
        return SkillResult(int(action), error, self.budget.ticks, time.perf_counter() - start)


def _check_action(name: str, action: object, view: AgentView) -> SkillError | None:
    if isinstance(action, bool) or not isinstance(action, numbers.Integral):
        return SkillError(
            f"{name} returned {action!r} ({type(action).__name__}), not an action index",
            name,
            "invalid_action",
        )
    if int(action) not in view.avail_actions:
        return SkillError(
            f"{name} returned action {action}, which is not available "
            f"(available: {list(view.avail_actions)})",
            name,
            "invalid_action",
        )
    return None


def _skill_traceback(skill: CompiledSkill) -> str:
    """The traceback lines inside the skill's own file, so a VLM repairing it sees only its code."""
    frames = [f for f in traceback.extract_tb(sys.exc_info()[2]) if f.filename == skill.filename]
    lines = [""] * skill.line_offset + skill.source.splitlines()
    out = [
        f'  File "{skill.filename}", line {f.lineno}, in {f.name}\n    '
        f"{lines[f.lineno - 1].strip() if 0 < f.lineno <= len(lines) else ''}"
        for f in frames
    ]
    exc = sys.exc_info()[1]
    return "Traceback (skill frames):\n" + "\n".join(out) + f"\n{type(exc).__name__}: {exc}"


def _restricted_errors(e: SyntaxError) -> str:
    errors = e.args[0] if e.args and isinstance(e.args[0], (tuple, list)) else e.args
    return "; ".join(str(x) for x in errors)


def make_executor(api: str, seed: int, isolation: str = "inprocess") -> Executor:
    """The executor for a run: in-process (fast, guarded) or a worker process (memory-capped)."""
    if isolation == "process":
        from compass.sandbox.isolated import IsolatedExecutor

        return IsolatedExecutor(api, seed=seed)
    if isolation != "inprocess":
        raise ValueError(f"unknown isolation {isolation!r}; valid: inprocess, process")
    return SkillExecutor(api, seed=seed)
