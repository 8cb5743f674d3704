"""The skill library as the viewer sees it: per family, reloaded when another process changed it.

Statistics shown per skill come from two places: the library's own ``_stats.json`` (uses and
errors counted by every run that used this library) and the runs under the viewer's runs
directory (decisions that chose the skill, and the win rate of the episodes whose agents used it).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from compass.core.family import families
from compass.skills.library import SkillLibrary
from compass.skills.skill import Skill
from compass.viewer.runs import RunStore


class LibraryView:
    """Open libraries of a root (or the shipped seed libraries when ``root`` is None)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._libs: dict[str, tuple[tuple, SkillLibrary]] = {}
        self._lock = threading.Lock()

    @property
    def read_only(self) -> bool:
        return self.root is None

    def families(self) -> list[str]:
        names = sorted(families())
        if self.root is None:
            return names
        return [n for n in names if (self.root / n).is_dir()]

    def _stamp(self, family: str) -> tuple:
        d = (self.root / family) if self.root is not None else None
        if d is None:
            return ()
        head = self.root / ".git" / "HEAD"
        ref = self.root / ".git" / "refs" / "heads" / "main"
        stats = d / "_stats.json"
        return tuple(p.stat().st_mtime_ns if p.exists() else 0 for p in (d, head, ref, stats))

    def get(self, family: str) -> SkillLibrary:
        """The library of ``family``, reloaded when its folder or history changed on disk."""
        if family not in self.families():
            raise KeyError(f"no {family!r} library (have: {', '.join(self.families())})")
        with self._lock:
            stamp = self._stamp(family)
            cached = self._libs.get(family)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            if cached is not None:
                lib = cached[1]
                lib.reload()  # keeps the embedding matrix rows of unchanged skills
            else:
                lib = SkillLibrary(self.root, family)
            self._libs[family] = (self._stamp(family), lib)
            return lib

    def touch(self, family: str) -> None:
        """After the viewer itself changed the library: remember the new on-disk state."""
        with self._lock:
            if family in self._libs:
                self._libs[family] = (self._stamp(family), self._libs[family][1])


def skill_row(lib: SkillLibrary, skill: Skill) -> dict[str, Any]:
    st = lib.stats.get(skill.name, {})
    return {
        "name": skill.name,
        "provenance": skill.provenance,
        "parent": skill.parent,
        "description": (skill.description.splitlines() or [""])[0],
        "uses": st.get("uses", 0),
        "errors": st.get("errors", 0),
    }


def lineage(lib: SkillLibrary, name: str) -> dict[str, Any]:
    """Ancestors (parent chain) and children of ``name`` by the ``parent`` header."""
    chain, seen = [], {name}
    cur = lib.skills[name].parent
    while cur and cur not in seen:
        chain.append(cur)
        seen.add(cur)
        cur = lib.skills[cur].parent if cur in lib.skills else None
    children = sorted(n for n, s in lib.skills.items() if s.parent == name)
    return {"ancestors": chain, "children": children}


def usage_in_runs(store: RunStore, name: str) -> dict[str, Any]:
    """Decisions that chose ``name`` and the outcomes of episodes where an agent ran it."""
    decisions = episodes = wins = 0
    errors = 0
    for run in store.list_runs():
        try:
            s = store.summary(run["id"]) or {}
        except Exception:
            continue
        for e in s.get("episodes", []):
            if name in (e.get("skills_used") or {}):
                episodes += 1
                wins += e.get("outcome") == "win"
        try:
            idx = store.index(run["id"])
        except Exception:
            continue
        for ep in idx.episodes.values():
            offs = [o for lst in ep.decisions.values() for o in lst]
            for d in store.read_at(run["id"], offs):
                decisions += d.get("skill") == name
            errors += sum(
                1 for ev in ep.events if ev["kind"] == "error" and ev["text"].startswith(f"{name}:")
            )
    return {
        "decisions": decisions,
        "episodes": episodes,
        "wins": wins,
        "win_rate": round(wins / episodes, 4) if episodes else None,
        "errors": errors,
    }
