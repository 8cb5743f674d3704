"""A library-only team plays the overworld: short run in the default suite, a long one marked slow."""

from __future__ import annotations

import pytest
from alem_testlib import load_skill, needs_alem

from compass.games.alem.metrics import EpisodeTracker
from compass.sandbox import SkillExecutor

pytestmark = needs_alem


def _play(env, seed: int, steps: int):
    policy = load_skill("alem_role_policy")
    ex = SkillExecutor("compass.games.alem.skill_api", seed=seed)
    tracker = EpisodeTracker(overworld=True)
    views = env.reset(seed)
    errors = 0
    for _ in range(steps):
        results = [ex.run(policy, v) for v in views]
        errors += sum(r.error is not None for r in results)
        res = env.step([r.action for r in results])
        tracker.update(res.info, res.outcome)
        views = res.views
        if res.done:
            break
    return tracker.score(), errors


def test_short_library_episode(alem_overworld):
    env = alem_overworld(250)
    score, errors = _play(env, seed=0, steps=250)
    assert errors == 0
    assert score.steps == 250
    assert score.base_pct > 1.0  # wood, table, drink... within 250 steps
    assert all("COLLECT_WOOD" in a.achievements for a in score.agents)


@pytest.mark.slow
def test_long_library_episode(alem_overworld):
    env = alem_overworld(3000)
    score, errors = _play(env, seed=1, steps=3000)
    assert errors == 0
    assert score.base_pct > 3.0 and score.coord_pct > 0.0
    assert score.steps >= 300 and sum(len(a.achievements) for a in score.agents) >= 20


def test_library_team_outlives_the_first_night_and_coordinates(alem_overworld):
    """Nights (zombies) start ~step 140 and end ~265: on most of four seeds the team is still there
    at 320, and it has unlocked a coordination achievement; every death the tracker saw carries a
    named cause. Four seeds, not one: any change to the library reshuffles single trajectories (on
    overworld seeds 0-23 the team was alive at 320 in 24 with the library before the opening and in
    23 with it, seed 0 the exception; docs/alem.md "The opening")."""
    env = alem_overworld(320)
    outlived = coordinated = 0
    for seed in range(4):
        score, errors = _play(env, seed=seed, steps=320)
        assert errors == 0
        outlived += score.steps == 320 and any(a.steps_survived == 320 for a in score.agents)
        coordinated += any(name.startswith(("COORD_", "HANDOVER")) for name in score.team_achievements)
        assert all(a.death_cause not in (None, "unknown") for a in score.agents if a.steps_survived < 320)
    assert outlived >= 3 and coordinated >= 3, (outlived, coordinated)
