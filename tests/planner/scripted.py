"""A scripted "VLM" for planner tests and benchmarks: it answers by module, from the prompt alone.

Stateless on purpose: the answer depends only on the prompt text, so concurrent agents get the
same answers whatever order their calls arrive in, and a re-run (or a replay) gives the same trace.

* perception: a short situation, region of interest = nearest enemy seen, if any;
* reflection: success iff the cumulative reward is positive;
* task reasoning: agent ``synth_agent`` asks for an exotic sub-task (no library skill fits) until its
  skill is a generated one; everyone else asks for focus fire;
* skill synthesis: a ``score_target(unit)`` that works now but raises two steps later
  (so the runner reports a skill error and the planner must repair it); when the prompt asks for a
  complete skill function (``whole`` synthesis, ALEM), a complete ALEM skill with the same fault;
* skill repair: the same code without the fault;
* actor: the first listed skill (or an unknown name when ``bad_actor``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SYNTH_SUBTASK = "Implement zigzag blink micro against zealots when two allies flank the same target"
FOCUS_SUBTASK = "Focus fire on the weakest enemy in range together with allies"

GOOD_SCORE = """def score_target(unit):
    # prefer weak, close targets that allies already shoot
    if unit.health <= 0:
        return -1.0
    return (2.0 - unit.health) * max(0.4, 1.3 - unit.distance) * 1.25 ** focus.get(unit.id, 0)
"""

FAULTY_SCORE = """def score_target(unit):
    # prefer weak, close targets that allies already shoot
    if obs_data.step >= {fail_at}:
        raise ValueError("zigzag table not initialised")
    if unit.health <= 0:
        return -1.0
    return (2.0 - unit.health) * max(0.4, 1.3 - unit.distance) * 1.25 ** focus.get(unit.id, 0)
"""


WHOLE_SKILL_NAME = "zigzag_gather_wood"

FAULTY_WHOLE = '''def zigzag_gather_wood(obs: str) -> int:
    """Gather wood in a zigzag: chop the nearest known tree, explore toward stone when none is known;
    from dusk to dawn shelter in stone by the base instead."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping:
        return noop()
    if d.step >= {fail_at}:
        raise ValueError("zigzag table not initialised")
    base = base_anchor(d)
    if shelter_time(d) or d.energy <= 2:
        step = bunker_step(d, base)
        if step is not None:
            return step
    tree = nearest(d, "tree")
    if tree is None:
        return explore(d, near="stone")
    return act_on(d, tree)
