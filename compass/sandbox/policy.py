"""Compile-time policy for skill code: RestrictedPython plus budget ticks and size guards.

RestrictedPython refuses imports of anything but our allow-list, ``open``/``eval``, names and
attributes starting with ``_`` and frame/code introspection. It does not stop infinite loops,
memory bombs or format-string tricks, so this policy also

* refuses ``.format``/``.format_map`` (format strings reach attributes the policy forbids; skills
  have f-strings), and numpy's ``tofile``/``dump``/``ctypes`` (``guards.DENIED_ATTRIBUTES``);
* ticks the budget at the top of every ``for``/``while`` body, in every comprehension item and at
  the entry of every function (iteration and call counts are deterministic, unlike a clock, so
  traces stay reproducible; calls are counted so catch-and-recurse cannot run exponentially);
* routes ``*``, ``**``, ``<<`` and ``%`` through size-checking guards, and f-string format
  specs through a width check (``'a' * 10**10``, ``f"{x:>{10**9}}"`` and friends);
* reads attributes directly, except the ``SIZED_METHODS`` (``join``, ``center``, ...) that go
  through the runtime guard (a guard on every read only costs time);
* records the line of the skill function's ``return``, so a bad action names its line;
* allows ``a[k] += v`` (the paper's skills use it), writing through the ``_write_`` guard.
"""

from __future__ import annotations

import ast

from RestrictedPython import compile_restricted
from RestrictedPython.transformer import RestrictingNodeTransformer

from compass.sandbox.guards import DENIED_ATTRIBUTES, SIZED_METHODS, SkillError, check_format_spec

_GUARDED_BINOPS = {ast.Mult: "_mul_", ast.Pow: "_pow_", ast.LShift: "_lshift_", ast.Mod: "_mod_"}


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(name, ast.Load()), args=list(args), keywords=[])


def _tick() -> ast.Expr:
    return ast.Expr(value=_call("_tick_"))


def _is_number_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_float_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float


def _static_mod_ok(node: ast.BinOp) -> bool:
    """``x % 3`` or a literal format string with small widths needs no runtime guard."""
    left = node.left
    if _is_number_literal(left):
        return True
    if isinstance(left, ast.Constant) and isinstance(left.value, str):
        from compass.sandbox.guards import _PERCENT_SPEC

        try:
            for m in _PERCENT_SPEC.findall(left.value):
                check_format_spec(m[1:])
        except SkillError:
            return False
        return True
    return False


def _insert_after_docstring(body: list[ast.stmt], stmt: ast.stmt) -> None:
    docstring = body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    body.insert(1 if docstring and len(body) > 1 else 0, stmt)


class SkillPolicy(RestrictingNodeTransformer):
    """RestrictedPython's transformer with ticks, guarded big operators, item aug-assign."""

    _depth = 0  # function nesting; 1 inside the skill function itself

    def visit_For(self, node: ast.For) -> ast.AST:
        node = super().visit_For(node)
        node.body.insert(0, ast.fix_missing_locations(ast.copy_location(_tick(), node.body[0])))
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        node = super().visit_While(node)
        node.body.insert(0, ast.fix_missing_locations(ast.copy_location(_tick(), node.body[0])))
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        node = super().visit_comprehension(node)
        tick = ast.fix_missing_locations(ast.copy_location(_call("_ctick_"), node.iter))
        node.ifs.insert(0, tick)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self._depth += 1
        try:
            node = super().visit_FunctionDef(node)
        finally:
            self._depth -= 1
        _insert_after_docstring(
            node.body, ast.fix_missing_locations(ast.copy_location(_tick(), node.body[0]))
        )
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        self.error(node, "async functions are not allowed in skills")
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        node = super().visit_Return(node)
        if self._depth == 1:  # the skill function's own return: remember the line
            value = node.value if node.value is not None else ast.Constant(None)
            node.value = ast.fix_missing_locations(
                ast.copy_location(_call("_ret_", value, ast.Constant(node.lineno)), node)
            )
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if node.attr in DENIED_ATTRIBUTES:
            hint = "; use an f-string" if node.attr in ("format", "format_map") else ""
            self.error(node, f'"{node.attr}" is not allowed in skills{hint}')
        node = super().visit_Attribute(node)  # refuses _names and frame/code attributes
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_getattr_"
            and node.args[1].value not in SIZED_METHODS
        ):
            return ast.copy_location(
                ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load()), node
            )
        return node

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.AST:
        node = self.node_contents_visit(node)
        if node.format_spec is None:
            return node
        # f"{v!c:spec}" -> f"{_fmt_(v, f'spec', c)}": the width is checked before format() runs.
        value = _call("_fmt_", node.value, node.format_spec, ast.Constant(node.conversion))
        return ast.fix_missing_locations(
            ast.copy_location(ast.FormattedValue(value=value, conversion=-1, format_spec=None), node)
        )

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        node = self.node_contents_visit(node)
        guard = _GUARDED_BINOPS.get(type(node.op))
        if guard is None:
            return node
        if guard == "_mod_":
            if _static_mod_ok(node):
                return node
        elif _is_float_literal(node.left) or _is_float_literal(node.right):
            return node  # a float operand cannot build a big sequence or a huge int (hot code)
        return ast.fix_missing_locations(ast.copy_location(_call(guard, node.left, node.right), node))

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.target, (ast.Subscript, ast.Attribute)):
            node = self.node_contents_visit(node)
            target = node.target
            # The container is written through the write guard, like a plain item assignment.
            target.value = ast.fix_missing_locations(
                ast.copy_location(_call("_write_", target.value), target)
            )
            guard = _GUARDED_BINOPS.get(type(node.op))
            if guard is None:
                return node
            load = type(target)(**{**{f: getattr(target, f) for f in target._fields}, "ctx": ast.Load()})
            value = ast.copy_location(_call(guard, load, node.value), node)
            return ast.fix_missing_locations(
                ast.copy_location(ast.Assign(targets=[target], value=value), node)
            )
        return super().visit_AugAssign(node)


def compile_restricted_skill(source: str, filename: str):
    """Compile skill source under :class:`SkillPolicy`; raises ``SyntaxError`` with all errors."""
    return compile_restricted(source, filename=filename, mode="exec", policy=SkillPolicy)
