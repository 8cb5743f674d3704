"""Turning VLM code into library skills: merge into a parent skill, name, validate.

How synthesis works is the game family's choice (``GameFamily.synthesis``):

* ``refine`` (combat): the library's skills define nested ``score_target(unit)`` /
  ``control_logic()`` helpers (the paper's Listing 1). Skill Synthesis asks for one improved
  helper; :func:`merge_nested` puts it in place of the parent's (by ``ast`` positions, so the
  parent's comments and layout survive) and the result is renamed ``<parent>_<slug of the
  sub-task>`` (:func:`build_candidate`). A whole ``def skill(obs)`` is accepted too.
* ``whole`` (ALEM): the model writes a complete ``def name(obs)``; :func:`whole_candidate` keeps
  its name (when it is a usable one) and docstring.

Nothing reaches the library before :func:`try_skill` compiled it in the sandbox and ran it on the
current observation.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from compass.core.errors import CompassError
from compass.core.family import get_family
from compass.core.types import AgentView
from compass.sandbox import SkillError, compile_skill
from compass.sandbox.executors import candidate_executor
from compass.skills.skill import Skill, rename_function

NESTED = ("score_target", "control_logic")
MAX_NAME = 64
_STOP = frozenset(
    """a an the to of and or in on at by for with when where while is are be based
    their its his her your our than then that this these those into from as if implement adjust
    use using make set ensure""".split()
)


class MergeError(CompassError, ValueError):
    """The generated code cannot be turned into a skill (wrong shape, unknown helper...).

    ``cause`` names the stage that refused it: ``shape``, ``syntax``, ``encoding``, ``recursion``,
    ``renaming`` or ``docstring``; the planner records it with the rejection.
    """

    def __init__(self, message: str, cause: str = "shape") -> None:
        super().__init__(message)
        self.cause = cause


def parse_code(code: str, what: str = "generated code") -> ast.Module:
    """``ast.parse`` whose every failure is a :class:`MergeError` (a model's code can be anything)."""
    with stage("syntax", what):
        return ast.parse(code)


@contextmanager
def stage(cause: str, what: str = "generated code") -> Iterator[None]:
    """Turn any exception inside into a :class:`MergeError` naming ``cause``.

    Model-written code reaches ``ast`` and string surgery here: lone surrogates raise
    ``UnicodeEncodeError``, deep expressions ``RecursionError``, null bytes ``ValueError``.
    """
    try:
        yield
    except MergeError:
        raise
    except SyntaxError as exc:
        raise MergeError(f"{what} does not parse: line {exc.lineno}: {exc.msg}", "syntax") from None
    except UnicodeError as exc:
        raise MergeError(f"{what} is not valid text: {exc.reason}", "encoding") from None
    except (RecursionError, MemoryError):
        raise MergeError(f"{what} is nested too deeply to process", "recursion") from None
    except Exception as exc:  # anything else is still this candidate's failure, not the planner's
        raise MergeError(f"{what}: {cause} failed: {type(exc).__name__}: {exc}", cause) from None


@dataclass(frozen=True)
class Candidate:
    """Source of a would-be skill, before validation."""

    name: str
    code: str
    replaced: str  # "score_target" | "control_logic" | "skill" (whole function) | "repair"


def _outer(tree: ast.Module, name: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise MergeError(f"no top-level function {name!r}")


def nested_functions(code: str, name: str) -> set[str]:
    """Names of functions defined inside skill ``name``'s body (empty if the code does not parse)."""
    try:
        outer = _outer(parse_code(code), name)
    except MergeError:
        return set()
    return {n.name for n in ast.walk(outer) if isinstance(n, ast.FunctionDef) and n is not outer}


def main_function(code: str) -> ast.FunctionDef:
    """The reply's function: the last top-level ``def`` that is a known helper, else the last ``def``."""
    tree = parse_code(textwrap.dedent(code))
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not funcs:
        raise MergeError("generated code defines no function")
    helpers = [f for f in funcs if f.name in NESTED]
    return (helpers or funcs)[-1]


def _check_signature(fn: ast.FunctionDef) -> None:
    n = len(fn.args.args) + len(fn.args.posonlyargs)
    if fn.name == "score_target" and n != 1:
        raise MergeError(f"score_target must take exactly one parameter (unit), got {n}")
    if fn.name == "control_logic" and n != 0:
        raise MergeError(f"control_logic must take no parameters, got {n}")


def merge_nested(parent_code: str, parent_name: str, new_code: str) -> tuple[str, str]:
    """``parent_code`` with its nested helper replaced by the one ``new_code`` defines.

    Returns ``(merged source, helper name)``. Everything in ``new_code`` (helper functions,
    imports) goes where the old helper was, re-indented. Raises :class:`MergeError`.
    """
    fn = main_function(new_code)
    if fn.name not in NESTED:
        raise MergeError(f"expected score_target(unit) or control_logic(), got {fn.name}()")
    _check_signature(fn)
    outer = _outer(parse_code(parent_code, f"parent {parent_name}"), parent_name)
    targets = [
        n for n in ast.walk(outer) if isinstance(n, ast.FunctionDef) and n is not outer and n.name == fn.name
    ]
    if not targets:
        raise MergeError(f"{parent_name} has no nested {fn.name}() to replace")
    target = targets[0]
    start = min([target.lineno] + [d.lineno for d in target.decorator_list])
    end = target.end_lineno or target.lineno
    indent = " " * target.col_offset
    block = textwrap.dedent(new_code).strip("\n").splitlines()
    lines = parent_code.splitlines()
    lines[start - 1 : end] = [indent + line if line.strip() else "" for line in block]
    return "\n".join(lines) + "\n", fn.name


def set_docstring(code: str, name: str, doc: str) -> str:
    """``code`` with function ``name``'s docstring replaced (or added) by ``doc``."""
    outer = _outer(parse_code(code), name)
    first = outer.body[0]
    indent = " " * first.col_offset
    doc = doc.replace("\\", "/").replace('"""', "'''").strip()
    new = [
        f'{indent}"""{line}' if i == 0 else (f"{indent}{line}" if line else "")
        for i, line in enumerate(doc.splitlines())
    ]
    new[-1] += '"""'
    lines = code.splitlines()
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        lines[first.lineno - 1 : (first.end_lineno or first.lineno)] = new
    else:
        lines[first.lineno - 1 : first.lineno - 1] = new
    return "\n".join(lines) + "\n"


def whole_skill(code: str, name: str) -> str:
    """A complete ``def anything(obs)`` reply, renamed to ``name``."""
    source = textwrap.dedent(code).strip("\n") + "\n"
    fn = main_function(source)
    if len(fn.args.args) != 1:
        raise MergeError(
            f"a whole skill takes exactly one parameter (obs); {fn.name} takes {len(fn.args.args)}"
        )
    tree = parse_code(source)
    extra = [
        n
        for n in tree.body
        if not (isinstance(n, ast.FunctionDef) and n.name == fn.name)
        and not isinstance(n, ast.Import | ast.ImportFrom)
    ]
    if extra:
        raise MergeError("a whole skill must be one function (found other top-level code)")
    # Top-level imports are dropped: math and random are provided to every skill.
    only_fn = "\n".join(source.splitlines()[fn.lineno - 1 : fn.end_lineno]) + "\n"
    return rename_function(only_fn, fn.name, name)


def slug(text: str, words: int = 4) -> str:
    """A lower_snake_case slug of the content words of ``text`` (``"skill"`` if none)."""
    tokens = [t for t in re.findall(r"[a-z][a-z0-9]*", text.lower()) if t not in _STOP]
    return "_".join(tokens[:words]) or "skill"


def generated_name(parent: str, subtask: str) -> str:
    """``<parent>_<slug>``, trimmed to :data:`MAX_NAME` characters at a word boundary."""
    base = re.sub(r"_v\d+$", "", parent)
    name = f"{base}_{slug(subtask)}"
    while len(name) > MAX_NAME and "_" in name:
        name = name.rsplit("_", 1)[0]
    return name[:MAX_NAME].rstrip("_")


def build_candidate(code: str, parent: Skill, name: str, subtask: str) -> Candidate:
    """Merge a helper into ``parent`` (or take a whole skill), rename, document.

    Raises :class:`MergeError` for every way the code can fail, never anything else.
    """
    with stage("shape"):
        fn = main_function(code)
        helpers = nested_functions(parent.code, parent.name)
    if fn.name in NESTED and fn.name in helpers:
        with stage("shape"):
            merged, replaced = merge_nested(parent.code, parent.name, code)
        with stage("renaming", "merged code"):
            merged = rename_function(merged, parent.name, name)
    elif fn.name in NESTED:
        raise MergeError(f"{parent.name} has no nested {fn.name}() to replace")
    else:
        with stage("renaming"):
            merged, replaced = whole_skill(code, name), "skill"
    summary = parent.description.split("\n\n")[0].strip() if parent.description else ""
    doc = f"{subtask.strip().rstrip('.')}.\n\nRefines {parent.name} (new {replaced})."
    if summary:  # children keep what their parent is for
        doc += f" {summary}"
    with stage("docstring", "merged code"):
        return Candidate(name, set_docstring(merged, name, doc), replaced)


def apply_fix(reply: str, code: str, name: str) -> str:
    """A repair reply as a skill named ``name``: a whole function, or one helper merged into ``code``.

    Raises :class:`MergeError` for every way the reply can fail, never anything else.
    """
    with stage("shape"):
        fn = main_function(reply)
        if fn.name in NESTED:
            return merge_nested(code, name, reply)[0]
    with stage("renaming"):
        return whole_skill(reply, name)


_PLACEHOLDER_NAMES = frozenset({"skill_name", "function_name", "name", "skill", "new_skill"})


def whole_candidate(code: str, subtask: str) -> Candidate:
    """A complete skill function written by the model (``whole`` synthesis). Raises MergeError.

    The model's function name is kept when it is a usable lower_snake_case name (not a template
    placeholder such as ``skill_name``), else the sub-task's slug is used; its docstring (what
    retrieval embeds) is kept, else the sub-task becomes the docstring.
    """
    with stage("shape"):
        source = textwrap.dedent(code).strip("\n") + "\n"
        fn = main_function(source)
    if fn.name in NESTED:
        raise MergeError(f"expected a complete skill function def name(obs), got the helper {fn.name}()")
    name = fn.name.lower()
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name in _PLACEHOLDER_NAMES or len(name) > MAX_NAME:
        name = slug(subtask)
    with stage("renaming"):
        merged = whole_skill(source, name)
    with stage("docstring", "renamed code"):
        if ast.get_docstring(_outer(parse_code(merged), name)) is None:
            merged = set_docstring(merged, name, subtask.strip().rstrip(".") + ".")
    return Candidate(name, merged, "skill")


def try_skill(
    code: str, name: str, family: str, view: AgentView, seed: int = 0, isolation: str = "process"
) -> SkillError | None:
    """Compile ``code`` in the sandbox and run it once on ``view``; the error, or None if it works.

    The candidate runs through the same executor as episodes (``isolation`` is the run's), so a
    generated skill that hangs or allocates gigabytes is stopped here, not in the episode.
    """
    try:
        compiled = compile_skill(code, name, family, f"<generated {name}>")
    except SkillError as exc:
        return exc
    except (RecursionError, MemoryError):
        return SkillError(f"{name}: nested too deeply to compile", name, "compile")
    except Exception as exc:  # RestrictedPython or compile() choking on model code is a rejection
        return SkillError(f"{name}: does not compile: {type(exc).__name__}: {exc}", name, "compile")
    try:
        with candidate_executor(get_family(family).skill_api, seed, isolation) as executor:
            return executor.run(compiled, view).error
    except Exception as exc:  # the executor contains skill faults; this is a last line of defence
        return SkillError(f"{name}: {type(exc).__name__}: {exc}", name, "runtime")
