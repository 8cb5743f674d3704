"""``compass skills add|edit|rm|rename|diff|history|revert``: versioned editing of a skill library.

Every change is validated (parsed, compiled in the sandbox, run on the family's recorded
observations) before anything is written, then committed to the library's git repository with
its author and reason (:mod:`compass.skills.versions`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from compass.cli.errors import fail as _fail
from compass.util.console import Console, print_code, print_table

console = Console()
err = Console(stderr=True)

LibraryOpt = Annotated[
    Path | None, typer.Option(help="skill library root (holds one folder per game family); $COMPASS_LIBRARY")
]
FamilyOpt = Annotated[str, typer.Option(help="game family (combat, alem, ...)")]
ReasonOpt = Annotated[str | None, typer.Option(help="why: stored with the version")]
AuthorOpt = Annotated[str | None, typer.Option(help="who: default $COMPASS_AUTHOR, git's user.name or $USER")]


def _open(library: Path | None, family: str, create: bool = False):
    """The writable library at ``library`` (or $COMPASS_LIBRARY); the shipped one is refused."""
    from compass.skills.library import SkillLibrary, default_library_root

    root = library or default_library_root()
    if root is None:
        _fail("the shipped seed library is read-only: pass --library DIR (or set $COMPASS_LIBRARY)")
    if create:
        if Path(root).is_file():
            _fail(f"{root} is a file; a skill library is a folder (compass skills init DIR)")
        if not Path(root).is_dir():  # a one-skill library by accident; a library starts with init
            _fail(
                f"no library at {root}: start one with `compass skills init {root}` (the shipped seed skills, versioned)"
            )
        (Path(root) / family).mkdir(parents=True, exist_ok=True)
    try:
        lib = SkillLibrary(root, family)
    except (FileNotFoundError, ValueError) as e:
        _fail(str(e))
    for p in lib.problems:
        err.print(f"[yellow]skipped[/] {escape(str(p))}")
    return lib


def _guard(fn, *args, **kwargs):
    """Call ``fn``; user-facing errors become one line and exit code 1."""
    from compass.skills.library import SkillEditError
    from compass.skills.versions import VersionError

    try:
        return fn(*args, **kwargs)
    except KeyError as e:
        _fail(str(e.args[0]) if e.args else str(e), 1)
    except (SkillEditError, VersionError, ValueError, SyntaxError) as e:
        _fail(str(e), 1)


def register(app: typer.Typer, skills: typer.Typer) -> None:
    """Add the editing commands to the ``compass skills`` group."""
    skills.command("init")(skills_init)
    skills.command("add")(skills_add)
    skills.command("edit")(skills_edit)
    skills.command("rm")(skills_rm)
    skills.command("rename")(skills_rename)
    skills.command("diff")(skills_diff)
    skills.command("history")(skills_history)
    skills.command("revert")(skills_revert)


def skills_init(
    directory: Annotated[Path, typer.Argument(help="new (or empty) directory for the library root")],
    family: Annotated[
        list[str] | None, typer.Option(help="only these families (repeatable; default: every family)")
    ] = None,
) -> None:
    """Start an editable, versioned library: a copy of the shipped seed skills of every family."""
    from compass.skills.library import init_library

    counts = _guard(init_library, directory, family or None)
    listed = ", ".join(f"{n} {f}" for f, n in counts.items())
    console.print(
        escape(f"library {directory}: {listed} skills, each at version 1 (git history in {directory}/.git)")
    )
    console.print(escape(f"use it with --library {directory}, or export COMPASS_LIBRARY={directory}"))


def skills_add(
    file: Path,
    library: LibraryOpt = None,
    family: FamilyOpt = "combat",
    reason: ReasonOpt = None,
    author: AuthorOpt = None,
) -> None:
    """Add the skill in FILE (one function named like the file) as a new version."""
    from compass.skills.versions import default_person

    if not file.is_file():
        _fail(f"{file}: no such file")
    if file.suffix != ".py":
        _fail(f"{file}: a skill file ends in .py")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        _fail(f"{file}: unreadable: {e}")
    lib = _open(library, family, create=True)
    name = file.stem
    if name in lib:
        _fail(f"a skill named {name!r} exists in {lib.dir}: use `compass skills edit {name}`", 1)
    skill, _ = _guard(lib.validate, text, name)
    skill.meta.setdefault("provenance", "human")
    who = author or default_person()
    stored = _guard(lib.add, skill, author=who, reason=reason or f"add {name} from {file.name}")
    console.print(escape(f"added {stored.name} to {lib.dir} (version 1 by {who})"))


def skills_edit(
    name: str,
    library: LibraryOpt = None,
    family: FamilyOpt = "combat",
    reason: ReasonOpt = None,
    author: AuthorOpt = None,
) -> None:
    """Edit NAME in $EDITOR; the edit is validated and saved as a new version, or refused untouched."""
    lib = _open(library, family)
    skill = _guard(lib.get, name)
    original = skill.path.read_text(encoding="utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f"{name}.", suffix=".py")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(original)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        rc = subprocess.call([*shlex.split(editor), tmp])
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        _fail(f"cannot start editor {editor!r}: {e}")
    text = Path(tmp).read_text(encoding="utf-8")
    if rc != 0:
        _fail(f"editor {editor!r} exited with status {rc}; nothing saved (your text: {tmp})", 1)
    if text == original:
        Path(tmp).unlink(missing_ok=True)
        console.print(escape(f"no change to {name}"))
        return
    from compass.skills.library import SkillEditError

    try:
        lib.update(name, text, author=author, reason=reason)
    except (SkillEditError, ValueError) as e:
        _fail(f"{e}; nothing saved (your text: {tmp})", 1)
    Path(tmp).unlink(missing_ok=True)
    console.print(escape(f"saved {name} as version {len(lib.history(name))}"))


def skills_rm(
    name: str,
    library: LibraryOpt = None,
    family: FamilyOpt = "combat",
    reason: ReasonOpt = None,
    author: AuthorOpt = None,
) -> None:
    """Remove NAME (its history stays; `revert NAME prev` brings it back)."""
    lib = _open(library, family)
    _guard(lib.remove, name, author=author, reason=reason)
    console.print(escape(f"removed {name}"))


def skills_rename(
    old: str,
    new: str,
    library: LibraryOpt = None,
    family: FamilyOpt = "combat",
    reason: ReasonOpt = None,
    author: AuthorOpt = None,
) -> None:
    """Rename OLD to NEW (file and function; history follows)."""
    lib = _open(library, family)
    _guard(lib.rename, old, new, author=author, reason=reason)
    console.print(escape(f"renamed {old} to {new}"))


def skills_diff(
    name: str,
    a: Annotated[
        str | None, typer.Argument(help="version (number, vN, prev, ~N, commit); default: previous")
    ] = None,
    b: Annotated[str | None, typer.Argument(help="version; default: the current file")] = None,
    library: LibraryOpt = None,
    family: FamilyOpt = "combat",
) -> None:
    """Show what changed in NAME between versions A and B."""
    lib = _open(library, family)
    text = _guard(lib.diff, name, a, b)
    if not text:
        console.print("no difference")
        return
    print_code(console, text, "diff", line_numbers=False)


def skills_history(name: str, library: LibraryOpt = None, family: FamilyOpt = "combat") -> None:
    """List NAME's versions: number, date, author (kind), action, reason."""
    lib = _open(library, family)
    versions = _guard(lib.history, name)
    if not versions:
        _fail(f"{name} has no recorded versions in {lib.root}", 1)
    table = Table("version", "commit", "date", "author", "kind", "action", "reason")
    for v in versions:
        table.add_row(
            str(v.number),
            v.commit[:8],
            v.date[:19].replace("T", " "),
            escape(v.author),
            v.kind,
            v.action,
            escape(v.reason),
        )
    print_table(console, table)


def skills_revert(
    name: str,
    version: str,
    library: LibraryOpt = None,
    family: FamilyOpt = "combat",
    reason: ReasonOpt = None,
    author: AuthorOpt = None,
) -> None:
    """Make VERSION of NAME current again (recorded as a new version)."""
    lib = _open(library, family)
    _guard(lib.revert, name, version, author=author, reason=reason)
    console.print(escape(f"reverted {name} to version {version} (now version {len(lib.history(name))})"))
