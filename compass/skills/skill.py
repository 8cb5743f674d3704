"""A skill: one plain Python file, one public function, a readable metadata header.

```
# provenance: generated
# parent: focus_fire
# created: 2026-11-22T10:00:00Z
# model: openai:gpt-4o-mini
# subtask: Focus fire on the weakest stalker when two allies are in range
def focus_weakest_stalker(obs: str) -> int:
    \"\"\"Description that is embedded for retrieval.\"\"\"
    ...
```

Editing the file by hand is a supported way to change the library; the header keys are
optional and unknown keys are kept.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from compass.sandbox.runtime import code_hash

PROVENANCES = ("bootstrap", "generated", "human")
_HEADER = re.compile(r"#\s*([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass
class Skill:
    """A skill's source and metadata (``meta`` holds provenance, parent, created, model, subtask...)."""

    name: str
    family: str
    code: str  # the function source, without the header
    description: str
    meta: dict[str, str] = field(default_factory=dict)
    path: Path | None = None

    @property
    def summary(self) -> str:
        """The docstring's first paragraph on one line: what retrieval embeds and skill listings show."""
        return " ".join(self.description.strip().split("\n\n")[0].split())

    @property
    def provenance(self) -> str:
        return self.meta.get("provenance", "human")

    @property
    def parent(self) -> str | None:
        p = self.meta.get("parent", "-")
        return None if p in ("", "-") else p

    @property
    def code_hash(self) -> str:
        return code_hash(self.code)

    @property
    def behaviour_hash(self) -> str:
        """Hash of :func:`normalized_code`: equal for skills that differ only in name, docstring,
        comments or layout."""
        return code_hash(normalized_code(self.code, self.name))

    def file_text(self) -> str:
        """The file as written to disk: header then code."""
        header = "".join(f"# {k}: {v}\n" for k, v in self.meta.items())
        return header + self.code.rstrip() + "\n"


def normalized_code(code: str, name: str) -> str:
    """``code`` with comments, docstrings, layout and the function's own name normalised away:
    two skills with equal normalised code behave identically (used to refuse duplicates)."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(getattr(body[0], "value", None), ast.Constant)
            ):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
        if isinstance(node, ast.FunctionDef) and node.name == name:
            node.name = "_skill_"
        elif isinstance(node, ast.Name) and node.id == name:
            node.id = "_skill_"
    return ast.unparse(tree)


def validate_name(name: str) -> str:
    """Skill names are lower_snake_case identifiers (they are file stems and function names)."""
    if not _NAME.match(name):
        raise ValueError(f"invalid skill name {name!r}: use lower_snake_case letters, digits and _")
    return name


def parse_skill_source(text: str, family: str, path: Path | None = None, name: str | None = None) -> Skill:
    """Split a skill file into header metadata and code; find its function and docstring.

    Raises ``SyntaxError`` (with file and line) for code that does not parse and ``ValueError``
    when the file does not define the expected single function.
    """
    meta: dict[str, str] = {}
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        m = _HEADER.match(lines[i].strip())
        if m:
            meta[m.group(1)] = m.group(2).strip()
        i += 1
    code = "".join(lines[i:])
    tree = ast.parse(code, filename=str(path or "<skill>"))  # SyntaxError lines are relative to code
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(funcs) != 1:
        raise ValueError(
            f"{path or '<skill>'}: a skill file defines exactly one function, found {len(funcs)}"
        )
    fn = funcs[0]
    expected = name or (path.stem if path else fn.name)
    if fn.name != expected:
        raise ValueError(f"{path or '<skill>'}: function is named {fn.name!r} but the file is {expected!r}")
    description = ast.get_docstring(fn) or ""
    return Skill(fn.name, family, code, description, meta, path)


def rename_function(code: str, old: str, new: str) -> str:
    """Rename top-level function ``old`` to ``new`` (its ``def`` line only; skills do not recurse).

    The one renamer of skill code: the library (adding under a free name), synthesis and repair.
    Raises ``ValueError`` when ``code`` does not parse or defines no top-level ``old``.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise ValueError(f"cannot rename {old}: the code does not parse (line {e.lineno}: {e.msg})") from None
    outer = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == old), None)
    if outer is None:
        raise ValueError(f"cannot rename {old}: no top-level function {old!r}")
    lines = code.splitlines()
    i = outer.lineno - 1
    lines[i] = re.sub(rf"\bdef\s+{re.escape(old)}\s*\(", f"def {new}(", lines[i], count=1)
    return "\n".join(lines) + "\n"
