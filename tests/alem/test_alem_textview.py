"""ALEM's recorded observations and its text parser drive ``compass skills check --family alem``."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from compass.cli import app
from compass.core.family import get_family
from compass.games.alem.obs import parse_alem_text
from compass.games.alem.skill_api import obs_data_from_view
from compass.games.alem.textview import view_from_text
from compass.skills.check import check_library, load_observations
from compass.skills.library import SkillLibrary

FAM = get_family("alem")

# Breaks where the agent has no stone (most observations) and returns an illegal action where dead.
FRAGILE = '''def needs_stone(obs: str) -> int:
    """Place stone ahead; assumes the agent carries some."""
    d = parse_obs(obs)
    if d.inventory["stone"] == 0:
        raise ValueError("no stone")
    return place("stone")
'''


@pytest.fixture(scope="module")
def records() -> list[dict]:
    lines = FAM.observations_path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_recorded_observations_are_many_small_and_varied(records):
    assert len(records) >= 50 and FAM.observations_path.stat().st_size < 2_000_000
    texts = [r["text"] for r in records]
    assert {parse_alem_text(t).role for t in texts if "Role:" in t} == {"warrior", "forager", "miner"}
    assert any("Reported by teammates:" in t for t in texts)
    assert any("Status: dead" in t for t in texts)
    assert max(r["step"] for r in records) >= 300  # night falls around step 210 of each day


def test_view_from_text_rebuilds_what_the_record_says(records):
    for r in records:
        view = view_from_text(r["text"])
        assert (view.agent_id, view.step, view.alive) == (r["agent"], r["step"], r["alive"])
        # Creatures teammates reported: one per line of the relayed block, as skills read them.
        reported = r["text"].partition("Reported by teammates:\n")[2].splitlines()
        relayed = [e for e in view.entities if not e.visible and e.team == "enemy"]
        assert len(relayed) == len(reported) and (not reported or r["relayed"] > 0)
        assert [(m.name, m.x, m.y) for m in obs_data_from_view(view).relayed] == [
            (e.unit_type, int(e.x), int(e.y)) for e in relayed
        ]
        assert view.text == r["text"]
        assert view.with_entities(view.entities).text == r["text"]  # relayed block rebuilt identically
        d = view.obs
        assert set(d.inventory) >= {"wood", "stone", "pickaxe", "sword"}  # every key, as the state path
        assert list(view.avail_actions) == d.legal_indices


def test_view_from_text_rejects_other_text():
    with pytest.raises(ValueError, match="not an ALEM observation"):
        view_from_text("Step 0. You are Ally #3, a zealot")
    with pytest.raises(ValueError, match="empty"):
        view_from_text("  ")


def test_seed_library_runs_cleanly_on_every_observation():
    lib = SkillLibrary(None, "alem")
    n = len(load_observations(FAM.observations_path))
    rows = check_library(lib)
    assert len(rows) == len(lib.names()) >= 10
    assert all(r.runs == n and r.errors == [] for r in rows), [(r.name, r.errors[:1]) for r in rows]


def test_cli_skills_check_alem_fails_on_a_faulty_skill(tmp_path):
    shutil.copytree(FAM.seed_skills_dir, tmp_path / "alem", ignore=shutil.ignore_patterns("_stats.json"))
    runner = CliRunner()
    ok = runner.invoke(app, ["skills", "check", "--family", "alem", "--library", str(tmp_path)])
    assert ok.exit_code == 0 and "ran cleanly" in ok.output, ok.output
    (tmp_path / "alem" / "needs_stone.py").write_text("# provenance: human\n" + FRAGILE)
    bad = runner.invoke(app, ["skills", "check", "--family", "alem", "--library", str(tmp_path)])
    assert bad.exit_code == 1 and "needs_stone" in bad.output
    row = next(r for r in check_library(SkillLibrary(tmp_path, "alem")) if r.name == "needs_stone")
    assert row.errors and "no stone" in row.errors[0]
