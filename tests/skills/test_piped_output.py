"""Output piped or redirected is complete and plain: code as code, diffs whole, ids whole, reports
as markdown. ``COLUMNS=40`` stands for the narrow terminal still behind stdin when stdout is a
file (rich measured that terminal and cut everything to it)."""

from __future__ import annotations

import ast
import json

from typer.testing import CliRunner

from compass.cli import app
from compass.eval.store import EpisodeStore, write_meta

NARROW = {"COLUMNS": "40"}


def cli(*args: str):
    return CliRunner().invoke(app, list(args), env={**NARROW, "COMPASS_AUTHOR": "Ada Tester"})


def test_skills_show_redirected_is_the_file_itself(combat_library):
    r = cli("skills", "show", "attack_nearest")
    assert r.exit_code == 0, r.output
    text = combat_library.get("attack_nearest").file_text()
    assert r.stdout == text if text.endswith("\n") else text + "\n"
    ast.parse(r.stdout)  # no line numbers, no cropped lines


def test_skills_diff_redirected_is_a_whole_unified_diff(lib_root, tmp_path):
    path = lib_root / "combat" / "attack_nearest.py"
    long_line = "    # " + "a deliberately long comment that no terminal is wide enough for " * 3
    editor = tmp_path / "editor.py"
    editor.write_text(
        f"import sys, pathlib\np = pathlib.Path(sys.argv[1])\np.write_text(p.read_text() + {long_line + chr(10)!r})\n"
    )
    import sys

    r = CliRunner().invoke(
        app,
        ["skills", "edit", "attack_nearest", "--library", str(lib_root), "--reason", "note"],
        env={**NARROW, "COMPASS_AUTHOR": "Ada", "EDITOR": f"{sys.executable} {editor}"},
    )
    assert r.exit_code == 0, r.output
    r = cli("skills", "diff", "attack_nearest", "--library", str(lib_root))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("--- ") and "\n@@ " in r.stdout
    assert "+" + long_line + "\n" in r.stdout
    assert path.read_text().endswith(long_line + "\n")


def _eval_dir(out, name: str, configs: list[str]) -> None:
    """An eval directory as ``compass eval`` leaves it (rows of two seeds per configuration)."""
    store = EpisodeStore(out / name)
    for c in configs:
        for seed in (0, 1):
            store.append(
                {
                    "config": c,
                    "env": "smax:protoss_5_vs_5",
                    "seed": seed,
                    "outcome": "win" if seed == 0 else "loss",
                    "win": int(seed == 0),
                    "return": 1.0,
                    "steps": 30,
                    "skill_errors": 0,
                    "decisions": 4,
                    "vlm_calls": 0,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "cost_usd": 0.0,
                    "wall_s": 1.5,
                    "metrics": {},
                    "extra": {},
                }
            )
    store.close()
    write_meta(out / name, {"name": name, "config_order": configs, "configs": {}})


def test_runs_list_redirected_keeps_ids_whole_one_row_per_line(tmp_path):
    name = "ablation-of-communication-under-extended-partial-observability-" + "x" * 60
    _eval_dir(tmp_path, name, ["comm=none", "comm=multihop"])
    r = cli("runs", "list", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    header, row = r.stdout.splitlines()
    assert header.split("\t")[0] == "run"
    cells = row.split("\t")
    assert cells[0] == name and cells[1] == "eval" and cells[4] == "comm=none, comm=multihop"


def test_runs_show_redirected_is_the_markdown_report(tmp_path):
    _eval_dir(tmp_path, "abl", ["comm=none", "comm=multihop"])
    r = cli("runs", "show", "abl", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "# abl"
    rows = [ln for ln in lines if ln.startswith("| comm=")]
    assert [ln.split(" | ")[0] for ln in rows[:2]] == ["| comm=none", "| comm=multihop"]
    json.dumps(r.stdout)  # plain text: no escape codes to strip
    assert "\x1b[" not in r.stdout
