"""The keep gate's decisions on combat (real SMAX episodes, short): a candidate is kept only when a
paired test on the same seeds finds it better than the library's best; a behaviour-identical copy
(tie) and a worse variant are dropped with their figures; ``check`` mode keeps what passes the
check without playing it; an evaluation that breaks drops the candidate and the review goes on;
role-aware judging plays the candidate for its author only."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from compass.core.family import get_family
from compass.skills.holdup import KeepGate, judge
from compass.skills.library import SkillLibrary
from compass.skills.params import set_params
from compass.skills.skill import parse_skill_source

ENV = "smax:protoss_5_vs_5"
TASK = get_family("combat").default_task
N, STEPS = 6, 60  # paired seeds 1000-1005, 60 steps: a few seconds per evaluation

STAND_GROUND = '''def stand_ground(obs: str) -> int:
    """Stand ground: keep the position and hold fire."""
    obs_data = parse_obs(obs)
    return 0 if 0 in obs_data.available_actions else 1
'''


@pytest.fixture()
def lib(tmp_path):
    shutil.copytree(get_family("combat").seed_skills_dir, tmp_path / "combat")
    return SkillLibrary(tmp_path, "combat")


def _gate(lib, **kw):
    return KeepGate(lib, ENV, TASK, episodes=N, max_steps=STEPS, isolation="inprocess", **kw)


def _meta(skill):
    skill.meta = {"provenance": "generated", "parent": "-", "model": "openai:m1", "subtask": "fight"}
    return skill


def _variant(lib, name, **params):
    """A real variant of the seed's best skill: named parameters changed (compass.skills.params)."""
    base = lib.get("race_adaptive_combat")
    code = set_params(base, params).code.replace("def race_adaptive_combat(", f"def {name}(", 1)
    return _meta(parse_skill_source(code, "combat", name=name))


def _copy(lib, name):
    """The best skill renamed and reformatted: identical in behaviour."""
    code = lib.get("race_adaptive_combat").code.replace("def race_adaptive_combat(", f"def {name}(", 1)
    return _meta(parse_skill_source(code + "\n\n", "combat", name=name))


def _stand(name="stand_ground"):
    return _meta(parse_skill_source(STAND_GROUND.replace("stand_ground", name), "combat", name=name))


def test_identical_copy_is_a_tie_and_is_dropped(lib):
    gate = _gate(lib)
    lib.stage(_copy(lib, "same_again"))
    (entry,) = asyncio.run(gate.review(0))
    assert entry["verdict"] == "dropped" and entry["reason"].startswith(
        "not shown better than the library's best"
    )
    test = entry["test"]
    assert (
        test["verdict"] == "tie" and test["n"] == N and test["mean_diff"] == 0.0 and test["p_better"] == 1.0
    )
    # paired: both played the same seeds, episode by episode
    assert entry["candidate"]["returns"] == entry["best"]["returns"] and len(entry["best"]["returns"]) == N
    assert "same_again" not in lib and not (lib.dir / "same_again.py").exists()
    assert lib.best_for(TASK) is None and gate.summary()["dropped"] == ["same_again"]


def test_worse_variant_is_dropped_with_its_figures(lib):
    gate = _gate(lib)
    lib.stage(_stand())
    (entry,) = asyncio.run(gate.review(0))
    assert entry["verdict"] == "dropped" and entry["reason"].startswith("worse than the library's best")
    assert entry["test"]["verdict"] == "worse" and entry["test"]["ci"][1] < 0
    assert f"n {N}, mean diff -" in entry["reason"] and "seeds 1000-1005" in entry["reason"]
    assert "stand_ground" not in lib


def test_better_variant_is_kept_with_the_test_in_commit_header_and_summary(lib):
    # the library's best is a weak skill: a real variant of the seed generalist beats it
    lib.stage(_stand("weak_best"))
    lib.keep("weak_best", {"eval": "-"}, reason="seeded as best", best_for={"task": TASK})
    assert lib.best_for(TASK) == "weak_best"
    gate = _gate(lib)
    lib.stage(_variant(lib, "focus_harder", focus_bonus=3.0))
    (entry,) = asyncio.run(gate.review(3))
    assert entry["verdict"] == "kept" and entry["became_best"], entry["reason"]
    assert entry["test"]["verdict"] == "better" and entry["test"]["ci"][0] > 0
    assert entry["best"]["skill"] == "weak_best"
    fresh = SkillLibrary(lib.root, "combat")
    assert fresh.best_for(TASK) == "focus_harder"
    record = fresh.best_record(TASK)
    assert (
        record["test"]["n"] == N and record["test"]["p_better"] < 0.05 and record["replaced"] == "weak_best"
    )
    (version,) = fresh.history("focus_harder")
    assert version.reason.startswith("keep focus_harder: better than weak_best")
    assert f"n {N}, mean diff +" in version.reason and "p " in version.reason and "CI" in version.reason
    assert "mean diff" in fresh.get("focus_harder").meta["eval"]
    summary = gate.summary()
    assert summary["kept"] == ["focus_harder"] and summary["alpha"] == 0.05 and "paired" in summary["rule"]
    assert summary["log"][0]["test"]["n"] == N


def test_check_mode_keeps_what_passes_the_check_without_playing_it(lib):
    gate = _gate(lib, mode="check")
    lib.stage(_stand())
    (entry,) = asyncio.run(gate.review(0))
    assert (
        entry["verdict"] == "kept"
        and entry["stage"] == "check"
        and "recorded observations" in entry["reason"]
    )
    assert "candidate" not in entry and "test" not in entry  # not played
    assert (lib.dir / "stand_ground.py").exists() and lib.best_for(TASK) is None


def test_an_evaluation_that_breaks_drops_the_candidate_and_the_review_goes_on(lib):
    gate = _gate(lib)
    gate.env_spec = "smax:no_such_scenario"
    lib.stage(_stand("first"))
    lib.stage(_stand("second"))
    entries = asyncio.run(gate.review(1))
    assert [e["skill"] for e in entries] == ["first", "second"]
    for e in entries:
        assert e["verdict"] == "dropped" and e["reason"].startswith("evaluation failed:")
        assert "no_such_scenario" in e["reason"]
    assert not lib.staged and "first" not in lib and "second" not in lib


def test_role_aware_judging_plays_the_candidate_for_its_author_only(lib):
    team = _gate(lib)
    lib.stage(_stand())
    (as_team,) = asyncio.run(team.review(0))
    author = _gate(lib, judge="author")
    lib.stage(_stand())
    author.authors["stand_ground"] = 0
    (as_role,) = asyncio.run(author.review(0))
    assert "agent 0 runs it, the others race_adaptive_combat" in as_role["reason"]
    assert "every agent runs it" in as_team["reason"]
    # one unit holding fire costs less than a whole team holding fire
    assert as_role["candidate"]["mean_return"] > as_team["candidate"]["mean_return"]
    assert as_role["best"]["returns"] == as_team["best"]["returns"]


def test_judge_uses_the_family_score_else_the_return():
    a = {"returns": [1.0, 2.0, 3.0], "scores": [5.0, 5.0, 5.0], "score_key": "total_pct"}
    b = {"returns": [0.0, 0.0, 0.0], "scores": [5.0, 5.0, 5.0], "score_key": "total_pct"}
    assert judge(a, b)["verdict"] == "tie" and judge(a, b)["figure"] == "total_pct"
    a.pop("scores"), b.pop("scores")
    a.pop("score_key"), b.pop("score_key")
    assert judge(a, b)["figure"] == "return" and judge(a, b)["mean_diff"] == pytest.approx(2.0)
