"""Named parameters of a skill: ``# params: a, b`` in the header, each a literal assignment in the code.

```
# params: retreat_health
def retreat_when_low(obs: str) -> int:
    retreat_health = 0.3  # fraction of max health below which the unit backs away
```

:func:`get_params` reads their values, :func:`set_params` rewrites only the literals (comments and
layout stay), so fitting a skill to demonstrations leaves a file a person can still read and edit.
"""

from __future__ import annotations

import ast
from typing import Any

from compass.skills.skill import Skill


def param_names(skill: Skill) -> list[str]:
    return [p.strip() for p in skill.meta.get("params", "").split(",") if p.strip()]


def _assignments(skill: Skill) -> dict[str, ast.Assign]:
    tree = ast.parse(skill.code)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    found: dict[str, ast.Assign] = {}
    for node in fn.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.setdefault(node.targets[0].id, node)
    return found


def get_params(skill: Skill) -> dict[str, Any]:
    """The current value of every declared parameter; a ``ValueError`` names one that is not a literal."""
    out: dict[str, Any] = {}
    assigns = _assignments(skill)
    for name in param_names(skill):
        node = assigns.get(name)
        if node is None:
            raise ValueError(f"skill {skill.name}: parameter {name!r} has no assignment in its function")
        try:
            out[name] = ast.literal_eval(node.value)
        except ValueError:
            raise ValueError(f"skill {skill.name}: parameter {name!r} is not a literal value") from None
    return out


def _literal(value: Any) -> str:
    if isinstance(value, float):
        return repr(round(value, 3))
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in sorted(value.items())) + "}"
    return repr(value)


def set_params(skill: Skill, values: dict[str, Any]) -> Skill:
    """A copy of ``skill`` with the literals of ``values`` replaced (undeclared names are errors)."""
    declared = set(param_names(skill))
    unknown = set(values) - declared
    if unknown:
        raise ValueError(f"skill {skill.name} declares no parameter(s) {', '.join(sorted(unknown))}")
    assigns = _assignments(skill)
    lines = skill.code.splitlines(keepends=True)
    # Replace from the bottom up so earlier positions stay valid.
    for name in sorted(values, key=lambda n: -assigns[n].value.lineno):
        v = assigns[name].value
        start, end = v.lineno - 1, v.end_lineno - 1
        head = lines[start][: v.col_offset]
        tail = lines[end][v.end_col_offset :]
        lines[start : end + 1] = [head + _literal(values[name]) + tail]
    code = "".join(lines)
    return Skill(skill.name, skill.family, code, skill.description, dict(skill.meta), None)
