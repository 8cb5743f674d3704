"""Structured answers: each module's reply as a pydantic model, asked for as JSON.

In ``json`` output mode the planner sends the model's JSON schema with the request (each backend
in its own dialect: OpenAI ``json_schema``, Anthropic tool use, llama.cpp grammars...) and
replaces the prompt's text-format block with an instruction rendered from the same model, so the
prompt and the parser can never disagree. Field names are the text protocol's section names.
A reply that is not valid JSON for the schema is parsed with the text protocol as a fallback.

Strings carry a ``maxLength`` in the schema (not enforced when validating): grammar-constrained
local models otherwise fill their whole token budget with one string and never close the JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from compass.planner.parsing import (
    ActorChoice,
    NoAnswer,
    Perception,
    Reflection,
    SkillCode,
    TaskPlan,
    code_block,
    first_line,
    is_null,
)
from compass.vlm import VLMError

OUTPUT_MODES = ("auto", "text", "json")
#: A conservative characters-per-token figure for sizing string lengths to a token budget.
CHARS_PER_TOKEN = 2.5


def _text(description: str, max_length: int) -> Any:
    return Field(description=description, json_schema_extra={"maxLength": max_length})


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PerceptionAnswer(_Answer):
    game_situation: str = _text("the current situation in a few short sentences", 500)
    region_of_interest: str = _text("where your unit should go or look, in a few words", 80)
    reasoning_of_region_of_interest: str = _text("why that region matters", 200)


class ReflectionAnswer(_Answer):
    success: bool = Field(description="true if the last skill made progress on the current task")
    critique: str = _text("what went wrong or should be kept, short and actionable", 300)


class TaskAnswer(_Answer):
    task_guidance: str = _text("ONE concrete sub-task for your unit, or null to keep the current one", 250)
    reasoning_of_task: str = _text("why this sub-task", 200)
    skill_guidance: bool = Field(description="true if the current skill already fits the sub-task")
    reasoning_of_skill: str = _text("why the skill fits or not", 150)


class SynthesisAnswer(_Answer):
    skill_generation: str = _text(
        "Python source of the improved function (one def, as a string), or null if none is needed", 3000
    )


class RepairAnswer(_Answer):
    fixed_code: str = _text("Python source of the fixed function (one def, as a string)", 3000)


def actor_answer(names: list[str]) -> type[BaseModel]:
    """The Actor's answer: one of ``names`` (an ``enum`` in the schema, so grammars force a valid name)."""
    choice = Literal[tuple(names)] if names else str  # type: ignore[valid-type]
    return create_model(
        "ActorAnswer",
        __base__=_Answer,
        skill=(choice, Field(description="the name of the skill to execute next")),
    )


# --- from answers to the planner's results -----------------------------------------------------


def _perception(a: PerceptionAnswer) -> Perception | NoAnswer:
    if not a.game_situation.strip():
        return NoAnswer("perception: empty game_situation")
    return Perception(
        a.game_situation.strip(), first_line(a.region_of_interest, 120), a.reasoning_of_region_of_interest
    )


def _reflection(a: ReflectionAnswer) -> Reflection:
    return Reflection(a.success, a.critique.strip())


def _task(a: TaskAnswer) -> TaskPlan:
    guidance = a.task_guidance.strip()
    subtask = None if is_null(guidance) else first_line(guidance.strip("[]\"' "), 400)
    return TaskPlan(subtask, a.skill_guidance, a.reasoning_of_task or a.reasoning_of_skill)


def _code(module: str, body: str, null_ok: bool) -> SkillCode | NoAnswer:
    if is_null(body):
        return SkillCode(None) if null_ok else NoAnswer(f"{module}: the model answered null")
    code = code_block(body)
    if not re.search(r"^\s*def\s+\w+\s*\(", code, re.MULTILINE):
        return NoAnswer(f"{module}: the code field has no function definition")
    return SkillCode(code)


