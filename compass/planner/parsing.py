"""Tolerant parsing of the ``##Section##:`` reply format into typed module results.

Models drift from the requested format: sections go missing or change order, headers come in
``**bold**`` or as markdown headings, in another case, with spaces for underscores, and the whole
reply may sit in a code fence or be wrapped in prose. :func:`parse_sections` accepts all of that;
each ``parse_*`` function returns its module's result or a :class:`NoAnswer` saying why not,
never raises.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

SECTIONS = {
    "perception": ("game_situation", "region_of_interest", "reasoning_of_region_of_interest"),
    "reflection": ("success", "critique"),
    "task_reasoning": ("task_guidance", "reasoning_of_task", "skill_guidance", "reasoning_of_skill"),
    "skill_synthesis": ("skill_generation",),
    "actor": ("skills",),
    "skill_repair": ("fixed_code",),
}


@dataclass(frozen=True)
class NoAnswer:
    """A module produced nothing usable; the planner falls back (e.g. keeps the current skill)."""

    reason: str

    def __bool__(self) -> bool:  # lets callers write ``if not result``
        return False


@dataclass(frozen=True)
class Perception:
    situation: str
    region_of_interest: str
    reasoning: str


@dataclass(frozen=True)
class Reflection:
    success: bool
    critique: str


@dataclass(frozen=True)
class TaskPlan:
    """``subtask`` is None when the model answered ``null`` (keep the current sub-task)."""

    subtask: str | None
    skill_fits: bool | None
    reasoning: str


@dataclass(frozen=True)
class SkillCode:
    """Code from Skill Synthesis or repair; ``code`` None means the model answered ``null``."""

    code: str | None


@dataclass(frozen=True)
class ActorChoice:
    skill: str


def as_fields(result: Any) -> dict[str, Any]:
    """A result's fields for the trace (``{"no_answer": reason}`` for a :class:`NoAnswer`)."""
    if isinstance(result, NoAnswer):
        return {"no_answer": result.reason}
    return asdict(result)


# --- sections --------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)\s*$")


def _name_pattern(name: str) -> str:
    # game_situation matches "Game_situation", "game situation", "GAME-SITUATION", "GameSituation".
    return r"[\s_-]*".join(re.escape(part) for part in name.split("_"))


