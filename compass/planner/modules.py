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

from compass.planner.answers import answer_format
from compass.planner.observation import ObservationBlock
from compass.planner.parsing import NoAnswer, as_fields, first_line
from compass.planner.prompts import PLACEHOLDERS, Template
from compass.planner.usage import PlannerUsage
from compass.skills.skill import Skill
from compass.vlm import VLMClient, VLMError, VLMFatalError, VLMRequest, prompt_key
from compass.vlm.prompt_log import PromptLog

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
    """The records of one decision (they become ``Decision.records``); ``who`` names the agent and
    step in console messages."""

    records: list[dict[str, Any]]
    who: str = ""

    def add(self, module: str, **fields: Any) -> None:
        self.records.append({"module": module, **fields})


class ModuleCaller:
    """Runs one module call for one agent's decision.

    ``structured``: ask for each module's JSON answer (:mod:`compass.planner.answers`) instead of
    the text protocol. ``max_errors``: after that many failed calls in a run the model counts as
    absent and :meth:`run` raises :class:`VLMFatalError`. ``prompt_log``: store what was sent and
    received (``--log-prompts``).
    """

    def __init__(
        self,
        client: VLMClient,
        templates: dict[str, Template],
        usage: PlannerUsage,
        max_tokens: dict[str, int] | None = None,
        *,
        structured: bool = False,
        max_errors: int | None = None,
        prompt_log: PromptLog | None = None,
    ) -> None:
        self.client = client
        self.templates = templates
        self.usage = usage
        self.max_tokens = {**MAX_TOKENS, **(max_tokens or {})}
        self.structured = structured
        self.max_errors = max_errors
        self.prompt_log = prompt_log
        self.errors = 0

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
        choices: list[str] | None = None,
    ) -> Any:
        """Call ``module`` and parse its reply; a :class:`NoAnswer` on any failure.

        Raises :class:`VLMFatalError` when going on would be meaningless (a replay that does not
        match, or more than ``max_errors`` failed calls in the run).
        """
        if module not in self.templates:
            result = NoAnswer(f"{module}: no template for this family")
            rec.add(module, kind="skipped", reason=result.reason)
            return result
        fmt = answer_format(module, choices) if self.structured else None
        template = self.templates[module]
        req = VLMRequest(
            prompt=template.fill_structured(values, fmt.instruction()) if fmt else template.fill(values),
            images=images,
            tag=module,
            max_tokens=self.max_tokens[module],
            schema=fmt.schema(self.max_tokens[module]) if fmt else None,
            schema_name=module,
        )
        key = prompt_key(req)
        files = self.prompt_log.prompt(req) if self.prompt_log is not None else None
        extra: dict[str, Any] = {"files": files} if files else {}
        try:
            completion = await self.client.complete(req)
        except VLMFatalError:
            raise
        except Exception as exc:  # VLMError, or a local backend's own failure
            error = str(exc) if isinstance(exc, VLMError) else f"{type(exc).__name__}: {exc}"
            self.usage.failed_call(episode, module)
            rec.add(module, kind="vlm_error", key_prompt=key, n_images=len(images), error=error, **extra)
            self._count_error(module, rec, error)
            return NoAnswer(f"{module}: VLM call failed: {first_line(error, 200)}")
        self.usage.call(episode, module, completion)
        if completion.cached:
            log.info("%s %s: answer from the cache", rec.who, module)
        result, mode = await parse_reply(module, parse, completion.text), "text"
        if fmt is not None:
            result, mode = await parse_reply(module, fmt.parse, completion.text), "json"
            if isinstance(result, NoAnswer):
                fallback = await parse_reply(module, parse, completion.text)
                if not isinstance(fallback, NoAnswer):
                    result, mode = fallback, "text_fallback"
        usable = not isinstance(result, NoAnswer)
        self.usage.answer(episode, module, usable)
        if not usable:
            self.usage.event(episode, "no_answer")
            log.warning("%s %s: unusable answer (%s)", rec.who, module, result.reason)
        if self.prompt_log is not None:
            extra["files"] = {**(files or {}), "response": self.prompt_log.response(completion.text)}
        if self.structured:
            extra["mode"] = mode
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
            **extra,
        )
        return result

    def _count_error(self, module: str, rec: Recorder, error: str) -> None:
        self.errors += 1
        log.warning("%s %s: VLM call failed: %s", rec.who, module, first_line(error, 300))
        if self.max_errors is not None and self.errors > self.max_errors:
            raise VLMFatalError(
                f"{self.errors} VLM calls failed (more than --max-vlm-errors {self.max_errors}); "
                f"the model is effectively absent. Last error: {first_line(error, 300)}"
            )


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


BEST_NOTE = "[measured best for the overall task: kept by the keep gate on paired seeds] "


def skill_listing(skills: list[Skill], best: str | None = None) -> str:
    """Skills "in Python format" by signature and one-line docstring (not their code: tokens).

    ``best`` (the library's recorded best for the task, listed first by the planner) is marked."""
    if not skills:
        return NONE
    return "\n".join(
        f"def {s.name}(obs: str):  # {BEST_NOTE if s.name == best else ''}{first_paragraph(s.description)}"
        for s in skills
    )


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
