"""A scripted VLM that serves a pool of ALEM candidate skills, one per synthesis call, in order.

The candidates are written by people (this file), not by a model: the keep gate's tests and
``benchmarks/bench_alem_evolve.py`` use them to show what the gate does with each kind.

* ``BROKEN``: runs on the first observation it is tried on (step 0) and raises from step 40 on,
  so the check on recorded observations refuses it;
* ``WORSE``: idles (no achievement can come of it): worse than any skill that plays;
* ``BETTER``: the seed library's generalist ``alem_role_policy`` (read from the shipped seed
  library, so it follows that file), renamed, with thirst and hunger handled one point earlier;
  it plays far better than the skill the seed library retrieves for ALEM's default task.

Everything else is answered as :class:`~tests.planner.scripted.ScriptedVLM` answers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from compass.core.family import get_family
from compass.skills.skill import parse_skill_source, rename_function
from tests.planner.scripted import ScriptedVLM

BROKEN = '''def rush_diamonds(obs: str) -> int:
    """Rush to diamonds: dig straight down toward the nearest stone and mine everything on the way."""
    d = parse_obs(obs)
    if not d.alive or d.sleeping:
        return noop()
    order = [0, 1, 2]
    if d.step >= 40:
        return order[d.step]  # off the end of the list: IndexError on any later observation
    stone = nearest(d, "stone")
    if stone is None:
        return explore(d)
    return act_on(d, stone)
'''

WORSE = '''def hold_position(obs: str) -> int:
    """Hold position and wait for teammates to come: stand still and do nothing."""
    d = parse_obs(obs)
    return noop()
'''


def better_source() -> str:
    """``survive_then_build``: the seed generalist, renamed, thirst and hunger handled a point earlier."""
    path = get_family("alem").seed_skills_dir / "alem_role_policy.py"
    seed = parse_skill_source(path.read_text(encoding="utf-8"), "alem", path)
    code = rename_function(seed.code, "alem_role_policy", "survive_then_build")
    code = code.replace("if d.food <= 6:\n", "if d.food <= 7:\n", 1)
    code = code.replace("if d.drink <= 3:\n", "if d.drink <= 4:\n", 1)
    return code


@dataclass
class CandidatePool(ScriptedVLM):
    """Serves ``pool`` (code texts) to successive synthesis calls; ``served`` lists what went out."""

    pool: list[str] = field(default_factory=list)
    served: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def skill_synthesis(self, prompt: str) -> str:
        with self._lock:
            k = len(self.served)
            code = self.pool[k % len(self.pool)] if self.pool else WORSE
            self.served.append(code.split("(", 1)[0].removeprefix("def "))
        return f"##Skill_generation##:\n```python\n{code}```"