def _header_regex(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(f"(?P<s{i}>{_name_pattern(n)})" for i, n in enumerate(names))
    return re.compile(
        r"^[ \t>]*(?:\d{1,2}[.)][ \t]*)?(?P<pre>(?:#{1,6}|\*{1,2}|_{2})?)[ \t]*(?:#{1,2})?[ \t]*(?:\*\*)?[ \t]*"
        rf"(?:{alternatives})(?![A-Za-z0-9])"
        r"[ \t]*(?P<post>(?:#{1,6})?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*(?:#{1,6})?)"
        r"[ \t]*(?P<rest>.*)$",
        re.IGNORECASE,
    )


def _strip_outer_fence(text: str) -> str:
    """Remove a code fence that wraps the whole reply (``` or ```markdown ... ```), keeping inner fences."""
    lines = text.strip().splitlines()
    if len(lines) >= 2 and _FENCE.match(lines[0]) and _FENCE.match(lines[-1]):
        lang = _FENCE.match(lines[0]).group(2).lower()  # type: ignore[union-attr]
        inner = "\n".join(lines[1:-1])
        if lang in ("", "markdown", "md", "text", "txt") and ("##" in inner or "**" in inner):
            return inner
    return text


def parse_sections(text: str, names: tuple[str, ...]) -> dict[str, str]:
    """``{section: content}`` for each of ``names`` found in ``text`` (case, markup and order free).

    A header is a line starting with a section name marked by ``##``/``**``/a heading or followed
    by a colon; content runs to the next header. Content on the header line is kept. Headers inside
    code fences are ignored. A section given twice keeps its first non-empty content.
    """
    regex = _header_regex(names)
    lines = _strip_outer_fence(text or "").splitlines()
    found: list[tuple[str, int, str]] = []  # (name, line index, inline rest)
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = regex.match(line)
        if m is None:
            continue
        marked = bool(m.group("pre")) or bool(m.group("post").strip())
        if not marked:
            continue
        name = next(names[k] for k in range(len(names)) if m.group(f"s{k}") is not None)
        found.append((name, i, m.group("rest")))
    out: dict[str, str] = {}
    for n, (name, start, rest) in enumerate(found):
        end = found[n + 1][1] if n + 1 < len(found) else len(lines)
        body = _clean("\n".join([rest] + lines[start + 1 : end]))
        if not out.get(name):
            out[name] = body
    return out


def _clean(body: str) -> str:
    body = body.strip()
    # Stray closing markup left by "**Section**: **text**" styles.
    for mark in ("**", "__"):
        if body.startswith(mark) and body.endswith(mark) and len(body) > 2 * len(mark):
            body = body[len(mark) : -len(mark)].strip()
    return body


# --- small value parsers ----------------------------------------------------------------------

_NULL = {"null", "none", "n/a", "nil", "no", "'null'", '"null"', "`null`"}


def is_null(text: str) -> bool:
    """``null`` (quoted, fenced, bold or with a full stop) or nothing at all."""
    stripped = code_block(text) if "```" in text else text
    core = stripped.strip().strip("`*_'\".").strip().lower()
    return core in _NULL or not core


_BOOL = re.compile(r"\b(true|false|yes|no)\b", re.IGNORECASE)


def parse_bool(text: str) -> bool | None:
    """The first True/False/yes/no word, or None."""
    m = _BOOL.search(text or "")
    if m is None:
        return None
    return m.group(1).lower() in ("true", "yes")


_BLOCK = re.compile(r"(`{3,}|~{3,})[ \t]*([\w+-]*)[ \t]*\n(.*?)(?:\n[ \t]*\1|\Z)", re.DOTALL)


def code_block(text: str) -> str:
    """The first fenced block's content (python preferred), else the text itself, stripped."""
    blocks = [(m.group(2).lower(), m.group(3)) for m in _BLOCK.finditer(text or "")]
    for lang, body in blocks:
        if lang in ("python", "py", "python3"):
            return body.strip("\n")
    if blocks:
        return blocks[0][1].strip("\n")
    return (text or "").strip()


def first_line(text: str, limit: int = 300) -> str:
    """One line of at most ``limit`` characters (for trace summaries and prompt carry-over)."""
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


# --- per module -------------------------------------------------------------------------------


def _sections(module: str, text: str) -> dict[str, str]:
    return parse_sections(text, SECTIONS[module])


def parse_perception(text: str) -> Perception | NoAnswer:
    s = _sections("perception", text)
    situation = s.get("game_situation", "")
    if not situation:
        return NoAnswer("perception: no ##Game_situation## section")
    return Perception(
        situation,
        first_line(s.get("region_of_interest", ""), 120),
        s.get("reasoning_of_region_of_interest", ""),
    )


def parse_reflection(text: str) -> Reflection | NoAnswer:
    s = _sections("reflection", text)
    success = parse_bool(s.get("success", ""))
    if success is None:
        return NoAnswer("reflection: no True/False in ##Success##")
    return Reflection(success, s.get("critique", ""))


def parse_task(text: str) -> TaskPlan | NoAnswer:
    s = _sections("task_reasoning", text)
    if "task_guidance" not in s and "skill_guidance" not in s:
        return NoAnswer("task reasoning: neither ##Task_guidance## nor ##Skill_guidance## found")
    guidance = s.get("task_guidance", "")
    subtask = None if is_null(guidance) else first_line(guidance.strip("[]\"' "), 400)
    fits = parse_bool(s.get("skill_guidance", ""))
    return TaskPlan(subtask, fits, s.get("reasoning_of_task", "") or s.get("reasoning_of_skill", ""))


def _code_reply(module: str, section: str, text: str) -> SkillCode | NoAnswer:
    s = _sections(module, text)
    body = s.get(section)
    if body is None:
        # No header at all: accept a bare fenced block or a bare null.
        if "```" in (text or "") or re.search(r"^\s*def\s+\w+\s*\(", text or "", re.MULTILINE):
            body = text
        elif is_null(text or ""):
            return SkillCode(None)
        else:
            return NoAnswer(f"{module}: no ##{section.capitalize()}## section and no code")
    if is_null(body):
        return SkillCode(None)
    code = code_block(body)
    if not re.search(r"^\s*def\s+\w+\s*\(", code, re.MULTILINE):
        return NoAnswer(f"{module}: the reply has no function definition")
    return SkillCode(code)


def parse_synthesis(text: str) -> SkillCode | NoAnswer:
    return _code_reply("skill_synthesis", "skill_generation", text)


def parse_repair(text: str) -> SkillCode | NoAnswer:
    result = _code_reply("skill_repair", "fixed_code", text)
    if isinstance(result, SkillCode) and result.code is None:
        return NoAnswer("skill repair: the model answered null")
    return result


_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def parse_actor(text: str, candidates: list[str]) -> ActorChoice | NoAnswer:
    """The chosen skill name: a call ``name(obs='current')``, else a bare candidate name."""
    s = _sections("actor", text)
    body = s.get("skills", text or "")
    code = code_block(body)
    calls = [m.group(1) for m in _CALL.finditer(code)]
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code)
    for name in calls + words:  # a known name wins over whatever else the reply mentions
        if name in candidates:
            return ActorChoice(name)
    if calls:
        return ActorChoice(calls[0])  # unknown: the planner rejects it and records that
    return NoAnswer("actor: no skill call in ##Skills##")
