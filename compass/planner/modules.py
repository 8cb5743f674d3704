"""The planner's VLM modules: fill a template, call the model, parse, record.

Each module is one :meth:`ModuleCaller.run` with its template, the decision's shared inputs plus
its own, optional images and a parser. Whatever happens (network failure, garbage, a missing
section) the caller returns the parser's typed result or a :class:`NoAnswer`; it never raises for
model behaviour. Every call appends one record to the decision's records.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compass.planner.observation import ObservationBlock
from compass.planner.parsing import NoAnswer, as_fields, first_line
from compass.planner.prompts import PLACEHOLDERS, Template
from compass.planner.usage import PlannerUsage
from compass.skills.skill import Skill
from compass.vlm import VLMClient, VLMError, VLMRequest, prompt_key

log = logging.getLogger(__name__)

#: Completion budgets per module: long enough for the requested format, short enough to bound cost.
MAX_TOKENS = {
    "perception": 400,
    "reflection": 200,
    "task_reasoning": 300,
    "skill_synthesis": 1200,
    "actor": 80,
    "skill_repair": 1500,
}

NONE = "None."


@dataclass
class Recorder:
    """The records of one decision (they become ``Decision.records``)."""

    records: list[dict[str, Any]]

    def add(self, module: str, **fields: Any) -> None:
        self.records.append({"module": module, **fields})


class ModuleCaller:
    """Runs one module call for one agent's decision."""

    def __init__(
        self,
        client: VLMClient,
        templates: dict[str, Template],
        usage: PlannerUsage,
        max_tokens: dict[str, int] | None = None,
    ) -> None:
        self.client = client
        self.templates = templates
        self.usage = usage
        self.max_tokens = {**MAX_TOKENS, **(max_tokens or {})}

    def has(self, module: str) -> bool:
        return module in self.templates

    def prompt(self, module: str, values: dict[str, str]) -> str:
        """The filled prompt (all placeholders must have values: a missing one is a bug here)."""
        return self.templates[module].fill(values)

    async def run(
        self,
        module: str,
        values: dict[str, str],
        parse: Callable[[str], Any],
        rec: Recorder,
        episode: int,
        images: tuple[bytes, ...] = (),
    ) -> Any:
        """Call ``module`` and parse its reply; a :class:`NoAnswer` on any failure."""
        if module not in self.templates:
            result = NoAnswer(f"{module}: no template for this family")
            rec.add(module, kind="skipped", reason=result.reason)
            return result
        req = VLMRequest(
            prompt=self.prompt(module, values), images=images, tag=module, max_tokens=self.max_tokens[module]
        )
        key = prompt_key(req)
        try:
            completion = await self.client.complete(req)
        except VLMError as exc:
            self.usage.failed_call(episode, module)
            rec.add(module, kind="vlm_error", key_prompt=key, n_images=len(images), error=str(exc))
            return NoAnswer(f"{module}: VLM call failed: {first_line(str(exc), 200)}")
        except Exception as exc:  # a local backend's own failure (e.g. a model that cannot run this prompt)
            log.warning("%s call failed: %s: %s", module, type(exc).__name__, exc)
            self.usage.failed_call(episode, module)
            rec.add(
                module,
                kind="vlm_error",
                key_prompt=key,
                n_images=len(images),
                error=f"{type(exc).__name__}: {exc}",
            )
            return NoAnswer(f"{module}: {type(exc).__name__}: {first_line(str(exc), 200)}")
        self.usage.call(episode, module, completion)
        result = await parse_reply(module, parse, completion.text)
        if isinstance(result, NoAnswer):
            self.usage.event(episode, "no_answer")
        rec.add(
            module,
            kind="vlm",
            tag=module,
            key_prompt=key,
            response=completion.text,
            parsed=as_fields(result),
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cached=completion.cached,
            n_images=len(images),
        )
        return result


#: Replies at least this long are parsed in a worker thread, so other agents' calls go on meanwhile.
PARSE_OFF_LOOP_CHARS = 16_384


async def parse_reply(module: str, parse: Callable[[str], Any], text: str) -> Any:
    """``parse(text)``, off the event loop for long replies; a parser that raises gives a NoAnswer."""
    try:
        if len(text) >= PARSE_OFF_LOOP_CHARS:
            return await asyncio.to_thread(parse, text)
        return parse(text)
    except Exception as exc:  # parsers are meant never to raise; if one does, this reply is unusable
        log.warning("%s reply could not be parsed: %s: %s", module, type(exc).__name__, exc)
        return NoAnswer(f"{module}: parser failed: {type(exc).__name__}: {first_line(str(exc), 200)}")


# --- input assembly ---------------------------------------------------------------------------


def first_paragraph(doc: str, limit: int = 240) -> str:
    """A docstring's first paragraph on one line (what skill listings show)."""
    return first_line((doc or "").strip().split("\n\n")[0], limit)


def skill_listing(skills: list[Skill]) -> str:
    """Skills "in Python format" by signature and one-line docstring (not their code: tokens)."""
    if not skills:
        return NONE
    return "\n".join(f"def {s.name}(obs: str):  # {first_paragraph(s.description)}" for s in skills)


def skill_stub(skill: Skill | None) -> str:
    """The current skill as signature + docstring summary (full code only where it is edited)."""
    if skill is None:
        return NONE
    return f'def {skill.name}(obs: str):\n    """{first_paragraph(skill.description, 400)}"""\n    ...'


def ally_tasks_text(tasks: dict[int, str]) -> str:
    if not tasks:
        return "No ally task is known."
    return "\n".join(f"Ally #{i}: {first_line(t, 200)}" for i, t in sorted(tasks.items()))


def common_values(
    *,
    unit_type: str,
    unit_id: int,
    scenario: str,
    task: str,
    overall_task: str,
    obs: ObservationBlock,
    ally_tasks: dict[int, str],
    reward: float,
    history: str,
    last_reasoning: str,
    situation: str,
    reflection: str,
    current: Skill | None,
) -> dict[str, str]:
    """Placeholder values every module of one decision shares; modules override a few."""
    values = {name: NONE for name in PLACEHOLDERS}
    values.update(
        {
            "unit_type": unit_type,
            "unit_id": str(unit_id),
            "scenario_name": scenario,
            "few_shots": "",
            "last_episode_reasoning": last_reasoning or NONE,
            "info_summary": history,
            "image_introduction": obs.introduction(),
            "ego_minimap": obs.minimap,
            "task_description": task,
            "overall_task": overall_task,
            "web_search": NONE,
            "event_count": str(len(obs.images) or 1),
            "cumulative_reward": f"{reward:.3f}",
            "ally_task": ally_tasks_text(ally_tasks),
            "game_situation": situation or NONE,
            "previous_action": f"{current.name}(obs='current')" if current else NONE,
            "action_code": skill_stub(current),
            "previous_reasoning": last_reasoning or NONE,
            "previous_self_reflection_reasoning": reflection or NONE,
            "error_report": NONE,
        }
    )
    return values
