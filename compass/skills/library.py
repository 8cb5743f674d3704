"""The on-disk skill library: one ``.py`` per skill under ``<root>/<family>/``, plus usage stats.

Loading never fails because of one bad file: a file that does not parse or compile in the
sandbox (or is too large, too deeply nested, not UTF-8...) is reported (name, line, reason) in
:attr:`SkillLibrary.problems` and skipped, as is a stats file of the wrong shape; files with
another extension (``shout.PY``) are reported too. Names starting with ``.`` or ``_`` are the
library's own (stats, temporary files, locks) and are not skills.

A writable library root is a git repository (:mod:`compass.skills.versions`): every change made
through this class (``add`` from synthesis, repair and bootstrapping; ``update``, ``remove``,
``rename``, ``revert`` from people) is one commit with an author and a reason, written under an
inter-process lock so concurrent writers lose nothing. Usage statistics are not versioned; they
are merged into ``_stats.json`` under the same lock (counts are added, never overwritten).

Retrieval keeps one embedding matrix; adding a skill embeds only that skill and appends a row.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from compass.core.errors import CompassError
from compass.core.family import get_family
from compass.sandbox import CompiledSkill, SkillError, compile_skill
from compass.skills.embedding import Embedder
from compass.skills.skill import Skill, parse_skill_source, rename_function, validate_name
from compass.skills.versions import VersionError, VersionStore, default_person, git_available
from compass.util.atomic import atomic_write_json, atomic_write_text

STATS_FILE = "_stats.json"
#: The skill the keep gate measured best per task (versioned with the skills; compass.skills.gate).
BEST_FILE = "_best.json"
#: Larger skill files are refused unread (a skill is a function of a few dozen lines).
MAX_SKILL_BYTES = 256 * 1024


def default_library_root() -> Path | None:
    """$COMPASS_LIBRARY when set (a root holding ``<family>/``), else None: each family's shipped seed skills."""
    env = os.environ.get("COMPASS_LIBRARY")
    return Path(env) if env else None


def init_library(root: str | os.PathLike, families: list[str] | None = None) -> dict[str, int]:
    """Start an editable library at ``root``: every family's shipped seed skills (or those of
    ``families``), committed as version 1 of each skill. Returns the skill count per family.

    ``root`` must be new or an empty directory: an existing library is never overwritten.
    """
    import shutil

    from compass.core.family import families as all_families

    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        what = (
            "a file"
            if not root.is_dir()
            else "a library already"
            if (root / ".git").exists()
            else "not empty"
        )
        raise ValueError(f"{root} is {what}: give a new or empty directory")
    fams = all_families()
    names = families or sorted(fams)
    for name in names:
        get_family(name)  # an unknown family is refused before anything is written
    if not git_available():
        raise VersionError("the versioned library needs the git command line tool (apt-get install git)")
    counts: dict[str, int] = {}
    store = VersionStore(root)
    with store.transaction(
        "start from the shipped seed skills (compass skills init)", "compass", "person", "add"
    ):
        for name in names:
            shutil.copytree(
                fams[name].seed_skills_dir,
                root / name,
                ignore=shutil.ignore_patterns("_stats.json", "__pycache__", "*.pyc"),
            )
            counts[name] = len(list((root / name).glob("*.py")))
    return counts


def default_cache_dir() -> Path:
    return Path(os.environ.get("COMPASS_CACHE", Path.home() / ".cache" / "compass"))


@dataclass(frozen=True)
class LoadProblem:
    """A skill file that could not be loaded."""

    path: Path
    message: str
    fatal: bool = True  # False: reported but harmless (a stray non-skill file)

    def __str__(self) -> str:
        return f"{self.path.name}: {self.message}"


class SkillEditError(CompassError, ValueError):
    """A change refused before anything was written (the message names the line where it can)."""


@dataclass(frozen=True)
class Retrieved:
    """A retrieval hit."""

    skill: Skill
    score: float


