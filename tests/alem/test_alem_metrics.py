"""Base%/Coord.%/Total% against a hand-computed episode."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from compass.games.alem.metrics import (
    EpisodeTracker,
    bootstrap_ci,
    normaliser_values,
    score_episode,
    summarise,
)
from compass.games.alem.names import ACHIEVEMENTS


def _matrix(rows: list[list[str]]) -> np.ndarray:
    m = np.zeros((len(rows), 93), dtype=bool)
    for i, names in enumerate(rows):
        for name in names:
            m[i, ACHIEVEMENTS.index(name)] = True
    return m


def test_hand_computed_episode():
    # agent 0: wood (1) + table (1) + coord 2 soft (3)          -> base 2, coord 3
    # agent 1: enter mines (3) + sapphire (3) + coord 3 hard (8) -> base 6, coord 8
    # agent 2: nothing                                           -> base 0, coord 0
    ach = _matrix(
        [
            ["COLLECT_WOOD", "PLACE_TABLE", "COORD_2_AGENTS_SOFT"],
            ["ENTER_GNOMISH_MINES", "COLLECT_SAPPHIRE", "COORD_3_AGENTS_HARD"],
            [],
        ]
    )
    s = score_episode(ach, steps_survived=[100, 250, 40], steps=250, outcome="loss")
    assert s.agents[0].base_reward == 2 and s.agents[0].coord_reward == 3
    assert s.agents[1].base_reward == 6 and s.agents[1].coord_reward == 8
    assert s.base_pct == pytest.approx(100 * (2 / 217 + 6 / 217 + 0) / 3)
    assert s.coord_pct == pytest.approx(100 * (3 / 159 + 8 / 159 + 0) / 3)
    assert s.total_pct == pytest.approx(100 * (5 / 376 + 14 / 376 + 0) / 3)
    # Total% is the weighted mix of the two categories, as in the paper's Table 1.
    assert s.total_pct == pytest.approx((217 * s.base_pct + 159 * s.coord_pct) / 376)
    assert [a.steps_survived for a in s.agents] == [100, 250, 40]
    assert "COORD_3_AGENTS_HARD" in s.team_achievements and len(s.team_achievements) == 6


def test_overworld_masks_unreachable_and_rescales():
    ach = _matrix([["COLLECT_WOOD", "DEFEAT_NECROMANCER"], ["DEFEAT_NECROMANCER"], []])
    paper = score_episode(ach, [10, 10, 10], 10, overworld=True)
    assert paper.agents[0].base_reward == 1 and paper.agents[1].base_reward == 0
    assert normaliser_values("overworld") == (38.0, 159.0, 197.0)
    ow = score_episode(ach, [10, 10, 10], 10, overworld=True, normalisers="overworld")
    assert ow.agents[0].base_pct == pytest.approx(100 / 38)


def test_bootstrap_and_summary():
    # Four values: the exact bootstrap distribution of the mean (all 4**4 resamples) has its 2.5 %
    # and 97.5 % quantiles at 1.5 and 3.5; the sampled interval must land on them.
    means = sorted(sum(c) / 4 for c in itertools.product([1.0, 2.0, 3.0, 4.0], repeat=4))
    exact = (means[int(0.025 * 256)], means[int(0.975 * 256)])
    assert exact == (1.5, 3.5)
    assert bootstrap_ci([1.0, 2.0, 3.0, 4.0], n=2000, seed=1) == pytest.approx(exact, abs=0.25)
    # A hundred values: the interval is the normal one, mean +- 1.96 sd / sqrt(n), to 0.02.
    many = [1.0, 2.0, 3.0, 4.0] * 25
    half = 1.96 * float(np.std(many)) / 10
    assert bootstrap_ci(many, n=4000, seed=1) == pytest.approx((2.5 - half, 2.5 + half), abs=0.02)
    assert bootstrap_ci([5.0, 5.0]) == (5.0, 5.0)
    eps = [
        score_episode(_matrix([["COLLECT_WOOD"], [], []]), [5, 5, 5], 5),
        score_episode(_matrix([["COLLECT_WOOD"], ["COLLECT_WOOD"], []]), [9, 9, 1], 9),
    ]
    out = summarise(eps, n=500)
    assert out["episodes"] == 2
    assert out["base_pct"]["mean"] == pytest.approx(100 * (1 / 3 + 2 / 3) / 2 / 217)
    assert out["achievement_rates"]["COLLECT_WOOD"] == pytest.approx(3 / 6)


def test_tracker_records_deaths():
    t = EpisodeTracker()
    alive = [True, True, True]
    for step in range(1, 6):
        if step == 3:
            alive = [True, False, True]
        t.update({"timestep": step, "alive": alive, "achievements": np.zeros((3, 93), bool)})
    s = t.score()
    assert [a.steps_survived for a in s.agents] == [5, 3, 5]


def test_team_scoring_counts_an_achievement_once_if_any_agent_unlocked_it():
    """alem's compute_score Team/*_reward_pct_of_max (the leaderboard's numbers), beside the agent mean."""
    ach = _matrix(
        [
            ["COLLECT_WOOD", "PLACE_TABLE", "COORD_2_AGENTS_SOFT"],  # base 2, coord 3
            ["COLLECT_WOOD", "ENTER_GNOMISH_MINES", "COORD_2_AGENTS_SOFT"],  # wood again: counted once
            [],
        ]
    )
    s = score_episode(ach, [10, 10, 10], 10)
    # union: wood 1 + table 1 + mines 3 = 5 base; coord soft 3 once
    assert s.team_base_pct == pytest.approx(100 * 5 / 217)
    assert s.team_coord_pct == pytest.approx(100 * 3 / 159)
    assert s.team_total_pct == pytest.approx(100 * 8 / 376)
    assert s.total_pct == pytest.approx(100 * (5 / 376 + 7 / 376 + 0) / 3)  # the agent mean is lower
    assert s.total_pct < s.team_total_pct
    # identical agents: the two scorings agree
    same = score_episode(_matrix([["COLLECT_WOOD"]] * 3), [1, 1, 1], 1)
    assert same.team_total_pct == pytest.approx(same.total_pct)
    d = s.as_dict()
    assert d["team_total_pct"] == s.team_total_pct and d["total_pct"] == s.total_pct
    out = summarise([s, same])
    assert out["team_total_pct"]["mean"] == pytest.approx((s.team_total_pct + same.team_total_pct) / 2)
    assert out["steps_survived_median_per_agent"] == 5.5  # pooled agents: 10, 10, 10, 1, 1, 1


def test_team_scoring_of_the_overworld_uses_its_own_maxima_as_compute_score_does():
    ach = _matrix([["COLLECT_WOOD", "DEFEAT_NECROMANCER"], [], []])
    s = score_episode(ach, [1, 1, 1], 1, overworld=True)
    b_max, _, t_max = normaliser_values("overworld")
    assert s.team_base_pct == pytest.approx(100 / b_max) and s.team_total_pct == pytest.approx(100 / t_max)
