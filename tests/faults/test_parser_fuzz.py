"""Every reply parser takes any text without raising or hanging, and still finds what is there.

Property-based (hypothesis) over replies built from fragments that used to break the parsers,
plus fixed adversarial replies of the sizes that hung them (a 250-space line backtracked for
seconds, 200,000 newlines hung synthesis parsing, runs of backticks were quadratic).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.bench_faults import SHAPES
from compass.planner.parsing import (
    MAX_REPLY_CHARS,
    SECTIONS,
    ActorChoice,
    NoAnswer,
    Perception,
    Reflection,
    SkillCode,
    TaskPlan,
    code_block,
    is_null,
    parse_actor,
    parse_bool,
    parse_perception,
    parse_reflection,
    parse_repair,
    parse_sections,
    parse_synthesis,
    parse_task,
)
from tests.faults.fuzz import FUZZ, POISON, replies

PARSERS = {
    "perception": (parse_perception, Perception),
    "reflection": (parse_reflection, Reflection),
    "task_reasoning": (parse_task, TaskPlan),
    "skill_synthesis": (parse_synthesis, SkillCode),
    "skill_repair": (parse_repair, SkillCode),
}


@FUZZ
@given(reply=replies)
def test_module_parsers_return_a_result_or_a_reason(reply):
    for parse, kind in PARSERS.values():
        result = parse(reply)
        assert isinstance(result, kind | NoAnswer)
        if isinstance(result, NoAnswer):
            assert result.reason
    choice = parse_actor(reply, ["focus_fire", "regroup"])
    assert isinstance(choice, ActorChoice | NoAnswer)


@FUZZ
@given(reply=replies)
def test_small_parsers_take_anything(reply):
    for module, names in SECTIONS.items():
        sections = parse_sections(reply, names)
        assert set(sections) <= set(names), module
        assert all(isinstance(v, str) for v in sections.values())
    assert isinstance(code_block(reply), str)
    assert isinstance(is_null(reply), bool)
    assert parse_bool(reply) in (True, False, None)


words = st.text(alphabet="abcdefghij klmnop", min_size=3, max_size=40).filter(lambda s: s.strip())


@FUZZ
@given(noise=replies, situation=words, roi=words)
def test_sections_are_found_after_any_preamble(noise, situation, roi):
    # Whatever came before (prose, poison), well-marked sections are still read back.
    # The preamble must not hold these sections itself, nor open a code fence.
    noise = noise.replace("`", "'").replace("~", "-").replace("\r", " ")
    noise = re.sub("(?i)situation|region|interest", "topic", noise)
    reply = f"{noise}\n##Game_situation##:\n{situation}\n##Region_of_interest##:\n{roi}\n"
    if len(reply) > MAX_REPLY_CHARS:
        return
    result = parse_perception(reply)
    assert isinstance(result, Perception), result
    assert result.situation.strip() == situation.strip() or situation.strip() in result.situation
    assert result.region_of_interest.strip() == " ".join(roi.split())[:120].strip()


@FUZZ
@given(code=st.text(alphabet="abcdefxyz_ ()=+1\n", max_size=200), lang=st.sampled_from(["python", "py", ""]))
def test_fenced_code_is_recovered(code, lang):
    reply = f"Here is the skill.\n```{lang}\ndef score_target(unit):\n{code}\n```\ntrailing words"
    body = code_block(reply)
    assert body.startswith("def score_target(unit):")
    assert code.strip("\n") in body


def _adversarial(size: int) -> dict[str, str]:
    """Replies of about ``size`` characters in each shape that used to be super-linear."""
    # The shapes the benchmark times (benchmarks/bench_faults.py), plus two it does not.
    unit = {**SHAPES, "identifier": "a" * 1000 + " ", "paths": "a/" * 100}
    return {name: (u * (size // len(u) + 1))[:size] for name, u in unit.items()}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(_adversarial(10)))
def test_adversarial_replies_parse(name):
    # Under the cap: parsed (each shape took seconds to hours before); over it: refused with a reason.
    reply = _adversarial(MAX_REPLY_CHARS - 1)[name]
    for parse, kind in PARSERS.values():
        assert isinstance(parse(reply), kind | NoAnswer)
    assert isinstance(parse_actor(reply, ["focus_fire"]), ActorChoice | NoAnswer)
    big = reply + "x" * 10
    for module, (parse, _) in PARSERS.items():
        refused = parse(big)
        assert isinstance(refused, NoAnswer) and "refused" in refused.reason, module
    assert "refused" in parse_actor(big, ["focus_fire"]).reason


@pytest.mark.timeout(120)
def test_poison_fragments_one_by_one():
    for fragment in POISON:
        for parse, kind in PARSERS.values():
            assert isinstance(parse(fragment), kind | NoAnswer), repr(fragment[:20])
