"""Compile-time policy for skill code: RestrictedPython plus a per-call execution budget.

RestrictedPython refuses imports of anything but our allow-list, ``open``/``eval``, names and
attributes starting with ``_`` and frame/code introspection. It does not stop infinite loops or
memory bombs, so this policy also

* inserts a ``_tick_()`` call at the top of every ``for``/``while`` body (an iteration budget that
  is deterministic, unlike a wall-clock one, so traces stay reproducible);
* routes ``*``, ``**`` and ``<<`` through size-checking guards (``'a' * 10**10`` and friends);
* allows ``a[k] += v`` (the paper's skills use it), writing through the ``_write_`` guard;
* reads attributes directly except ``format``/``format_map`` (the names RestrictedPython refuses
  are refused at compile time, so a runtime guard on every read only costs time).
"""

from __future__ import annotations

import ast

from RestrictedPython import compile_restricted
from RestrictedPython.transformer import RestrictingNodeTransformer

_GUARDED_BINOPS = {ast.Mult: "_mul_", ast.Pow: "_pow_", ast.LShift: "_lshift_"}


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(name, ast.Load()), args=list(args), keywords=[])


def _tick() -> ast.Expr:
    return ast.Expr(value=_call("_tick_"))


def _is_float_literal(node: ast.expr) -> bool:
    # A float operand cannot build a big sequence or a huge int: skip the guard (it is hot code).
    return isinstance(node, ast.Constant) and type(node.value) is float


class SkillPolicy(RestrictingNodeTransformer):
    """RestrictedPython's transformer with loop ticks, guarded big operators, item aug-assign."""

    def visit_For(self, node: ast.For) -> ast.AST:
        node = super().visit_For(node)
        node.body.insert(0, ast.fix_missing_locations(ast.copy_location(_tick(), node.body[0])))
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        node = super().visit_While(node)
        node.body.insert(0, ast.fix_missing_locations(ast.copy_location(_tick(), node.body[0])))
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        node = super().visit_Attribute(node)  # refuses _names and frame/code attributes
        # Only str.format/format_map can misuse an allowed attribute name (format strings reach
        # forbidden attributes); every other read skips the runtime guard, which is hot code.
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_getattr_"
            and node.args[1].value not in ("format", "format_map")
        ):
            return ast.copy_location(
                ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load()), node
            )
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        node = self.node_contents_visit(node)
        guard = _GUARDED_BINOPS.get(type(node.op))
        if guard is None or _is_float_literal(node.left) or _is_float_literal(node.right):
            return node
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
