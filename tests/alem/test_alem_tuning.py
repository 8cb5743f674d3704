"""The ALEM parameter tuner (benchmarks/tune_alem_params.py): tuning seeds only, a grid the
library skill declares, and the literals it would write back."""

from __future__ import annotations

from pathlib import Path

import pytest
from alem_testlib import needs_alem

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
    from alem_testlib import run_skill, view_of

    from compass.sandbox import compile_skill

    result = run_skill(compile_skill(skill.code, skill.name, "alem"), view_of(d))
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


# The joint search (--search random): candidates drawn in a declared neighbourhood, successive
# halving, a paired line per candidate against the shipped values, the values it played.

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def tuner(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the search imports its siblings alem_dev, alem_variants
    import tune_alem_params

    return tune_alem_params


def test_the_search_draws_moves_inside_the_neighbourhood_and_repeats_given_its_seed(tuner):
    skill = SkillLibrary(None, "alem").get("alem_role_policy")
    shipped = get_params(skill)
    assert set(tuner.SEARCH_STEPS) == set(param_names(skill))  # every declared parameter is searchable
    assert tuner.neighbourhood("dusk", 120, scale=2) == [100, 110, 130, 140]
    assert tuner.neighbourhood("refuel_at", 1) == [0, 2]
    assert tuner.neighbourhood("cornered_health", 0) == [1]  # never below 0
    assert tuner.neighbourhood("dawn", 295) == [285]  # inside the day
    drawn = tuner.draw_candidates(shipped, 5, 3, 1, rng_seed=7)
    assert drawn == tuner.draw_candidates(shipped, 5, 3, 1, rng_seed=7)
    assert drawn != tuner.draw_candidates(shipped, 5, 3, 1, rng_seed=8)
    assert len({tuple(sorted(c.items())) for c in drawn}) == 5
    for c in drawn:
        moved = {k for k in c if c[k] != shipped[k]}
        assert len(moved) == 3 and set(c) == set(shipped)
        assert all(c[k] in tuner.neighbourhood(k, shipped[k]) for k in moved)
    only = tuner.draw_candidates(shipped, 3, 1, 1, rng_seed=0, names=["dusk"])
    assert sorted(c["dusk"] for c in only) == [110, 130]  # only two such candidates exist
    with pytest.raises(SystemExit, match="--moves"):
        tuner.draw_candidates(shipped, 1, 30, 1, rng_seed=0)
    assert tuner.parse_rounds("12,24", 24) == [12, 24]
    with pytest.raises(SystemExit, match="--write"):  # the search's best is judged on K and L first
        tuner.main(["--search", "random", "--write", "--seeds", "500,501", "--rounds", "2"])
    for bad in ("24,12", "1", "12,30", "x"):
        with pytest.raises(SystemExit):
            tuner.parse_rounds(bad, 24)


def test_the_search_halves_and_plays_each_candidates_values(tuner):
    """A fake player scores a job by the values of the skill it was handed: the report's rows are
    what each candidate's own values played, the best third goes on to the next round's seeds, and
    every entry carries its paired line against the shipped values on the seeds it played."""
    skill = SkillLibrary(None, "alem").get("alem_role_policy")
    shipped = get_params(skill)
    cands = [shipped | {"dusk": shipped["dusk"] + 10 * k} for k in (-1, 1, 2)]
    played: list[tuple[dict, int]] = []

    def player(jobs):
        out = []
        for s, seed in jobs:
            values = get_params(s)
            played.append((values, seed))
            # A later dusk scores more; a little per-seed noise on candidates keeps the paired sd above 0.
            noise = 0.0 if values == shipped else 0.05 * (seed % 3)
            out.append(
                {"seed": seed, "team_total_pct": 10.0 + (values["dusk"] - shipped["dusk"]) / 10 + noise}
            )
        return out

    reports: list[dict] = []
    r = tuner.random_search(
        skill, [500, 501, 502, 503], [2, 4], cands, player, eta=3, on_round=reports.append
    )
    # After round 0 the report so far (what the script writes out): every candidate on 2 seeds.
    assert len(reports) == 2 and reports[1] == r and len(reports[0]["rounds"]) == 1
    assert [len(e["rows"]) for e in reports[0]["candidates"]] == [2, 2, 2]
    assert r["shipped"] == shipped and [row["team_total_pct"] for row in r["shipped_rows"]] == [10.0] * 4
    assert [x["seeds"] for x in r["rounds"]] == [[500, 501], [502, 503]]
    assert r["rounds"][0]["candidates"] == ["c0", "c1", "c2"] and r["rounds"][1]["candidates"] == ["c2"]
    assert r["ranking"] == ["c2"]
    by = {e["label"]: e for e in r["candidates"]}
    for e, values in zip(r["candidates"], cands, strict=True):
        assert e["values"] == values == e["played"]
        assert e["moved"] == {"dusk": [shipped["dusk"], values["dusk"]]}
        assert e["paired"].startswith("paired: ")
        assert [row["seed"] for row in e["rows"]] == [500, 501, 502, 503][: len(e["rows"])]
    assert len(by["c2"]["rows"]) == 4 and len(by["c0"]["rows"]) == 2 and by["c2"]["round"] == 1
    assert by["c2"]["diff"] == pytest.approx(2.0, abs=0.2) and by["c0"]["diff"] < 0
    # Every job was one seed of the round with the shipped or a surviving candidate's values.
    assert sorted(seed for v, seed in played if v == cands[2]) == [500, 501, 502, 503]
    assert sorted(seed for v, seed in played if v == cands[0]) == [500, 501]
    assert sorted(seed for v, seed in played if v == shipped) == [500, 501, 502, 503]


@needs_alem
def test_the_search_command_reports_and_emits_what_it_played(tuner, tmp_path):
    """The command end to end in the real env (2 candidates, 2 seeds, 10 steps): the report names
    the seeds, each candidate's values, rows and paired line; the emitted file holds its values."""
    import json

    out = tmp_path / "joint.json"
    argv = ["--search", "random", "--candidates", "2", "--moves", "2", "--rounds", "2", "--seeds", "500,501"]
    assert (
        tuner.main([*argv, "--steps", "10", "--rng-seed", "3", "--out", str(out), "--emit", str(tmp_path)])
        == 0
    )
    r = json.loads(out.read_text())
    assert r["seeds"] == [500, 501] and r["steps"] == 10 and r["rng_seed"] == 3 and r["search"] == "random"
    assert [row["seed"] for row in r["shipped_rows"]] == [500, 501]
    assert len(r["candidates"]) == 2 and r["ranking"][0] in {"c0", "c1"}
    skill = SkillLibrary(None, "alem").get("alem_role_policy")
    for e in r["candidates"]:
        assert e["played"] == e["values"] and len(e["moved"]) == 2
        assert [row["seed"] for row in e["rows"]] == [500, 501] and e["paired"].startswith("paired: ")
    from compass.skills.skill import parse_skill_source

    best = next(e for e in r["candidates"] if e["label"] == r["ranking"][0])
    path = tmp_path / best["label"] / "alem_role_policy.py"
    emitted = parse_skill_source(path.read_text(), "alem", path)
    assert get_params(emitted) == best["values"] != get_params(skill)
