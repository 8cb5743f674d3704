"""The package's shape: no import circles anywhere in ``compass``, and the core names no game.

Imports are read from the source (inside functions too: a deferred import is still a dependency),
so a circle made of lazy imports is caught as well. "The core" is everything below the commands
that must work for any registered family; it reaches games only through the family registry.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import compass
from compass.core.family import env_kinds, families

ROOT = Path(compass.__file__).parent
#: game-independent packages and modules (a game's name here is a branch on it)
CORE = ("core", "comm", "sandbox", "skills", "planner", "episode", "vlm", "util")
CORE_MODULES: tuple[str, ...] = ()  # loose modules at the package root that count as core


def _modules() -> dict[str, Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        parts = ("compass", *f.relative_to(ROOT).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    def owner(dotted: str) -> str:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {owner(a.name) for a in node.names if a.name.startswith("compass")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if base.startswith("compass"):
                # ``from compass.pkg import mod`` depends on mod; ``from compass.mod import name`` on mod
                found |= {owner(f"{base}.{a.name}") for a in node.names}
    return found - {name, "compass", ""}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    modules = _modules()
    graph = {m: _imports(m, p, modules) & set(modules) for m, p in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_lazy_circle(tmp_path):
    """The check above can fail: a circle closed by an import inside a function is one."""
    graph = {"compass.a": {"compass.b"}, "compass.b": {"compass.c"}, "compass.c": {"compass.a"}}
    assert _cycles(graph) == [["compass.a", "compass.b", "compass.c"]]
    (tmp_path / "a.py").write_text("def f():\n    from compass.b import g\n")
    mods = {"compass.a": tmp_path / "a.py", "compass.b": tmp_path / "b.py"}
    assert _imports("compass.a", mods["compass.a"], mods) == {"compass.b"}


def _core_files() -> list[Path]:
    files = [f for pkg in CORE for f in sorted((ROOT / pkg).rglob("*.py"))]
    return files + [ROOT / m for m in CORE_MODULES]


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """String constants that are not docstrings."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def _game_words() -> re.Pattern[str]:
    names = set(families()) | set(env_kinds())
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b", re.IGNORECASE)


def _offences(path: Path, words: re.Pattern[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT.parent) if path.is_relative_to(ROOT.parent) else path
    found = [f"{where}:{n.lineno}: {n.value!r}" for n in _code_strings(tree) if words.search(n.value)]
    for node in ast.walk(tree):
        mod = node.module if isinstance(node, ast.ImportFrom) else None
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [mod or ""]
        if isinstance(node, ast.Import | ast.ImportFrom):
            found += [f"{where}:{node.lineno}: imports {n}" for n in names if n.startswith("compass.games")]
    return found


def test_the_core_names_no_game():
    """Game-independent code reaches a game through ``GameFamily`` only: no import of
    ``compass.games``, no family name or env kind in a string (docstrings and comments may)."""
    words = _game_words()
    offences = [o for f in _core_files() for o in _offences(f, words)]
    assert offences == []


def test_the_game_name_check_catches_a_default(tmp_path):
    """The check above can fail: a defaulted family name and a game import are both caught."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""Docstrings may say combat."""\n'
        "from compass.games.combat.text import action_name\n"
        "def f(name=None):\n"
        '    return name or "combat"\n',
        encoding="utf-8",
    )
    found = _offences(bad, _game_words())
    assert len(found) == 2 and "'combat'" in found[0] and "imports compass.games" in found[1]
