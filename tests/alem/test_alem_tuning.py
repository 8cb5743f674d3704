"""The ALEM parameter tuner (benchmarks/tune_alem_params.py): tuning seeds only, a grid the
library skill declares, and the literals it would write back."""

from __future__ import annotations

import pytest

from benchmarks.tune_alem_params import parse_grid, parse_seeds
from compass.skills.library import SkillLibrary
from compass.skills.params import get_params, param_names, set_params


def test_tuner_refuses_seeds_outside_the_tuning_range():
    assert parse_seeds("0,1,999,100000") == [0, 1, 999, 100_000]
    assert parse_seeds("0-2") == [0, 1, 2]
    for bad in ("0,1000", "-1", "", "a", "200000", "3-x"):
        with pytest.raises(SystemExit):
            parse_seeds(bad)


def test_tuner_grid_is_checked_against_the_skills_parameters():
    skill = SkillLibrary(None, "alem").get("alem_role_policy")
    declared = param_names(skill)
    assert {"dusk", "dawn"} <= set(declared)
    assert parse_grid(["dusk=120,160"], declared) == {"dusk": [120, 160]}
    with pytest.raises(SystemExit, match="no parameter"):
        parse_grid(["sunrise=1"], declared)
    with pytest.raises(SystemExit, match="NAME=V1"):
        parse_grid(["dusk"], declared)
    # What --write would store: only the literal changes, and the night follows it.
    start = get_params(skill)["dusk"]
    tuned = set_params(skill, {"dusk": start + 17})
    assert get_params(tuned)["dusk"] == start + 17 and get_params(skill)["dusk"] == start
    assert f"dusk = {start + 17}" in tuned.code and tuned.code.count("\n") == skill.code.count("\n")


def _run_policy(skill, d):
    """One step of ``skill`` through the real sandbox on the hand-drawn view ``d``."""
    from compass.core.types import AgentView, OwnUnit
    from compass.sandbox import SkillExecutor, compile_skill

    compiled = compile_skill(skill.code, skill.name, "alem")
    own = OwnUnit(d.role, float(d.position[0]), float(d.position[1]), 9.0, 5.0, 1.0, 0, 48.0, 48.0)
    view = AgentView(0, "alem", d.step, True, own, (), tuple(range(56)), "", obs=d)
    result = SkillExecutor("compass.games.alem.skill_api", seed=0).run(compiled, view)
    assert result.error is None
    return result.action


def test_the_policys_survival_thresholds_are_tunable_and_change_what_it_does():
    """The thresholds the tuner walks are declared literals, and moving one moves the behaviour:
    a miner one food above its request threshold does not ask the forager; with the threshold
    raised by one (what --write would store) it asks."""
    from test_alem_api import _obs

    from compass.games.alem.obs import Teammate
    from compass.games.alem.skill_api import request

    skill = SkillLibrary(None, "alem").get("alem_role_policy")
    values = get_params(skill)
    assert {
        "threat_radius",
        "flee_health",
        "food_request",
        "drink_request",
        "share_keep",
        "descend_from",
        "first_visit",
    } <= set(values)
    food = values["food_request"] + 1
    forager = Teammate(1, "forager", 4, 1, 3, 0, 3, 9.0)
    inv = {k: 0 for k in ("wood", "stone", "pickaxe", "sword", "sapling", "coal", "iron", "diamond")}
    inv |= {"armour": 0, "arrows": 0, "torches": 0}
    d = _obs(
        ["......", ".@....", "......"],
        role="miner",
        step=40,
        status={"health": 9, "food": food, "drink": 9, "energy": 9},
        inventory=inv,
        teammates=[forager],
    )
    assert _run_policy(skill, d) != request("food")
    hungrier = set_params(skill, {"food_request": food})
    assert _run_policy(hungrier, d) == request("food")
