"""``whole`` synthesis (GameFamily.synthesis): the model's complete skill function becomes a candidate."""

from __future__ import annotations

import pytest

from compass.planner.synthesis import MergeError, whole_candidate

SKILL = '''import math

def chop_trees_at_dawn(obs: str) -> int:
    """Chop the nearest tree once the night is over."""
    d = parse_obs(obs)
    return noop()
'''


def test_keeps_the_models_name_and_docstring_and_drops_imports():
    c = whole_candidate(SKILL, "Collect wood in the morning")
    assert c.name == "chop_trees_at_dawn" and c.replaced == "skill"
    assert c.code.startswith("def chop_trees_at_dawn(obs: str) -> int:")
    assert '"""Chop the nearest tree once the night is over."""' in c.code
    assert "import math" not in c.code  # math and random are globals of every skill


def test_placeholder_name_becomes_the_subtask_slug_and_docstring_is_added():
    code = "def skill_name(obs):\n    return noop()\n"
    c = whole_candidate(code, "Collect wood in the morning")
    assert c.name == "collect_wood_morning"
    assert c.code.splitlines()[:2] == [
        "def collect_wood_morning(obs):",
        '    """Collect wood in the morning."""',
    ]


@pytest.mark.parametrize(
    ("code", "match"),
    [
        ("def score_target(unit):\n    return 1\n", "complete skill function"),
        ("def act(obs, extra):\n    return 1\n", "exactly one parameter"),
        ("x = 1\n", "defines no function"),
        ("def broken(obs:\n", "does not parse"),
    ],
)
def test_rejects_what_is_not_a_skill(code, match):
    with pytest.raises(MergeError, match=match):
        whole_candidate(code, "anything")
