"""Shared hypothesis settings and reply strategies for the fuzz tests.

Replies are built from fragments that broke the parsers or the synthesis path before (a line of
hundreds of spaces, 100,000 newlines, runs of backticks, lone surrogates, null bytes, deeply nested
or very long expressions, unterminated strings) mixed with section headers, code and random text.
"""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Bounded example counts, a fixed seed (a CI failure reproduces) and a generous per-example time
# limit: it catches hangs and catastrophic backtracking (seconds to hours), not a busy machine.
FUZZ = settings(
    max_examples=120,
    deadline=timedelta(seconds=5),
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)

HEADERS = [
    "##Game_situation##:",
    "**Region of interest:**",
    "### Reasoning_of_region_of_interest",
    "##Success##:",
    "**Critique**",
    "##Task_guidance##:",
    "## Skill guidance ##:",
    "##Reasoning_of_task##",
    "##Skill_generation##:",
    "##Fixed_code##:",
    "##Skills##:",
    "1. **Game situation**:",
    "> ##success##",
]

POISON = [
    " " * 400,
    "##" + " " * 300,
    "**" + " \t" * 200 + "x",
    "\n" * 3000,
    "`" * 2000,
    "```\n" * 300,
    "~~~python",
    "```python",
    "```",
    "\ud800",
    "\udfff\ud800",
    "\x00",
    "(" * 300 + ")" * 300,
    "[" * 120,
    "1+" * 3000 + "1",
    "not " * 2000 + "x",
    "'''",
    '"""',
    "'unterminated",
    "\r\n",
    "\u2028",
    "a/" * 500,
    "def" + " " * 500 + "x" * 500,
    "null",
    "True",
    "False",
    "None.",
    "focus_fire(obs='current')",
    "teleport(obs='current')",
    "#" * 50,
    "_" * 50,
    ":" * 50,
]

CODE = [
    "def score_target(unit):",
    "def control_logic():",
    "def skill(obs):",
    "def score_target(unit, extra):",
    "    return 1",
    "    return unit.health",
    "    return -unit.distance",
    "    return " + "+".join(["1"] * 2500),
    "    return " + "(" * 150 + "1" + ")" * 150,
    "    return " + "-" * 5000 + "1",
    "    x = '\ud800'",
    "    while True: pass",
    "    raise SystemExit(3)",
    "    return obs_data.enemies[0].id",
    "    import os",
    "    return __import__('os')",
    "import math",
    "x = 1",
    "@decorator",
    "    def inner():",
    "        return 2",
    "\tmixed = 1",
    "  return 0",
]

fragments = st.one_of(
    st.sampled_from(HEADERS), st.sampled_from(POISON), st.sampled_from(CODE), st.text(max_size=30)
)
#: Any reply: fragments joined by newlines or glued together.
replies = st.builds(
    lambda parts, sep: sep.join(parts), st.lists(fragments, max_size=25), st.sampled_from(["\n", "", " "])
)
#: Code a model might send for synthesis or repair: lines of skill-like code and poison.
code_lines = st.lists(
    st.one_of(st.sampled_from(CODE), st.sampled_from(CODE), st.sampled_from(POISON), st.text(max_size=20)),
    min_size=1,
    max_size=12,
).map("\n".join)
