"""Many processes writing one library lose nothing (issue 18): two writers adding 100 skills each
at once, plus a writer killed with SIGKILL in the middle of its writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from compass.skills.library import SkillLibrary

REPO = Path(__file__).resolve().parents[2]


def _writer(root: Path, tag: str, n: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.skills.library_writer", str(root), tag, str(n)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_two_writers_lose_no_skill_no_use_and_no_version(lib_root):
    procs = [_writer(lib_root, tag, 100) for tag in ("alpha", "beta")]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    acknowledged = [
        line.split()[1] for out, _ in outs for line in out.splitlines() if line.startswith("added ")
    ]
    assert len(acknowledged) == 220 and len(set(acknowledged)) == 220  # 200 own + 20 colliding probes

    lib = SkillLibrary(lib_root, "combat")
    assert not lib.problems
    missing = [n for n in acknowledged if n not in lib]
    assert missing == []
    for tag in ("alpha", "beta"):
        assert all(f"{tag}_{i}" in lib for i in range(100))
    # The 20 "shared_probe" adds got distinct names, none overwritten.
    assert sum(1 for n in lib.names() if n == "shared_probe" or n.startswith("shared_probe_v")) == 20
    # Usage counts were merged, not overwritten: 100 uses from each writer.
    assert json.loads((lib_root / "combat" / "_stats.json").read_text())["attack_nearest"]["uses"] == 200
    # One version per add, each with its model author; nothing left uncommitted or stray.
    log = _git(lib_root, "log", "--format=%an|%s")
    assert sum(1 for line in log.splitlines() if line.startswith("writer-")) == 220
    assert _git(lib_root, "status", "--porcelain") == ""
    assert not list((lib_root / "combat").glob(".*.tmp"))


def test_kill_9_mid_write_leaves_nothing_broken_or_stray(lib_root):
    p = _writer(lib_root, "victim", 10_000)
    acknowledged = []
    deadline = time.monotonic() + 300
    while len(acknowledged) < 15 and time.monotonic() < deadline:
        line = p.stdout.readline()
        if line.startswith("added "):
            acknowledged.append(line.split()[1])
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    assert len(acknowledged) >= 15

    # A later writer finds the library consistent: every acknowledged skill is there and versioned,
    # and its own change commits cleanly (stale git lock and temp files of the killed one are gone).
    survivor = _writer(lib_root, "after", 3)
    out, err = survivor.communicate(timeout=300)
    assert survivor.returncode == 0, err
    lib = SkillLibrary(lib_root, "combat")
    assert [n for n in acknowledged if n not in lib] == []
    assert {"after_0", "after_1", "after_2"} <= set(lib.names())
    tracked = set(_git(lib_root, "ls-files", "combat").split())
    assert {f"combat/{n}.py" for n in acknowledged} <= tracked
    assert not [p for p in lib_root.rglob(".*.tmp") if ".git" not in p.parts]
    assert not (lib_root / ".git" / "index.lock").exists()
    subprocess.run(["git", "fsck", "--no-progress"], cwd=lib_root, check=True, capture_output=True)
