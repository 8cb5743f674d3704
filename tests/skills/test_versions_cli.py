"""``compass skills add|edit|rm|rename|diff|history|revert``: every change is a version with author and reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from compass.cli import app
from compass.skills.library import SkillLibrary

runner = CliRunner()

NEW = '''# provenance: human
def hold_and_shoot(obs: str) -> int:
    """Stay where you are and shoot the nearest enemy in range."""
    obs_data = parse_obs(obs)
    targets = [e for e in obs_data.enemies if e.can_attack]
    if targets:
        return attack(min(targets, key=lambda e: e.distance).id)
    return 1
'''


def cli(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(
        app, list(args), env={"COMPASS_AUTHOR": "Ada Tester", "COLUMNS": "250", **(env or {})}
    )


def _editor(tmp_path: Path, find: str, replace: str) -> str:
    """An $EDITOR that replaces text in the file it is given (a person editing, scripted)."""
    script = tmp_path / f"editor_{abs(hash((find, replace)))}.py"
    script.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        f"p.write_text(p.read_text().replace({find!r}, {replace!r}, 1))\n"
    )
    return f"{sys.executable} {script}"


def test_add_edit_history_diff_revert_round_trip(lib_root, tmp_path):
    src = tmp_path / "hold_and_shoot.py"
    src.write_text(NEW)
    r = cli("skills", "add", str(src), "--library", str(lib_root), "--reason", "a simple holder")
    assert r.exit_code == 0, r.output
    path = lib_root / "combat" / "hold_and_shoot.py"
    v1 = path.read_text()

    editor = _editor(tmp_path, "return 1\n", "return 1  # stop when nothing is in range\n")
    r = cli(
        "skills",
        "edit",
        "hold_and_shoot",
        "--library",
        str(lib_root),
        "--reason",
        "explain the stop",
        env={"EDITOR": editor},
    )
    assert r.exit_code == 0, r.output
    assert path.read_text().endswith("return 1  # stop when nothing is in range\n")

    r = cli("skills", "history", "hold_and_shoot", "--library", str(lib_root))
    assert r.exit_code == 0, r.output
    assert "a simple holder" in r.output and "explain the stop" in r.output and "Ada Tester" in r.output

    r = cli("skills", "diff", "hold_and_shoot", "1", "2", "--library", str(lib_root))
    assert r.exit_code == 0
    assert "-    return 1\n" in r.output and "+    return 1  # stop when nothing is in range" in r.output

    r = cli("skills", "revert", "hold_and_shoot", "1", "--library", str(lib_root))
    assert r.exit_code == 0, r.output
    assert path.read_text() == v1
    lib = SkillLibrary(lib_root, "combat")
    versions = lib.history("hold_and_shoot")
    assert [v.action for v in versions] == ["add", "edit", "revert"]
    assert all(v.author == "Ada Tester" and v.kind == "person" for v in versions)


def test_refused_edit_writes_nothing(lib_root, tmp_path):
    path = lib_root / "combat" / "focus_fire.py"
    before = path.read_text()
    lib = SkillLibrary(lib_root, "combat")
    n_before = len(lib.history("focus_fire"))
    editor = _editor(tmp_path, "obs_data = parse_obs(obs)", "obs_data = parse_obs(obs\n")
    r = cli("skills", "edit", "focus_fire", "--library", str(lib_root), env={"EDITOR": editor})
    assert r.exit_code == 1
    assert "syntax error" in r.output and "line " in r.output and "nothing saved" in r.output
    assert "Traceback" not in r.output
    assert path.read_text() == before
    assert len(SkillLibrary(lib_root, "combat").history("focus_fire")) == n_before


def test_edit_that_fails_on_recorded_observations_is_refused(lib_root, tmp_path):
    path = lib_root / "combat" / "focus_fire.py"
    before = path.read_text()
    editor = _editor(tmp_path, "obs_data = parse_obs(obs)", "obs_data = parse_obs(obs)\n    x = 1 // 0")
    r = cli("skills", "edit", "focus_fire", "--library", str(lib_root), env={"EDITOR": editor})
    assert r.exit_code == 1
    assert "ZeroDivisionError" in r.output and "nothing saved" in r.output
    assert path.read_text() == before


def test_rename_rm_and_revert_brings_a_removed_skill_back(lib_root):
    r = cli("skills", "rename", "kite_melee", "kite_close_range", "--library", str(lib_root))
    assert r.exit_code == 0, r.output
    lib = SkillLibrary(lib_root, "combat")
    assert "kite_close_range" in lib and "kite_melee" not in lib
    assert "def kite_close_range(" in lib.get("kite_close_range").code
    assert [v.action for v in lib.history("kite_close_range")] == ["import", "rename"]

    r = cli("skills", "rm", "kite_close_range", "--library", str(lib_root), "--reason", "trying without it")
    assert r.exit_code == 0 and not (lib_root / "combat" / "kite_close_range.py").exists()
    r = cli("skills", "revert", "kite_close_range", "prev", "--library", str(lib_root))
    assert r.exit_code == 0, r.output
    assert "kite_close_range" in SkillLibrary(lib_root, "combat")


def test_shipped_library_is_read_only_and_bad_input_is_one_line(lib_root, tmp_path, monkeypatch):
    monkeypatch.delenv("COMPASS_LIBRARY", raising=False)
    r = cli("skills", "rm", "focus_fire")
    assert r.exit_code == 2 and "read-only" in r.output and "Traceback" not in r.output
    r = cli("skills", "revert", "focus_fire", "99", "--library", str(lib_root))
    assert r.exit_code == 1 and "no recorded versions" in r.output  # nothing changed through compass yet
    assert cli("skills", "rm", "regroup", "--library", str(lib_root)).exit_code == 0  # starts the history
    r = cli("skills", "revert", "focus_fire", "99", "--library", str(lib_root))
    assert r.exit_code == 1 and "no version '99'" in r.output and "1..1" in r.output
    r = cli("skills", "diff", "nope", "--library", str(lib_root))
    assert r.exit_code == 1 and "no recorded versions" in r.output
    (tmp_path / "focus_fire.py").write_text(NEW)
    r = cli("skills", "add", str(tmp_path / "focus_fire.py"), "--library", str(lib_root))
    assert r.exit_code == 1 and "exists" in r.output


def test_synthesis_adds_are_versions_by_the_model(lib_root):
    from compass.skills.skill import parse_skill_source

    lib = SkillLibrary(lib_root, "combat")
    skill = parse_skill_source(NEW.replace("# provenance: human\n", ""), "combat", name="hold_and_shoot")
    skill.meta = {
        "provenance": "generated",
        "parent": "focus_fire",
        "model": "openai:gpt-test",
        "subtask": "hold",
    }
    stored = lib.add(skill)
    (v,) = lib.history(stored.name)
    assert (v.author, v.kind, v.action) == ("openai:gpt-test", "model", "add")
    assert "from focus_fire" in v.reason and "hold" in v.reason
    log = subprocess.run(
        ["git", "log", "--format=%an", "-1"], cwd=lib_root, capture_output=True, text=True
    ).stdout
    assert log.strip() == "openai:gpt-test"


def test_skills_init_starts_an_editable_versioned_library_of_every_family(tmp_path):
    from compass.core.family import families

    root = tmp_path / "mylib"
    r = cli("skills", "init", str(root))
    assert r.exit_code == 0, r.output
    for name, fam in families().items():
        shipped = sorted(p.name for p in fam.seed_skills_dir.glob("*.py"))
        assert sorted(p.name for p in (root / name).glob("*.py")) == shipped
        lib = SkillLibrary(root, name)
        assert not lib.problems and not lib.shipped
        first = shipped[0].removesuffix(".py")
        (v1,) = lib.history(first)  # versioned from the start: the seed is version 1
        assert v1.number == 1 and v1.action == "add"
    r = cli("skills", "list", "--library", str(root), "--family", "alem")
    assert r.exit_code == 0 and "gather_wood" in r.stdout
    # Editable at once: an edit is version 2 of the seed skill.
    src = tmp_path / "hold_and_shoot.py"
    src.write_text(NEW)
    assert cli("skills", "add", str(src), "--library", str(root)).exit_code == 0
    # Never over an existing library or a non-empty folder.
    r = cli("skills", "init", str(root))
    assert r.exit_code != 0 and "library already" in r.output
    assert (root / "combat" / "hold_and_shoot.py").exists()


def test_a_missing_library_points_at_skills_init(tmp_path):
    src = tmp_path / "hold_and_shoot.py"
    src.write_text(NEW)
    r = cli("skills", "add", str(src), "--library", str(tmp_path / "newdir"))
    assert r.exit_code == 2 and "compass skills init" in r.output
    assert not (tmp_path / "newdir").exists()  # no one-skill library by accident
    r = cli("skills", "list", "--library", str(tmp_path / "newdir"))
    assert r.exit_code == 2 and "compass skills init" in r.output


def test_a_file_given_as_the_library_is_said_to_be_a_file(tmp_path):
    """Not "no library at f.py: start one with compass skills init f.py", which then fails."""
    a_file = tmp_path / "hold_and_shoot.py"
    a_file.write_text(NEW)
    for args in (
        ("skills", "init", str(a_file)),
        ("skills", "list", "--library", str(a_file)),
        ("skills", "add", str(a_file), "--library", str(a_file)),
        ("run", "--library", str(a_file), "--max-steps", "1", "--out", str(tmp_path / "runs")),
    ):
        r = cli(*args)
        lines = [x for x in r.output.splitlines() if x.strip()]
        assert r.exit_code != 0 and len(lines) == 1, (args, r.output)
        assert f"{a_file} is a file" in lines[0] and "init " + str(a_file) not in lines[0], args
    assert a_file.read_text() == NEW
