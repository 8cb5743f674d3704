"""Build the planner a run asks for."""

from __future__ import annotations

from compass.config import RunConfig
from compass.planner.base import LibraryPlanner, Planner
from compass.skills.library import SkillLibrary


def make_planner(cfg: RunConfig, library: SkillLibrary) -> Planner:
    """``library``: retrieval only (or ``--skill NAME`` for every agent), no VLM. ``vlm``: the five-module closed-loop planner."""
    if cfg.planner == "library":
        return LibraryPlanner(library, skill=cfg.skill)
    if cfg.skill is not None:
        raise ValueError(
            "--skill runs one named skill without a VLM; it cannot be combined with --planner vlm"
        )
    if not cfg.vlm:
        raise ValueError(
            "--planner vlm needs --vlm SPEC (e.g. openai:gpt-4o-mini, anthropic:claude-3-haiku-20240307)"
        )
    from compass.planner.vlm_planner import VLMPlanner

    return VLMPlanner.from_config(cfg, library)