'''


def detect_module(prompt: str) -> str:
    """Which module wrote ``prompt`` (by the response format it asks for)."""
    for marker, module in (
        ("##Fixed_code##", "skill_repair"),
        ("##Skill_generation##", "skill_synthesis"),
        ("##Success##", "reflection"),
        ("##Task_guidance##", "task_reasoning"),
        ("##Game_situation##", "perception"),
        ("##Skills##", "actor"),
    ):
        if marker in prompt:
            return module
    return "unknown"


def _after(prompt: str, heading: str) -> str:
    """The line after ``heading`` (the prompts put each input under its own heading line)."""
    m = re.search(rf"^{re.escape(heading)}\n(.*)$", prompt, re.MULTILINE)
    return m.group(1).strip() if m else ""


@dataclass
class ScriptedVLM:
    """Call it with the prompt text; returns the reply text."""

    synth_agent: int | None = 0
    bad_actor: bool = False
    fail_after: int = 2
    verbose: bool = False  # answer at the length a real model does (benchmarks count completion tokens)
    always_fail: bool = False  # reflections judge every execution a failure (the token-economy worst case)

    def __call__(self, prompt: str) -> str:
        module = detect_module(prompt)
        return getattr(self, module)(prompt)

    def unit_id(self, prompt: str) -> int:
        m = re.search(r"(?:unit|agent) with ID (\d+)", prompt)
        return int(m.group(1)) if m else -1

    def perception(self, prompt: str) -> str:
        enemies = re.findall(
            r"^Enemy #(\d+): \w+, relative position \([^)]*\), distance ([\d.]+)", prompt, re.M
        )
        roi = f"Enemy #{min(enemies, key=lambda e: float(e[1]))[0]}" if enemies else "Location: Center"
        more = (
            (
                "\n3. My health and shield are still high, so I can afford to engage."
                "\n4. The enemies are grouped ahead of me; the closest one is within my sight range."
                "\n5. Two allies are close to me and one is further behind on the minimap."
                "\n6. I am slightly outside my optimal attack range and should step closer while allies "
                "focus the same target."
            )
            if self.verbose
            else ""
        )
        why = (
            "\n2. Engaging it together with allies concentrates damage and keeps the group together."
            if self.verbose
            else ""
        )
        return (
            f"##Game_situation##:\n1. I am unit {self.unit_id(prompt)}.\n2. {len(enemies)} enemies known."
            f"{more}\n##Region_of_interest##:\n{roi}\n##Reasoning_of_region_of_interest##:\n"
            f"1. Nearest threat.{why}"
        )

    def reflection(self, prompt: str) -> str:
        reward = float(_after(prompt, "Cumulative reward for the executing skill:") or 0)
        ok = reward > 0 and not self.always_fail
        if self.unit_id(prompt) == self.synth_agent and "zigzag" not in _after(
            prompt, "Last executed skill:"
        ):
            ok = False  # the synthesizing agent is never content with library skills: it asks for its own
        critique = "Keep going." if ok else "No damage dealt; engage."
        if self.verbose:
            critique += (
                " The skill kept the unit with its allies; next time prioritise the weakest enemy in "
                "range and avoid stepping out of the group."
            )
        return f"##Success##:\n{ok}\n##Critique##:\n1. {critique}"

    def task_reasoning(self, prompt: str) -> str:
        current = _after(prompt, "Current executing skill:")
        if self.unit_id(prompt) == self.synth_agent and "zigzag" not in current:
            return f"##Task_guidance##:\n{SYNTH_SUBTASK}\n##Skill_guidance##:\nFalse"
        fits = current not in ("", "None.")
        why = (
            "\n##Reasoning_of_task##:\nThe enemies are grouped and in range of several allies, so "
            "concentrating fire removes their damage fastest."
            if self.verbose
            else ""
        )
        return f"##Task_guidance##:\n{FOCUS_SUBTASK}\n##Skill_guidance##:\n{fits}{why}"

    def skill_synthesis(self, prompt: str) -> str:
        m = re.search(r"Description \(step (\d+)\)", prompt)
        step = int(m.group(1)) if m else 0
        whole = "def [skill_name](obs" in prompt  # the family wants complete skill functions
        code = (FAULTY_WHOLE if whole else FAULTY_SCORE).format(fail_at=step + self.fail_after)
        return f"##Skill_generation##:\n```python\n{code}```"

    def skill_repair(self, prompt: str) -> str:
        if WHOLE_SKILL_NAME in prompt:
            fixed = re.sub(r"    if d.step >= [^\n]+\n        raise ValueError\([^)]*\)\n", "", FAULTY_WHOLE)
            return f"Here is the fix.\n##Fixed_code##:\n```python\n{fixed}```"
        return f"Here is the fix.\n##Fixed_code##:\n```python\n{GOOD_SCORE}```"

    def actor(self, prompt: str) -> str:
        if self.bad_actor:
            return "##Skills##:\n```python\nteleport_behind_enemy(obs='current')\n```"
        names = re.findall(r"^def (\w+)\(obs: str\):  #", prompt, re.M)
        return f"##Skills##:\n```python\n{names[0] if names else 'attack_nearest'}(obs='current')\n```"

    def unknown(self, prompt: str) -> str:
        return "I do not understand."
