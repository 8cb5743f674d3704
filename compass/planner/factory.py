"""Build the planner a run asks for, and check its model before anything else is built."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from compass.config import RunConfig
from compass.planner.base import LibraryPlanner, Planner
from compass.skills.library import SkillLibrary


def _check_vlm_options(cfg: RunConfig) -> None:
    """A VLM run needs ``--vlm`` and cannot take ``--skill`` (raises ``ValueError`` saying which)."""
    if cfg.skill is not None:
        raise ValueError(
            "--skill runs one named skill without a VLM; it cannot be combined with --planner vlm"
        )
    if not cfg.vlm:
        raise ValueError(
            "--planner vlm needs --vlm SPEC (e.g. openai:gpt-4o-mini, anthropic:claude-3-haiku-20240307)"
        )


def preflight(cfg: RunConfig) -> tuple[Any, bool | None]:
    """For a VLM run: validate the spec, check keys, probe the backend (one cheap call, or load a
    local model once) and settle the output mode, before the environment or the run directory
    exist. Returns ``(client, structured)``, or ``(None, None)`` for a library run.

    Raises :class:`~compass.vlm.VLMError` (or ``ValueError``) with one line saying what to fix.
    """
    if cfg.planner != "vlm":
        return None, None
    _check_vlm_options(cfg)
    from compass.planner.answers import structured_output
    from compass.planner.vlm_planner import client_config
    from compass.vlm import VLMClient, VLMError

    client = VLMClient.from_spec(cfg.vlm, client_config(cfg))
    if cfg.image and not client.backend.accepts_images:
        raise VLMError(f"{client.label} is a text-only model and cannot take images; add --no-image")
    structured = structured_output(cfg.vlm_output, client.backend)
    asyncio.run(client.probe())
    return client, structured


def make_planner(
    cfg: RunConfig, library: SkillLibrary, client: Any = None, run_dir: str | Path | None = None
) -> Planner:
    """``library``: retrieval only (or ``--skill NAME`` for every agent), no VLM. ``vlm``: the
    five-module closed-loop planner (over ``client`` when the caller already probed one)."""
    if cfg.planner == "library":
        return LibraryPlanner(library, skill=cfg.skill)
    _check_vlm_options(cfg)
    from compass.planner.vlm_planner import VLMPlanner

    return VLMPlanner.from_config(
        cfg, library, client=client, run_dir=None if run_dir is None else str(run_dir)
    )