class SkillLibrary:
    """Skills of one family in ``root/family``: load, compile, add, retrieve, count uses.

    ``root=None`` opens the family's shipped seed library (package data), which runs only read.
    """

    def __init__(self, root: str | os.PathLike | None, family: str, embedder: Embedder | None = None) -> None:
        self.family = family
        self.shipped = root is None
        if root is None:
            self.dir = get_family(family).seed_skills_dir
            self.root = self.dir.parent
        else:
            self.root = Path(root)
            self.dir = self.root / family
        self.embedder = embedder or Embedder(default_cache_dir() / "embeddings")
        self.skills: dict[str, Skill] = {}
        self.compiled: dict[str, CompiledSkill] = {}
        self.problems: list[LoadProblem] = []
        self.stats: dict[str, dict[str, int]] = {}
        self._stats_delta: dict[str, dict[str, int]] = {}
        self.versions: VersionStore | None = None if self.shipped else VersionStore(self.root)
        #: skills on trial (in memory only, see :meth:`stage`): the keep gate writes or drops them
        self.staged: dict[str, Skill] = {}
        self.reload()

    # --- loading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """(Re)read every skill file; bad files go to :attr:`problems`."""
        self.skills.clear()
        self.compiled.clear()
        self.problems = []
        if self.root.is_file():  # (`compass skills init FILE` would not help)
            raise FileNotFoundError(
                f"{self.root} is a file; a skill library is a folder (compass skills init DIR)"
            )
        if not self.dir.is_dir():
            raise FileNotFoundError(
                f"no skill library for family {self.family!r} at {self.dir} "
                f"(start one with: compass skills init {self.root})"
            )
        for path in sorted(self.dir.iterdir()):
            if path.suffix == ".py" and path.is_file():
                self._load_file(path)
            elif not path.name.startswith((".", "_")) and path.name != "__pycache__":
                self._unknown_file(path)
        self.stats = self._read_stats()
        self._merge(self.stats, self._stats_delta)  # counts recorded but not saved yet stay
        self._changes = getattr(self, "_changes", 0) + 1
        self._indexed_at: tuple[int, int] | None = None
        if not hasattr(self, "_index_rows"):  # a reload keeps rows; retrieval drops stale ones
            self._index_names: list[str] = []  # row -> name
            self._index_rows: dict[str, int] = {}
            self._index_texts: dict[str, str] = {}
            self._matrix: np.ndarray | None = None  # (capacity, DIM); rows [0, len(names)) used

    def _unknown_file(self, path: Path) -> None:
        if path.is_dir():
            message = "a folder in the library (skills are .py files; it is ignored)"
        elif path.suffix.lower() == ".py":
            message = f"not loaded: skill files end in lower-case .py (rename it to {path.stem}.py)"
        else:
            message = f"not a skill file (skills end in .py; {path.suffix or 'no extension'} is ignored)"
            self.problems.append(LoadProblem(path, message, fatal=False))
            return
        self.problems.append(LoadProblem(path, message))

    def display_name(self, path: Path) -> str:
        """``FAMILY/FILE.py``: the skill file relative to the library root.

        Compiled skills carry this name (not the absolute path), so tracebacks in traces are the
        same wherever the library lives and two identical runs write identical traces.
        """
        return f"{self.family}/{path.name}"

    def _load_file(self, path: Path) -> None:
        try:
            size = path.stat().st_size
            if size > MAX_SKILL_BYTES:
                self.problems.append(
                    LoadProblem(path, f"too large ({size:,} bytes; limit {MAX_SKILL_BYTES:,})")
                )
                return
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            self.problems.append(LoadProblem(path, f"unreadable: {e}"))
            return
        offset = header_length(text)
        try:
            skill = parse_skill_source(text, self.family, path)
            compiled = compile_skill(
                skill.code, skill.name, self.family, self.display_name(path), line_offset=offset
            )
        except SyntaxError as e:
            self.problems.append(LoadProblem(path, f"line {(e.lineno or 0) + offset}: syntax error: {e.msg}"))
            return
        except (SkillError, ValueError) as e:
            self.problems.append(LoadProblem(path, _without_path(str(e), self.display_name(path))))
            return
        except (RecursionError, MemoryError):
            self.problems.append(LoadProblem(path, "nested too deeply to compile (RecursionError)"))
            return
        except Exception as e:  # one file must never stop the library from loading
            self.problems.append(LoadProblem(path, f"cannot load: {type(e).__name__}: {e}"))
            return
        self.skills[skill.name] = skill
        self.compiled[skill.name] = compiled

    def _read_stats(self) -> dict[str, dict[str, int]]:
        path = self.dir / STATS_FILE
        if not path.exists():
            return {}
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
            self.problems.append(LoadProblem(path, f"unreadable stats, starting fresh: {e}"))
            return {}
        stats, dropped = _valid_stats(raw)
        if dropped:
            self.problems.append(LoadProblem(path, f"stats of the wrong shape, ignored: {dropped}"))
        return stats

    # --- queries ----------------------------------------------------------------------------

    def __contains__(self, name: str) -> bool:
        return name in self.skills

    def __len__(self) -> int:
        return len(self.skills)

    def names(self) -> list[str]:
        return sorted(self.skills)

    def get(self, name: str) -> Skill:
        try:
            return self.skills[name]
        except KeyError:
            raise KeyError(
                f"no skill named {name!r} in {self.dir} (have: {', '.join(self.names())})"
            ) from None

    def retrieve(self, query: str, k: int = 5) -> list[Retrieved]:
        """The ``k`` skills whose descriptions are most similar to ``query`` (cosine), best first.

        Ties (identical descriptions) resolve by name, so retrieval is deterministic.
        """
        if not self.skills or k <= 0:
            return []
        # Only after a change (or a direct edit of ``skills``) is the matrix compared with the skills.
        if self._indexed_at != (self._changes, len(self.skills)):
            new = [self._embed_text(self.skills[x]) for x in self.skills if x not in self._index_rows]
            if new and len(new) <= 16:
                self.embedder.prefetch(new, [query])
            self._sync_index()
            self._indexed_at = (self._changes, len(self.skills))
        n = len(self._index_names)
        q = self.embedder.embed([query], persist=False)[0]
        # einsum's own loop, not BLAS: numpy's OpenBLAS splits this matrix-vector product over its
        # threads and, on a busy machine, waits for them (8 ms for 10,000 x 384 vs 0.6 ms here).
        scores = np.einsum("ij,j->i", self._matrix[:n], q)
        k = min(k, n)
        top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        # Everything tied with the k-th score is a candidate, then name breaks the tie.
        cut = round(float(scores[top].min()), 6) - 5e-7
        cand = np.nonzero(scores >= cut)[0]
        hits = sorted(
            ((float(scores[i]), self._index_names[i]) for i in cand), key=lambda h: (-round(h[0], 6), h[1])
        )
        return [Retrieved(self.skills[name], s) for s, name in hits[:k]]

    def _sync_index(self) -> None:
        """Bring the embedding matrix in line with :attr:`skills`: embed only what is new or changed."""
        stale = [
            n
            for n in self._index_names
            if n not in self.skills or self._index_texts[n] != self._embed_text(self.skills[n])
        ]
        for name in stale:
            self._drop_row(name)
        new = [n for n in sorted(self.skills) if n not in self._index_rows]
        if not new:
            return
        vecs = self.embedder.embed([self._embed_text(self.skills[n]) for n in new])
        used = len(self._index_names)
        if self._matrix is None or self._matrix.shape[0] < used + len(new):
            cap = max(64, 2 * (used + len(new)))
            grown = np.zeros((cap, vecs.shape[1]), dtype=np.float32)
            if self._matrix is not None:
                grown[:used] = self._matrix[:used]
            self._matrix = grown
        self._matrix[used : used + len(new)] = vecs
        for i, name in enumerate(new):
            self._index_rows[name] = used + i
            self._index_names.append(name)
            self._index_texts[name] = self._embed_text(self.skills[name])

    def _drop_row(self, name: str) -> None:
        """Remove a row by moving the last row into its place (O(1))."""
        row = self._index_rows.pop(name)
        self._index_texts.pop(name, None)
        last = len(self._index_names) - 1
        if row != last:
            moved = self._index_names[last]
            self._matrix[row] = self._matrix[last]
            self._index_names[row] = moved
            self._index_rows[moved] = row
        self._index_names.pop()

    @staticmethod
    def _embed_text(skill: Skill) -> str:
        # The summary, not the whole docstring: details (how it kites, which constants) dilute what
        # the skill is for, and the summary is also what the planner's skill listings show.
        return f"{skill.name.replace('_', ' ')}: {skill.summary}"

    def find_duplicate(self, skill: Skill) -> str | None:
        """The name of a library skill that behaves exactly like ``skill`` (same code up to name,
        docstring, comments and layout), or None."""
        target = skill.behaviour_hash
        for name in self.names():
            other = self.skills[name]
            if other.behaviour_hash == target:
                return name
        return None

    # --- changes ----------------------------------------------------------------------------

    def add(
        self, skill: Skill, overwrite: bool = False, author: str | None = None, reason: str | None = None
    ) -> Skill:
        """Compile ``skill`` in the sandbox and write it atomically as a new version; returns the stored skill.

        A name collision without ``overwrite`` gets a numeric suffix (``name_v2``...), so a
        generated refinement never silently replaces its parent; names taken on disk by another
        process count as collisions too. The author defaults from the provenance (``model`` for
        generated skills, ``bootstrap``, else the person); the reason from parent and sub-task.
        """
        self._writable()
        validate_name(skill.name)
        skill.meta.setdefault("provenance", "generated")
        skill.meta.setdefault("created", datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        who, kind = self._author(skill, author)
        with self._transaction(reason or _add_reason(skill), who, kind, "add"):
            return self._write(skill, overwrite)

    # --- staging (compass.skills.holdup: skills kept only when they hold up) --------------------

    def stage(self, skill: Skill) -> Skill:
        """Compile ``skill`` and make it usable in this process only: no file, no version.

        A staged skill is retrieved and run like any other until :meth:`keep` writes it as a
        version or :meth:`drop` forgets it; a name collision gets a suffix as in :meth:`add`.
        """
        validate_name(skill.name)
        skill.meta.setdefault("provenance", "generated")
        skill.meta.setdefault("created", datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        name = skill.name
        if self._taken(name):
            n = 2
            while self._taken(f"{name}_v{n}"):
                n += 1
            skill = rename_skill(skill, f"{name}_v{n}")
        compiled = compile_skill(
            skill.code,
            skill.name,
            self.family,
            self.display_name(self.dir / f"{skill.name}.py"),
            line_offset=header_length(skill.file_text()),
        )
        self._changes += 1
        self.skills[skill.name] = skill
        self.compiled[skill.name] = compiled
        self.staged[skill.name] = skill
        return skill

    def keep(
        self,
        name: str,
        meta: dict[str, str] | None = None,
        reason: str | None = None,
        best_for: dict[str, object] | None = None,
    ) -> Skill:
        """Write staged skill ``name`` (with ``meta`` added to its header) as a new version.

        ``best_for`` (``{"task": ..., ...figures}``) also records it as the skill the library
        offers for that task (:meth:`best_for`), in the same version. Returns the stored skill
        (renamed if another process took the name meanwhile).
        """
        self._writable()
        skill = self.staged.pop(name)
        self.skills.pop(name, None)
        self.compiled.pop(name, None)
        skill.meta.update(meta or {})
        who, kind = self._author(skill, None)
        with self._transaction(reason or _add_reason(skill), who, kind, "add"):
            stored = self._write(skill)
            if best_for is not None:
                best = self._read_best()
                best[str(best_for["task"])] = {**best_for, "skill": stored.name}
                atomic_write_json(self.dir / BEST_FILE, best)
        if name != stored.name and name in self._stats_delta:  # uses on trial count for the stored name
            self._stats_delta[stored.name] = self._stats_delta.pop(name)
            self.stats[stored.name] = self.stats.pop(name, {})
        return stored

    def drop(self, name: str) -> None:
        """Forget staged skill ``name`` (it never reached the disk; its trial uses are not counted)."""
        self.staged.pop(name)
        self.skills.pop(name, None)
        self.compiled.pop(name, None)
        self._stats_delta.pop(name, None)
        self.stats.pop(name, None)
        self._changes += 1

    def best_for(self, task: str) -> str | None:
        """The skill recorded as best for ``task`` by the keep gate (``_best.json``), if it is loaded."""
        name = self._read_best().get(task, {}).get("skill")
        return name if isinstance(name, str) and name in self.skills else None

    def best_record(self, task: str) -> dict[str, object] | None:
        """What the keep gate recorded when it made a skill the best for ``task`` (figures, seeds)."""
        rec = self._read_best().get(task)
        return dict(rec) if isinstance(rec, dict) else None

    def _read_best(self) -> dict[str, dict]:
        path = self.dir / BEST_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return {}
        return {k: v for k, v in raw.items() if isinstance(v, dict)} if isinstance(raw, dict) else {}

    def _write(self, skill: Skill, overwrite: bool = False) -> Skill:
        """Compile and write ``skill`` (inside a transaction), under a free name unless ``overwrite``;
        returns it as stored."""
        if not overwrite and self._taken(skill.name):
            n = 2
            while self._taken(f"{skill.name}_v{n}"):
                n += 1
            skill = rename_skill(skill, f"{skill.name}_v{n}")
        name = skill.name
        path = self.dir / f"{name}.py"
        compiled = compile_skill(
            skill.code,
            skill.name,
            self.family,
            self.display_name(path),
            line_offset=header_length(skill.file_text()),
        )
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, skill.file_text())
        self._changes += 1
        skill.path = path
        self.skills[name] = skill
        self.compiled[name] = compiled
        return skill

    def _taken(self, name: str) -> bool:
        return name in self.skills or (self.dir / f"{name}.py").exists()

    def validate(self, text: str, name: str, run_observations: bool = True) -> tuple[Skill, CompiledSkill]:
        """Parse, compile in the sandbox and run a skill file's text on recorded observations.

        Raises :class:`SkillEditError` naming the line of the problem; nothing is written.
        """
        path = self.dir / f"{name}.py"
        offset = header_length(text)
        try:
            skill = parse_skill_source(text, self.family, path)
            compiled = compile_skill(
                skill.code, skill.name, self.family, self.display_name(path), line_offset=offset
            )
        except SyntaxError as e:
            raise SkillEditError(
                f"{name}.py line {(e.lineno or 0) + offset}: syntax error: {e.msg}"
            ) from None
        except (SkillError, ValueError, RecursionError) as e:
            raise SkillEditError(f"{name}.py: {_without_path(str(e), path)}") from None
        if run_observations:
            from compass.skills.observations import check_compiled

            errors = check_compiled(compiled, self.family, limit=20)
            if errors:
                raise SkillEditError(f"{name}.py: fails on recorded observations: {errors[0]}")
        skill.path = path
        return skill, compiled

    def update(self, name: str, text: str, author: str | None = None, reason: str | None = None) -> Skill:
        """Replace skill ``name``'s file with ``text`` after validating it (a new version)."""
        self._writable()
        self.get(name)
        skill, compiled = self.validate(text, name)
        who = author or default_person()
        with self._transaction(reason or f"edit {name}", who, _kind_of(who, "person"), "edit"):
            atomic_write_text(skill.path, text if text.endswith("\n") else text + "\n")
        self._changes += 1
        self.skills[name], self.compiled[name] = skill, compiled
        return skill

    def remove(self, name: str, author: str | None = None, reason: str | None = None) -> None:
        """Delete skill ``name`` (its history stays: ``revert`` brings it back)."""
        self._writable()
        self.get(name)
        who = author or default_person()
        with self._transaction(reason or f"remove {name}", who, _kind_of(who, "person"), "rm"):
            (self.dir / f"{name}.py").unlink(missing_ok=True)
        self._changes += 1
        del self.skills[name]
        self.compiled.pop(name, None)

    def rename(self, old: str, new: str, author: str | None = None, reason: str | None = None) -> Skill:
        """Rename a skill: its file and its function (history follows the rename)."""
        self._writable()
        validate_name(new)
        skill = self.get(old)
        if self._taken(new):
            raise SkillEditError(f"a skill named {new!r} already exists in {self.dir}")
        renamed = rename_skill(skill, new)
        text = renamed.file_text()
        stored, compiled = self.validate(text, new, run_observations=False)
        who = author or default_person()
        with self._transaction(reason or f"rename {old} to {new}", who, _kind_of(who, "person"), "rename"):
            atomic_write_text(self.dir / f"{new}.py", text)
            (self.dir / f"{old}.py").unlink(missing_ok=True)
        del self.skills[old]
        self.compiled.pop(old, None)
        self._changes += 1
        self.skills[new], self.compiled[new] = stored, compiled
        return stored

    # --- versions ---------------------------------------------------------------------------

    def _relpath(self, name: str) -> str:
        return f"{self.family}/{name}.py"

    def history(self, name: str) -> list:
        """The versions of skill ``name`` (oldest first; see :class:`~compass.skills.versions.Version`)."""
        if self.versions is None:
            return []
        return self.versions.history(self._relpath(name))

    def text_at(self, name: str, version: str) -> str:
        """Skill ``name``'s file as it was at ``version`` (number, ``vN``, ``prev``, ``~N`` or commit id)."""
        store = self._store()
        v = store.resolve(self._relpath(name), version)
        text = store.show(v.commit, v.path)
        if text is None:
            raise VersionError(f"version {v.number} of {name} removed the skill; it has no text")
        return text

    def diff(self, name: str, a: str | None = None, b: str | None = None) -> str:
        """A unified diff of ``name`` between versions ``a`` and ``b`` (default: previous and current)."""
        import difflib

        versions = self.history(name)
        if not versions:
            raise VersionError(f"{name} has no recorded versions")
        current = (
            (self.dir / f"{name}.py").read_text(encoding="utf-8")
            if (self.dir / f"{name}.py").exists()
            else ""
        )
        if a is None:
            a = str(versions[-2].number) if len(versions) >= 2 else "1"
        old_text, old_label = self._text_or_empty(name, a)
        if b is None:
            new_text, new_label = current, f"{name} (current)"
        else:
            new_text, new_label = self._text_or_empty(name, b)
        return "".join(
            difflib.unified_diff(
                old_text.splitlines(keepends=True), new_text.splitlines(keepends=True), old_label, new_label
            )
        )

    def _text_or_empty(self, name: str, version: str) -> tuple[str, str]:
        v = self._store().resolve(self._relpath(name), version)
        text = self._store().show(v.commit, v.path) or ""
        return text, f"{name} v{v.number} ({v.commit[:8]})"

    def revert(self, name: str, version: str, author: str | None = None, reason: str | None = None) -> Skill:
        """Make version ``version`` of ``name`` current again (a new version; the skill may have been removed)."""
        self._writable()
        store = self._store()
        v = store.resolve(self._relpath(name), version)
        text = store.show(v.commit, v.path)
        if text is None:
            raise VersionError(f"version {v.number} of {name} removed the skill; revert to an earlier one")
        old_name = Path(v.path).stem
        if old_name != name:  # the skill was renamed since: the old text's function gets today's name
            skill = parse_skill_source(text, self.family, name=old_name)
            text = rename_skill(skill, name).file_text()
        skill, compiled = self.validate(text, name, run_observations=False)
        who = author or default_person()
        with self._transaction(
            reason or f"revert {name} to v{v.number} ({v.commit[:8]})", who, _kind_of(who, "person"), "revert"
        ):
            atomic_write_text(self.dir / f"{name}.py", text)
        self._changes += 1
        self.skills[name], self.compiled[name] = skill, compiled
        return skill

    def _store(self) -> VersionStore:
        if self.versions is None:
            raise VersionError("the shipped seed library has no versions (use --library DIR)")
        return self.versions

    def _writable(self) -> None:
        if self.shipped:
            raise SkillEditError(
                "the shipped seed library is read-only: pass --library DIR (a copy is made with "
                "`compass skills add` into an empty DIR) or set $COMPASS_LIBRARY"
            )

    def _transaction(self, reason: str, author: str, kind: str, action: str):
        assert self.versions is not None
        if not git_available():  # still safe for concurrent writers, just not versioned
            return self.versions.locked()
        return self.versions.transaction(reason, author, kind, action)

    @staticmethod
    def _author(skill: Skill, author: str | None) -> tuple[str, str]:
        prov = skill.provenance
        if prov == "generated":
            return author or skill.meta.get("model") or "model", "model"
        if prov == "bootstrap":
            return author or "bootstrap", "bootstrap"
        who = author or default_person()
        return who, _kind_of(who, "person")

    # --- usage statistics -------------------------------------------------------------------

    def record_use(self, name: str, **counts: int) -> None:
        """Add to a skill's counters (uses, errors, wins, episodes...) in memory."""
        for target in (self.stats, self._stats_delta):
            s = target.setdefault(name, {})
            for k, v in counts.items():
                s[k] = s.get(k, 0) + v

    def save_stats(self) -> None:
        """Add the counts recorded since the last save to ``_stats.json`` (under the library lock),
        so two runs sharing a library both count."""
        self._writable()
        with self.versions.locked():
            self.stats = self._read_stats_quiet()
            self._merge(self.stats, self._stats_delta)
            atomic_write_json(self.dir / STATS_FILE, self.stats)
            self._stats_delta = {}

    def _read_stats_quiet(self) -> dict[str, dict[str, int]]:
        n = len(self.problems)
        data = self._read_stats()
        del self.problems[n:]
        return data

    @staticmethod
    def _merge(into: dict[str, dict[str, int]], delta: dict[str, dict[str, int]]) -> None:
        for name, counts in delta.items():
            s = into.setdefault(name, {})
            for k, v in counts.items():
                s[k] = s.get(k, 0) + v


def _kind_of(author: str, default: str) -> str:
    return "bootstrap" if author == "bootstrap" else default


def _add_reason(skill: Skill) -> str:
    parts = [f"add {skill.name}"]
    if skill.meta.get("replaced") == "repair" and skill.parent:
        parts = [f"repair {skill.parent} as {skill.name}"]
    elif skill.parent:
        parts.append(f"from {skill.parent}")
    if skill.meta.get("subtask"):
        parts.append(f"for: {skill.meta['subtask'][:120]}")
    return " ".join(parts)


def _valid_stats(raw: object) -> tuple[dict[str, dict[str, int]], str]:
    """The ``{skill: {counter: int}}`` part of a stats file, and what was dropped (empty if nothing)."""
    if not isinstance(raw, dict):
        return {}, f"expected an object of skill -> counters, got {type(raw).__name__}"
    stats: dict[str, dict[str, int]] = {}
    bad: list[str] = []
    for name, counters in raw.items():
        if not isinstance(counters, dict):
            bad.append(str(name))
            continue
        good = {str(k): v for k, v in counters.items() if isinstance(v, int) and not isinstance(v, bool)}
        if len(good) != len(counters):
            bad.append(str(name))
        stats[str(name)] = good
    return stats, (f"entries of {', '.join(bad[:5])}{' ...' if len(bad) > 5 else ''}" if bad else "")


def rename_skill(skill: Skill, new_name: str) -> Skill:
    """A copy of ``skill`` whose function is renamed (only the ``def`` line changes)."""
    code = rename_function(skill.code, skill.name, new_name)
    return Skill(new_name, skill.family, code, skill.description, dict(skill.meta), None)


def header_length(text: str) -> int:
    """Number of header/comment lines before a skill's code."""
    n = 0
    for line in text.splitlines():
        if not (line.startswith("#") or not line.strip()):
            break
        n += 1
    return n


def _without_path(message: str, path: Path | str) -> str:
    """Sandbox messages start with the file path; problems are listed by file already."""
    import re

    message = message.replace(f"{path}:", "", 1).replace(str(path), "").strip()
    message = re.sub(r"^(\d+):", r"line \1:", message)
    return message.replace("Line ", "line ")
