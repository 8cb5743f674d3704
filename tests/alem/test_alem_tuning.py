"""The ALEM parameter tuner (benchmarks/tune_alem_params.py): tuning seeds only, a grid the
library skill declares, and the literals it would write back."""

from __future__ import annotations

import pytest

from benchmarks.tune_alem_params import parse_grid, parse_seeds
from compass.skills.library import SkillLibrary
from compass.skills.params import get_params, param_names, set_params


def test_tuner_refuses_seeds_outside_the_tuning_range():
    assert parse_seeds("0,1,999") == [0, 1, 999]
    for bad in ("0,1000", "-1", "", "a"):
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
