"""Prompt templates: one text file per module in the game family's ``prompts/`` folder.

Templates are the paper's prompts (Appendix F) with ``<<<placeholder>>>`` slots. Loading checks
every slot against :data:`PLACEHOLDERS` (what the input assembly knows how to fill) and
:data:`STATIC_PLACEHOLDERS`, so a typo in a template fails when the planner is built, not half-way
through an episode. Static slots are filled once, at load time, from code: ``<<<skill_api>>>`` from
the family's skill API module (its exported names, signatures, first docstring lines) and
``<<<sandbox_rules>>>`` from the sandbox's allowed builtins, modules and budget, so a prompt cannot
contradict what a skill actually gets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from compass.core.errors import CompassError
from compass.core.family import get_family
from compass.sandbox.reference import api_reference, sandbox_rules

#: The modules whose templates every family must provide.
REQUIRED = ("perception", "reflection", "task_reasoning", "skill_synthesis", "actor")
#: Templates a family may provide; without one the module is disabled for that family.
OPTIONAL = ("skill_repair",)

#: Every placeholder the input assembly fills (shared by all families).
PLACEHOLDERS = frozenset(
    {
        "unit_type",
        "unit_id",
        "scenario_name",
        "few_shots",
        "last_episode_reasoning",
        "info_summary",
        "image_introduction",
        "ego_minimap",
        "task_description",
        "web_search",
        "event_count",
        "cumulative_reward",
        "ally_task",
        "game_situation",
        "skill_library",
        "previous_action",
        "action_code",
        "previous_reasoning",
        "previous_self_reflection_reasoning",
        "error_report",
        "overall_task",
    }
)

#: Slots filled once per family when the templates load (rendered from code, the same every call).
STATIC_PLACEHOLDERS = frozenset({"skill_api", "sandbox_rules"})

_SLOT = re.compile(r"<<<([A-Za-z0-9_]+)>>>")

#: Where a template's text-format block starts; structured (JSON) mode replaces it from there on.
FORMAT_MARKER = "You should only respond in the format described below"


class TemplateError(CompassError, ValueError):
    """A template names a placeholder nobody fills, or a fill misses one."""


@dataclass(frozen=True)
class Template:
    """One module's prompt text and the placeholders it uses (in order of first use)."""

    family: str
    module: str
    text: str
    placeholders: tuple[str, ...]

    def fill(self, values: dict[str, str]) -> str:
        """The prompt with every slot replaced in one pass (values are not re-scanned for slots)."""
        missing = [p for p in self.placeholders if p not in values]
        if missing:
            raise TemplateError(f"{self.family}/{self.module}: no value for {', '.join(missing)}")
        return _SLOT.sub(lambda m: str(values[m.group(1)]), self.text)

    def fill_structured(self, values: dict[str, str], instruction: str) -> str:
        """The prompt with its text-format block (from :data:`FORMAT_MARKER`) replaced by
        ``instruction`` (the JSON answer format rendered from the module's answer model)."""
        filled = self.fill(values)
        head, marker, _ = filled.rpartition(FORMAT_MARKER)
        return (head if marker else filled.rstrip() + "\n") + instruction


def parse_template(family: str, module: str, text: str) -> Template:
    """A :class:`Template` from raw text; unknown placeholders raise :class:`TemplateError`."""
    names = tuple(dict.fromkeys(_SLOT.findall(text)))
    unknown = sorted(set(names) - PLACEHOLDERS - STATIC_PLACEHOLDERS)
    if unknown:
        raise TemplateError(
            f"prompts/{family}/{module}.txt uses unknown placeholder(s) "
            f"{', '.join('<<<' + u + '>>>' for u in unknown)}; known: "
            f"{', '.join(sorted(PLACEHOLDERS | STATIC_PLACEHOLDERS))}"
        )
    return Template(family, module, text, tuple(n for n in names if n not in STATIC_PLACEHOLDERS))


def static_values(family: str) -> dict[str, str]:
    """The :data:`STATIC_PLACEHOLDERS` of ``family``, rendered from its API module and the sandbox."""
    return {
        "skill_api": api_reference(get_family(family).api_module()),
        "sandbox_rules": sandbox_rules(),
    }


def fill_static(text: str, values: dict[str, str]) -> str:
    """``text`` with the static slots replaced (other slots untouched, values not re-scanned)."""
    return _SLOT.sub(lambda m: values[m.group(1)] if m.group(1) in STATIC_PLACEHOLDERS else m.group(0), text)


@cache
def load_templates(family: str) -> dict[str, Template]:
    """All templates of ``family`` (``GameFamily.prompts_dir/*.txt``), checked.

    Raises :class:`TemplateError` when a required template is missing or a slot is unknown.
    """
    folder = get_family(family).prompts_dir
    if not folder.is_dir():
        raise TemplateError(f"no prompt templates for family {family!r} (expected {folder})")
    out: dict[str, Template] = {}
    static: dict[str, str] | None = None
    for module in REQUIRED + OPTIONAL:
        entry = folder / f"{module}.txt"
        if not entry.is_file():
            if module in REQUIRED:
                raise TemplateError(
                    f"prompts/{family}/{module}.txt is missing (every family needs "
                    f"{', '.join(m + '.txt' for m in REQUIRED)})"
                )
            continue
        template = parse_template(family, module, entry.read_text(encoding="utf-8"))
        if STATIC_PLACEHOLDERS & set(_SLOT.findall(template.text)):
            static = static or static_values(family)
            template = Template(family, module, fill_static(template.text, static), template.placeholders)
        out[module] = template
    return out
