"""The library side of the keep gate: staged skills are usable but unwritten until kept, dropped
ones leave nothing, a kept one is a version by the model and may become the task's best, which the
library planner then plays."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from compass.core.family import get_family
from compass.core.types import AgentView
from compass.planner.base import DecisionContext, LibraryPlanner
from compass.skills.holdup import compare
from compass.skills.library import BEST_FILE, SkillLibrary
from compass.skills.skill import parse_skill_source

CODE = '''def hold_the_line(obs: str) -> int:
    """Hold the line: stop and shoot whatever is in range."""
    d = parse_obs(obs)
    for e in d.enemies:
        if e.can_attack:
            return attack(e.id)
    return 1
'''
TASK = "Defeat all enemy units"


@pytest.fixture()
def lib(tmp_path):
    shutil.copytree(get_family("combat").seed_skills_dir, tmp_path / "combat")
    return SkillLibrary(tmp_path, "combat")


def _candidate():
    skill = parse_skill_source(CODE, "combat", name="hold_the_line")
    skill.meta = {"provenance": "generated", "parent": "-", "model": "openai:m1", "subtask": "hold"}
    return skill


def _decide(lib):
    view = AgentView(0, "combat", 0, True, None, (), (1,), "")
    ctx = DecisionContext(agent_id=0, step=0, view=view, task=TASK, trigger="start")
    return asyncio.run(LibraryPlanner(lib).decide(ctx))


def test_staged_skill_runs_but_is_not_written_until_kept(lib):
    staged = lib.stage(_candidate())
    assert staged.name in lib and staged.name in lib.compiled and staged.name in lib.staged
    assert not (lib.dir / "hold_the_line.py").exists()
    assert "hold_the_line" not in SkillLibrary(lib.root, "combat")  # another process does not see it

    stored = lib.keep(
        staged.name,
        {"eval": "win 2/2 vs focus_fire win 1/2"},
        reason="keep: better",
        best_for={"task": TASK, "figures": "win 2/2"},
    )
    assert stored.name not in lib.staged and (lib.dir / "hold_the_line.py").exists()
    fresh = SkillLibrary(lib.root, "combat")
    assert fresh.get("hold_the_line").meta["eval"] == "win 2/2 vs focus_fire win 1/2"
    (version,) = fresh.history("hold_the_line")
    assert version.author == "openai:m1" and version.kind == "model" and version.reason == "keep: better"
    assert fresh.best_for(TASK) == "hold_the_line" and fresh.best_record(TASK)["figures"] == "win 2/2"
    assert (lib.dir / BEST_FILE).exists()
    # the library planner plays the recorded best instead of the top retrieval
    assert _decide(fresh).skill == "hold_the_line"


def test_dropped_skill_leaves_nothing(lib):
    before = lib.names()
    staged = lib.stage(_candidate())
    lib.record_use(staged.name, uses=5)
    lib.drop(staged.name)
    assert lib.names() == before and not lib.staged
    lib.save_stats()
    assert "hold_the_line" not in SkillLibrary(lib.root, "combat").stats
    assert not (lib.dir / "hold_the_line.py").exists()
    assert _decide(lib).skill != "hold_the_line"


def test_compare_by_score_then_return():
    a = {"score": 2.0, "win_rate": 0.0, "mean_return": 1.0}
    assert compare(a, {**a, "score": 1.0}) == 1
    assert compare(a, {**a, "score": 3.0}) == -1
    assert compare(a, {**a, "mean_return": 0.5}) == 1
    assert compare(a, dict(a)) == 0
    # without a family score: win rate first
    assert compare({"win_rate": 0.5, "mean_return": 0.0}, {"win_rate": 0.25, "mean_return": 9.0}) == 1


def test_gate_is_off_by_default_and_a_bad_mode_is_one_clear_error():
    from compass.cli.config_file import ConfigFileError, build_config
    from compass.config import RunConfig

    assert RunConfig().keep_gate == "off"
    assert RunConfig(keep_gate="eval", keep_gate_steps=50).keep_gate_steps == 50
    with pytest.raises(ConfigFileError, match="keep_gate"):
        build_config({}, {"keep_gate": "maybe"}, "run.yaml")
