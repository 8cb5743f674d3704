"""A library root as a git repository: every change to a skill is a commit with an author and a reason.

The git CLI is the version store (no home-made one): ``history`` is ``git log --follow`` of a
skill's file, a version number counts that file's commits oldest first (``v1`` is its creation),
and any commit id prefix is accepted where a version is asked for.

Many processes (runs, the viewer, the CLI) may write one library at once. Every change goes
through :meth:`VersionStore.transaction`, which holds an inter-process file lock
(``filelock``) on ``<root>/.compass.lock`` while it writes files and commits; under the lock,
leftovers of a process killed mid-write are cleaned (stray ``.tmp`` files, a stale
``.git/index.lock``) and files changed outside compass (hand edits, a writer killed between its
write and its commit) are committed first, so nothing is silently folded into someone else's
version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from compass.core.errors import CompassError

LOCK_FILE = ".compass.lock"
#: Who made a change: a person, a model (synthesis, repair) or bootstrapping.
AUTHOR_KINDS = ("person", "model", "bootstrap", "unknown")
_IGNORE = "# compass: usage statistics and lock/temporary files are not versioned\n_stats.json\n*.tmp\n.compass.lock\n__pycache__/\n"
_SEP = "\x1f"


class VersionError(CompassError, ValueError):
    """A version store problem a user can act on (unknown version, git missing...)."""


@dataclass(frozen=True)
class Version:
    """One commit that touched a skill's file."""

    number: int  # 1 = oldest
    commit: str
    author: str
    kind: str  # person | model | bootstrap | unknown
    date: str
    reason: str
    path: str  # the file's path in the repository at that commit (renames change it)
    action: str  # add | edit | rm | rename | revert | ...

    def as_dict(self) -> dict[str, str | int]:
        return {
            "version": self.number,
            "commit": self.commit,
            "author": self.author,
            "kind": self.kind,
            "date": self.date,
            "reason": self.reason,
            "path": self.path,
            "action": self.action,
        }


def git_available() -> bool:
    return shutil.which("git") is not None


