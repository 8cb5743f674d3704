"""Tolerant parsing of the ``##Section##:`` reply format into typed module results.

Models drift from the requested format: sections go missing or change order, headers come in
``**bold**`` or as markdown headings, in another case, with spaces for underscores, and the whole
reply may sit in a code fence or be wrapped in prose. :func:`parse_sections` accepts all of that;
each ``parse_*`` function returns its module's result or a :class:`NoAnswer` saying why not,
never raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
#
# Every scanner below is linear in the reply's length: plain string operations plus regexes that
# are anchored at one position and have no nested or adjacent quantifiers (a line of spaces made
# the former header regex backtrack for seconds). Replies longer than MAX_REPLY_CHARS are refused.

#: Longest reply a module parser accepts (characters); the modules ask for at most ~6,000.
MAX_REPLY_CHARS = 65_536

_SPACE = " \t"
_MARKUP = "#*_"


def _fence(line: str) -> str | None:
    """The language of a fence line (`````python``, ``~~~``), ``""`` if none; None if no fence."""
    s = line.strip()
    if s[:3] not in ("```", "~~~"):
        return None
    lang = s.lstrip(s[0]).strip()
    if lang and not all(c.isalnum() or c in "_+-" for c in lang):
        return None
    return lang


def _name_pattern(name: str) -> str:
    # game_situation matches "Game_situation", "game situation", "GAME-SITUATION", "GameSituation".
    return r"[ \t_-]*".join(re.escape(part) for part in name.split("_"))


def _names_regex(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(f"(?P<s{i}>{_name_pattern(n)})" for i, n in enumerate(names))
    # The lookahead on the possible first letters lets the regex engine skip ahead in C (~10x).
    firsts = "".join(sorted({c for n in names for c in (n[0].lower(), n[0].upper())}))
    return re.compile(rf"(?=[{firsts}])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)


_RUNS: dict[str, re.Pattern[str]] = {}


def _skip(line: str, i: int, chars: str) -> int:
    """The first index at or after ``i`` whose character is not in ``chars`` (a run scanned in C)."""
    run = _RUNS.get(chars)
    if run is None:
        run = _RUNS[chars] = re.compile(f"[{re.escape(chars)}]*")
    return run.match(line, i).end()  # type: ignore[union-attr]  # "*" always matches


def _header(line: str, regex: re.Pattern[str], names: tuple[str, ...]) -> tuple[str, str] | None:
    """``(section, inline rest)`` when ``line`` is a marked header of one of ``names``.

    A header: optional quote marks and numbering (``1.``), optional markup (``#``, ``**``, ``__``),
    the name, then markup and/or a colon; at least one marker must be present.
    """
    i = _skip(line, 0, _SPACE + ">")
    j = i
    while j < len(line) and j - i < 2 and line[j] in "0123456789":
        j += 1
    if j > i and j < len(line) and line[j] in ".)":
        i = _skip(line, j + 1, _SPACE)
    start = i
    i = _skip(line, i, _MARKUP + _SPACE)
    pre = line[start:i].strip()
    m = regex.match(line, i)
    if m is None:
        return None
    start = i = m.end()
    i = _skip(line, i, _MARKUP + _SPACE + ":")
    post = line[start:i].strip()
    if not pre and not post:
        return None
    name = next(names[k] for k in range(len(names)) if m.group(f"s{k}") is not None)
    return name, line[i:]


def _strip_outer_fence(text: str) -> str:
    """Remove a code fence that wraps the whole reply (``` or ```markdown ... ```), keeping inner fences."""
    body = text.strip()
    first_end, last_start = body.find("\n"), body.rfind("\n")
    if first_end < 0:
        return text
    first, last = body[:first_end], body[last_start + 1 :]
    lang = _fence(first)
    if lang is not None and _fence(last) is not None:
        inner = body[first_end + 1 : last_start] if last_start > first_end else ""
        if lang.lower() in ("", "markdown", "md", "text", "txt") and ("##" in inner or "**" in inner):
            return inner
    return text


def parse_sections(text: str, names: tuple[str, ...]) -> dict[str, str]:
    """``{section: content}`` for each of ``names`` found in ``text`` (case, markup and order free).

    A header is a line starting with a section name marked by ``##``/``**``/a heading or followed
    by a colon; content runs to the next header. Content on the header line is kept. Headers inside
    code fences are ignored. A section given twice keeps its first non-empty content.
    """
    regex = _names_regex(names)
    text = _strip_outer_fence((text or "").replace("\r\n", "\n").replace("\r", "\n"))
    # Only lines that hold a fence or a section name are looked at (found by C-speed scans), so
    # a reply of 100,000 empty lines costs no Python work per line.
    events: list[tuple[int, int, str | None, str]] = []  # (line start, line end, section|None=fence, rest)
    line_end = -1
    for m in regex.finditer(text):
        if m.start() <= line_end:
            continue  # this line was looked at already
        start, line_end = _line_at(text, m.start())
        line = text[start:line_end]
        if _fence(line) is None and (header := _header(line, regex, names)) is not None:
            events.append((start, line_end, header[0], header[1]))
    if not events:
        return {}
    for m in _FENCE_START.finditer(text, 0, events[-1][0]):  # fences after the last header do not matter
        start, end = _line_at(text, m.start())
        if _fence(text[start:end]) is not None:
            events.append((start, end, None, ""))
    events.sort(key=lambda e: e[0])
    found: list[tuple[str, int, int, str]] = []  # (name, line start, line end, inline rest)
    in_fence = False
    for start, end, name, rest in events:
        if name is None:
            in_fence = not in_fence
        elif not in_fence:
            found.append((name, start, end, rest))
    out: dict[str, str] = {}
    for n, (name, _, end, rest) in enumerate(found):
        stop = found[n + 1][1] - 1 if n + 1 < len(found) else len(text)
        body = _clean(rest if end >= stop else rest + "\n" + text[end + 1 : stop])
        if not out.get(name):
            out[name] = body
    return out


_FENCE_START = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)


def _line_at(text: str, pos: int) -> tuple[int, int]:
    """Start and end (the newline's index, or the text's length) of the line holding ``pos``."""
    end = text.find("\n", pos)
    return text.rfind("\n", 0, pos) + 1, len(text) if end < 0 else end


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


def _blocks(text: str) -> Iterator[tuple[str, str]]:
    """``(language, body)`` of each fenced block, in order; an unclosed block runs to the end.

    A fence (3+ backticks or tildes) may open anywhere; its language runs to the end of the line,
    and the block closes at a line starting with the same fence.
    """
    pos, n = 0, len(text)
    # Next occurrence of each fence kind, searched again only once passed (keeps this linear).
    nxt = {"```": -1, "~~~": -1}
    while pos < n:
        for mark, at in nxt.items():
            if at < pos and at != n:
                found = text.find(mark, pos)
                nxt[mark] = n if found < 0 else found
        i = min(nxt.values())
        if i >= n:
            break
        j = _skip(text, i, text[i])
        fence = text[i:j]
        nl = text.find("\n", j)
        lang = text[j : nl if nl >= 0 else n].strip(_SPACE)
        if nl < 0 or (lang and not all(c.isalnum() or c in "_+-" for c in lang)):
            pos = j
            continue
        body_start, close = nl + 1, -1
        p = text.find("\n", body_start)
        while p >= 0:
            q = _skip(text, p + 1, _SPACE)
            if text.startswith(fence, q):
                close = p
                break
            p = text.find("\n", q)
        if close < 0:
            yield lang, text[body_start:]
            return
        yield lang, text[body_start:close]
        pos = _skip(text, close + 1, _SPACE) + len(fence)


def code_block(text: str) -> str:
    """The first fenced block's content (python preferred), else the text itself, stripped."""
    first = None
    for lang, body in _blocks(text or ""):
        if lang.lower() in ("python", "py", "python3"):
            return body.strip("\n")
        first = body if first is None else first
    return first.strip("\n") if first is not None else (text or "").strip()


_DEF = re.compile(r"^[ \t]*def[ \t]+\w+[ \t]*\(", re.MULTILINE)


def has_def(text: str) -> bool:
    """Some line of ``text`` starts (after indentation) with ``def name(``."""
    return _DEF.search(text or "") is not None


def too_long(module: str, text: str) -> NoAnswer | None:
    """A :class:`NoAnswer` for a reply over :data:`MAX_REPLY_CHARS` (None when it is short enough)."""
    if len(text or "") > MAX_REPLY_CHARS:
        return NoAnswer(f"{module}: reply of {len(text):,} characters refused (limit {MAX_REPLY_CHARS:,})")
    return None


def first_line(text: str, limit: int = 300) -> str:
    """One line of at most ``limit`` characters (for trace summaries and prompt carry-over)."""
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


# --- per module -------------------------------------------------------------------------------


def _sections(module: str, text: str) -> dict[str, str]:
    return parse_sections(text, SECTIONS[module])


def parse_perception(text: str) -> Perception | NoAnswer:
    if (refused := too_long("perception", text)) is not None:
        return refused
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
    if (refused := too_long("reflection", text)) is not None:
        return refused
    s = _sections("reflection", text)
    success = parse_bool(s.get("success", ""))
    if success is None:
        return NoAnswer("reflection: no True/False in ##Success##")
    return Reflection(success, s.get("critique", ""))


def parse_task(text: str) -> TaskPlan | NoAnswer:
    if (refused := too_long("task reasoning", text)) is not None:
        return refused
    s = _sections("task_reasoning", text)
    if "task_guidance" not in s and "skill_guidance" not in s:
        return NoAnswer("task reasoning: neither ##Task_guidance## nor ##Skill_guidance## found")
    guidance = s.get("task_guidance", "")
    subtask = None if is_null(guidance) else first_line(guidance.strip("[]\"' "), 400)
    fits = parse_bool(s.get("skill_guidance", ""))
    return TaskPlan(subtask, fits, s.get("reasoning_of_task", "") or s.get("reasoning_of_skill", ""))


def _code_reply(module: str, section: str, text: str) -> SkillCode | NoAnswer:
    if (refused := too_long(module, text)) is not None:
        return refused
    s = _sections(module, text)
    body = s.get(section)
    if body is None:
        # No header at all: accept a bare fenced block or a bare null.
        if "```" in (text or "") or has_def(text):
            body = text
        elif is_null(text or ""):
            return SkillCode(None)
        else:
            return NoAnswer(f"{module}: no ##{section.capitalize()}## section and no code")
    if is_null(body):
        return SkillCode(None)
    code = code_block(body)
    if not has_def(code):
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
    if (refused := too_long("actor", text)) is not None:
        return refused
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