@dataclass(frozen=True)
class AnswerFormat:
    """One module's structured answer: its schema, the prompt instruction and the parser."""

    module: str
    model: type[BaseModel]
    convert: Callable[[Any], Any]

    def schema(self, max_tokens: int | None = None) -> dict[str, Any]:
        """The JSON schema sent to the backend; with ``max_tokens`` the strings' ``maxLength`` shrink
        so that the whole object fits the completion budget (a grammar-constrained model then always
        closes its JSON instead of being cut off mid-string)."""
        schema = self.model.model_json_schema()
        schema.pop("title", None)
        props = schema.get("properties", {})
        for prop in props.values():
            prop.pop("title", None)
        if max_tokens is not None:
            total = sum(p.get("maxLength", 0) for p in props.values())
            # Keys, quotes, colons and braces cost tokens too (a key ~ len/2.5 + 4 tokens, measured
            # loosely on SmolLM2's tokenizer); only what is left is shared among the strings.
            overhead = 8 + sum(len(name) / CHARS_PER_TOKEN + 4 for name in props)
            room = (max_tokens - overhead) * CHARS_PER_TOKEN * 0.8  # escapes, multi-token characters
            if total and room < total:
                for prop in props.values():
                    if "maxLength" in prop:
                        prop["maxLength"] = max(8, int(prop["maxLength"] * max(room, 0) / total))
        return schema

    def instruction(self) -> str:
        """The prompt's answer-format block, rendered from the model's fields."""
        lines = ["Respond with ONE JSON object and nothing else. Its fields:"]
        for name, prop in self.schema()["properties"].items():
            kind = prop.get("type", "string")
            if "enum" in prop:
                kind = "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
            lines.append(f'- "{name}" ({kind}): {prop.get("description", "")}')
        return "\n".join(lines) + "\n"

    def parse(self, text: str) -> Any:
        """The module's result from a JSON reply, or a :class:`NoAnswer` saying what was wrong."""
        data = _json_object(text)
        if data is None:
            return NoAnswer(f"{self.module}: the reply is not a JSON object")
        try:
            answer = self.model.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()[:3]
            )
            return NoAnswer(f"{self.module}: JSON answer does not fit the schema ({problems})")
        return self.convert(answer)


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in ``text``: the whole reply, a fenced block, or the outermost ``{...}``."""
    candidates = [text or "", code_block(text or "")]
    start, end = (text or "").find("{"), (text or "").rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None


def structured_output(mode: str, backend: Any) -> bool:
    """Whether ``mode`` (``auto`` | ``text`` | ``json``) means JSON answers from ``backend``.

    ``auto`` uses JSON where the backend can constrain its output to a schema and the paper's
    text protocol elsewhere; ``json`` on a backend that cannot is an error (a silent downgrade
    would measure something else).
    """
    if mode not in OUTPUT_MODES:
        raise ValueError(f"unknown VLM output mode {mode!r}; use one of {', '.join(OUTPUT_MODES)}")
    if mode == "text":
        return False
    if mode == "json" and not backend.structured:
        raise VLMError(
            f"{backend.label} cannot constrain its answers to a JSON schema; use --vlm-output text, or "
            "name the server's dialect in the spec (openai:MODEL@URL?dialect=llamacpp|vllm|ollama|openai)"
        )
    return bool(backend.structured)


def answer_format(module: str, choices: list[str] | None = None) -> AnswerFormat:
    """The structured answer of ``module`` (``choices``: the Actor's skill names)."""
    if module == "perception":
        return AnswerFormat(module, PerceptionAnswer, _perception)
    if module == "reflection":
        return AnswerFormat(module, ReflectionAnswer, _reflection)
    if module == "task_reasoning":
        return AnswerFormat(module, TaskAnswer, _task)
    if module == "skill_synthesis":
        return AnswerFormat(module, SynthesisAnswer, lambda a: _code(module, a.skill_generation, True))
    if module == "skill_repair":
        return AnswerFormat(module, RepairAnswer, lambda a: _code(module, a.fixed_code, False))
    if module == "actor":
        return AnswerFormat(module, actor_answer(list(choices or [])), lambda a: ActorChoice(a.skill))
    raise KeyError(f"no structured answer for module {module!r}")


__all__ = [
    "OUTPUT_MODES",
    "AnswerFormat",
    "PerceptionAnswer",
    "ReflectionAnswer",
    "RepairAnswer",
    "SynthesisAnswer",
    "TaskAnswer",
    "actor_answer",
    "answer_format",
    "structured_output",
]