class VersionStore:
    """The git repository at a library root (created on first use)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.lock = FileLock(str(self.root / LOCK_FILE), timeout=120)

    # --- plumbing ---------------------------------------------------------------------------

    def git(self, *args: str, check: bool = True, env: dict[str, str] | None = None, capture: bool = False):
        """Run ``git args`` in the library root and return stdout (the process with ``capture``)."""
        base = {
            **os.environ,
            # Never pick up the user's hooks, signing or pager; this repository is compass's.
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "compass",
            "GIT_AUTHOR_EMAIL": "compass@localhost",
            "GIT_COMMITTER_NAME": "compass",
            "GIT_COMMITTER_EMAIL": "compass@localhost",
        }
        base.pop("GIT_DIR", None)
        base.pop("GIT_WORK_TREE", None)
        base.pop("GIT_INDEX_FILE", None)
        with warnings.catch_warnings():
            # JAX warns on any fork; git is exec'd at once, so the warning does not apply.
            warnings.filterwarnings("ignore", message="os.fork", category=RuntimeWarning)
            proc = subprocess.run(
                [
                    "git",
                    "-c",
                    "commit.gpgsign=false",
                    "-c",
                    "gc.autoDetach=false",  # an automatic repack finishes under our lock
                    "-c",
                    "core.hooksPath=/dev/null",
                    "-c",
                    "core.quotepath=off",
                    *args,
                ],
                cwd=self.root,
                env={**base, **(env or {})},
                capture_output=True,
                text=True,
            )
        if capture:
            return proc
        if check and proc.returncode != 0:
            raise VersionError(
                f"git {args[0]} failed in {self.root}: {proc.stderr.strip() or proc.stdout.strip()}"
            )
        return proc.stdout

    @property
    def initialised(self) -> bool:
        return (self.root / ".git").exists()

    def _ensure_repo(self) -> None:
        """``git init`` the root (under the lock) and commit what is already there as the start."""
        if self.initialised:
            return
        if not git_available():
            raise VersionError("the versioned library needs the git command line tool (apt-get install git)")
        self.git("init", "-q", "-b", "main")
        (self.root / ".gitignore").write_text(_IGNORE, encoding="utf-8")
        self.git("add", "-A")
        self._commit("initial library", "compass", "unknown", "import", allow_empty=True)

    def _cleanup(self) -> None:
        """Leftovers of a writer killed mid-write (we hold the lock, so nobody else is writing)."""
        remove_stray_temp_files(self.root)
        stale = self.root / ".git" / "index.lock"
        stale.unlink(missing_ok=True)

    def _commit(self, reason: str, author: str, kind: str, action: str, allow_empty: bool = False) -> bool:
        """Commit the index; False when there was nothing to commit."""
        message = f"{reason}\n\nCompass-Author-Kind: {kind}\nCompass-Action: {action}\n"
        args = ["commit", "-q", "--no-verify", "-m", message, f"--author={_author_field(author)}"]
        if allow_empty:
            args.append("--allow-empty")
        out = self.git(*args, check=False, capture=True)
        if out.returncode == 0:
            return True
        if "nothing to commit" in out.stdout + out.stderr or "no changes added" in out.stdout + out.stderr:
            return False
        raise VersionError(f"git commit failed in {self.root}: {(out.stderr or out.stdout).strip()}")

    def _dirty(self, paths: list[str] | None = None) -> bool:
        return bool(self.git("status", "--porcelain", "--", *(paths or ["."])).strip())

    # --- transactions -----------------------------------------------------------------------

    @contextmanager
    def transaction(self, reason: str, author: str, kind: str, action: str) -> Iterator[None]:
        """Hold the library lock; what the body writes is committed as one version.

        Changes found on disk before the body runs (hand edits, an interrupted writer) are
        committed first, as a version of their own by ``unknown``.
        """
        if kind not in AUTHOR_KINDS:
            raise VersionError(f"unknown author kind {kind!r} (one of {', '.join(AUTHOR_KINDS)})")
        self.root.mkdir(parents=True, exist_ok=True)
        with self.lock:
            self._ensure_repo()
            self._cleanup()
            if self._dirty():
                self.git("add", "-A")
                self._commit("changes found on disk (made outside compass)", "unknown", "unknown", "edit")
            yield
            self.git("add", "-A")
            self._commit(reason, author, kind, action)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Only the lock (for writes that are not versioned, such as usage statistics)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with self.lock:
            remove_stray_temp_files(self.root)
            yield

    # --- reading ----------------------------------------------------------------------------

    def history(self, relpath: str) -> list[Version]:
        """The commits that touched ``relpath`` (following renames), oldest first as v1, v2..."""
        if not self.initialised:
            return []
        fmt = _SEP.join(
            [
                "%H",
                "%an",
                "%aI",
                "%s",
                "%(trailers:key=Compass-Author-Kind,valueonly)",
                "%(trailers:key=Compass-Action,valueonly)",
            ]
        )
        out = self.git(
            "log", "--follow", "--name-only", f"--format=\x1e{fmt}\x1d", "--", relpath, check=False
        )
        entries = []
        for block in out.split("\x1e")[1:]:
            head, _, names = block.partition("\x1d")
            parts = head.split(_SEP)
            if len(parts) < 6:
                continue
            files = [n for n in names.strip().splitlines() if n.strip()]
            entries.append((parts, files[-1] if files else relpath))
        # git's --follow also "follows" into a similar file that was never renamed (a generated
        # skill looks like its parent): keep a path change only where compass recorded a rename.
        kept = entries[:1]
        for parts, path in entries[1:]:
            newer_parts, newer_path = kept[-1]
            if path != newer_path and newer_parts[5].strip() != "rename":
                break
            kept.append((parts, path))
        entries = kept
        entries.reverse()
        versions = []
        for n, (p, path) in enumerate(entries, 1):
            versions.append(
                Version(n, p[0], p[1], p[4].strip() or "unknown", p[2], p[3], path, p[5].strip() or "edit")
            )
        return versions

    def show(self, commit: str, relpath: str) -> str | None:
        """The file's text at ``commit`` (None when it did not exist there)."""
        try:
            return self.git("show", f"{commit}:{relpath}")
        except VersionError:
            return None

    def resolve(self, relpath: str, version: str) -> Version:
        """``version`` as ``3``, ``v3``, ``prev`` (= ``~1`` = ``-1``: the one before the latest), ``~N``, or a commit id prefix."""
        versions = self.history(relpath)
        if not versions:
            raise VersionError(
                f"{relpath} has no recorded versions"
                + ("" if self.initialised else " (history starts with the first change made through compass)")
            )
        v = version.strip().lower()
        if v.startswith("v") and v[1:].isdigit():
            v = v[1:]
        elif v in ("prev", "previous"):
            v = "-1"
        elif v.startswith("~") and v[1:].isdigit():
            v = "-" + v[1:]
        if v.lstrip("-").isdigit():
            n = int(v)
            idx = n - 1 if n > 0 else len(versions) - 1 + n
            if 0 <= idx < len(versions):
                return versions[idx]
            raise VersionError(f"{relpath} has versions 1..{len(versions)}; no version {version!r}")
        hits = [x for x in versions if x.commit.startswith(v)] if len(v) >= 4 else []
        if len(hits) == 1:
            return hits[0]
        raise VersionError(
            f"no version {version!r} of {relpath} (use a number 1..{len(versions)} or a commit id)"
        )


def remove_stray_temp_files(root: Path) -> None:
    """Delete ``.*.tmp`` files of interrupted atomic writes in the library (never inside ``.git``,
    which git itself changes, e.g. when it packs objects)."""
    for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: None):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for f in filenames:
            if f.startswith(".") and f.endswith(".tmp"):
                Path(dirpath, f).unlink(missing_ok=True)


def _author_field(author: str) -> str:
    """``Name <email>`` for git; a bare name gets a local address."""
    author = " ".join(author.split()) or "unknown"
    if "<" in author and author.endswith(">"):
        return author
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in author)[:60] or "unknown"
    return f"{author} <{safe}@compass.local>"


def default_person() -> str:
    """The person behind a CLI or viewer change: $COMPASS_AUTHOR, else git's user.name, else $USER."""
    if os.environ.get("COMPASS_AUTHOR"):
        return os.environ["COMPASS_AUTHOR"]
    if git_available():
        try:
            name = subprocess.run(
                ["git", "config", "--get", "user.name"], capture_output=True, text=True, timeout=5
            ).stdout.strip()
            if name:
                return name
        except (OSError, subprocess.SubprocessError):
            pass
    return os.environ.get("USER") or "person"
