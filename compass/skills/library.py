"""The on-disk skill library: one ``.py`` per skill under ``<root>/<family>/``, plus usage stats.

Loading never fails because of one bad file: a file that does not parse or compile in the
sandbox (or is too large, too deeply nested, not UTF-8...) is reported (name, line, reason) in
:attr:`SkillLibrary.problems` and skipped, as is a stats file of the wrong shape; files with
another extension (``shout.PY``) are reported too. Names starting with ``.`` or ``_`` are the
library's own (stats, temporary files, locks) and are not skills.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from compass.core.family import get_family
from compass.sandbox import CompiledSkill, SkillError, compile_skill
from compass.skills.embedding import Embedder
from compass.skills.skill import Skill, parse_skill_source, rename_function, validate_name
from compass.util.atomic import atomic_write_json, atomic_write_text

STATS_FILE = "_stats.json"
#: Larger skill files are refused unread (a skill is a function of a few dozen lines).
MAX_SKILL_BYTES = 256 * 1024


def default_library_root() -> Path | None:
    """$COMPASS_LIBRARY when set (a root holding ``<family>/``), else None: each family's shipped seed skills."""
    env = os.environ.get("COMPASS_LIBRARY")
    return Path(env) if env else None


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
        self.reload()

    # --- loading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """(Re)read every skill file; bad files go to :attr:`problems`."""
        self.skills.clear()
        self.compiled.clear()
        self.problems = []
        if not self.dir.is_dir():
            raise FileNotFoundError(f"no skill library for family {self.family!r} at {self.dir}")
        for path in sorted(self.dir.iterdir()):
            if path.suffix == ".py" and path.is_file():
                self._load_file(path)
            elif not path.name.startswith((".", "_")) and path.name != "__pycache__":
                self._unknown_file(path)
        self.stats = self._read_stats()
        self._index_names: list[str] = []
        self._index = None

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
        """The ``k`` skills whose descriptions are most similar to ``query`` (cosine), best first."""
        import faiss

        if not self.skills:
            return []
        names = self.names()
        if self._index is None or self._index_names != names:
            vecs = self.embedder.embed([self._embed_text(self.skills[n]) for n in names])
            self._index = faiss.IndexFlatIP(vecs.shape[1])
            self._index.add(vecs)
            self._index_names = names
        q = self.embedder.embed([query], persist=False)
        scores, idx = self._index.search(q, min(k, len(names)))
        # Ties (identical descriptions) resolve by name so retrieval is deterministic.
        hits = [(float(s), names[int(i)]) for s, i in zip(scores[0], idx[0], strict=True) if i >= 0]
        hits.sort(key=lambda h: (-round(h[0], 6), h[1]))
        return [Retrieved(self.skills[n], s) for s, n in hits]

    @staticmethod
    def _embed_text(skill: Skill) -> str:
        # The summary, not the whole docstring: details (how it kites, which constants) dilute what
        # the skill is for, and the summary is also what the planner's skill listings show.
        return f"{skill.name.replace('_', ' ')}: {skill.summary}"

    # --- changes ----------------------------------------------------------------------------

    def add(self, skill: Skill, overwrite: bool = False) -> Skill:
        """Compile ``skill`` in the sandbox and write it atomically; returns the stored skill.

        A name collision without ``overwrite`` gets a numeric suffix (``name_v2``...), so a
        generated refinement never silently replaces its parent.
        """
        validate_name(skill.name)
        name = skill.name
        if not overwrite and name in self.skills:
            n = 2
            while f"{name}_v{n}" in self.skills:
                n += 1
            name = f"{name}_v{n}"
            skill = rename_skill(skill, name)
        skill.meta.setdefault("provenance", "generated")
        skill.meta.setdefault("created", datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        path = self.dir / f"{name}.py"
        compiled = compile_skill(
            skill.code,
            skill.name,
            self.family,
            self.display_name(path),
            line_offset=header_length(skill.file_text()),
        )
        atomic_write_text(path, skill.file_text())
        skill.path = path
        self.skills[name] = skill
        self.compiled[name] = compiled
        return skill

    def record_use(self, name: str, **counts: int) -> None:
        """Add to a skill's counters (uses, errors, wins, episodes...) in memory."""
        s = self.stats.setdefault(name, {})
        for k, v in counts.items():
            s[k] = s.get(k, 0) + v

    def save_stats(self) -> None:
        atomic_write_json(self.dir / STATS_FILE, self.stats)


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
