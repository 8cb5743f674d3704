"""``compass run --env alem:easy|medium|hard`` through the CLI: the full 9-level game at each
coordination difficulty (the published ALEM numbers use these, not the overworld variant)."""

from __future__ import annotations

import json

import pytest
from alem_testlib import HAVE_ALEM
from typer.testing import CliRunner

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAVE_ALEM, reason="alem-env is not installed")]


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_cli_runs_each_difficulty_with_its_coordination_params(tmp_path, difficulty):
    from alem.alem_coop.alem_state import get_coordination_params

    from compass.cli import app
    from compass.games.alem import env as alem_env

    result = CliRunner().invoke(
        app,
        [
            "run",
            *("--env", f"alem:{difficulty}", "--max-steps", "4", "--out", str(tmp_path)),
            *("--run-id", "r", "--skill", "alem_role_policy"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    (episode,) = summary["episodes"]
    assert episode["steps"] == 4 and episode["skill_errors"] == 0
    assert 0.0 <= summary["alem"]["total_pct"]["mean"] <= 100.0
    compiled = alem_env._COMPILED[(difficulty, "rl")]  # compass run plays alem's RL preset
    assert compiled.static_params.num_levels == 9  # the full game, not the overworld-only Debug env
    for key, value in get_coordination_params(difficulty).items():
        assert getattr(compiled.env_params, key) == value, key


def test_harness_preset_is_the_llm_harness_config():
    """The ``harness`` preset is what alem's LLM harness builds: the difficulty preset, then
    non-specialist efficiency 0.2 (the leaderboard's LLM rows); ``rl`` keeps 1 - alpha."""
    from alem.alem_coop.alem_state import get_coordination_params

    from compass.games.alem.env import make_alem

    env = make_alem("hard", max_steps=5, text=False, preset="harness")
    params = env._c.env_params
    assert params.non_specialist_efficiency == pytest.approx(0.2)
    assert params.soft_solo_fail_prob == pytest.approx(get_coordination_params("hard")["soft_solo_fail_prob"])
    assert not params.shared_reward and params.soft_specialization
    assert env.preset == "harness" and len(env.reset(0)) == 3
    with pytest.raises(ValueError, match="unknown ALEM preset"):
        make_alem("hard", preset="llm")
