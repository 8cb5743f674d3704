"""What a run prints is compass's own output: no jaxmarl import banner on stdout (it went into piped
results), no JAX fork warning when ffmpeg starts for ``--video``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_video_run_prints_only_its_results(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "compass.cli", "run", "--max-steps", "3", "--video", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout
    assert lines[0].startswith("episode 0 seed 0:") and lines[1].startswith("win rate ")
    assert "os.fork()" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    # the first use compiles SMAX: said once, with the time to expect, so it does not look hung
    assert proc.stderr.count("compiling SMAX 5 vs 5 (first use, ~") == 1, proc.stderr
    assert list(tmp_path.glob("*/videos/episode_000.mp4"))


def test_quiet_import_keeps_a_redirected_stdout(capsys):
    """jaxmarl's mabrax module resets sys.stdout to the process's original: output captured
    around it (CliRunner, pytest) escaped to the terminal."""
    import io

    sys.modules.pop("compass.util.quiet", None)
    from compass.util.quiet import import_quietly

    buf = io.StringIO()
    saved = sys.stdout
    sys.stdout = buf
    try:
        import_quietly("jaxmarl.environments")
        print("still here")
    finally:
        sys.stdout = saved
    assert buf.getvalue() == "still here\n"
