"""Typed, validated run configuration with defaults that run offline."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_ENV = "smax:protoss_5_vs_5"


class RunConfig(BaseModel):
    """Everything ``compass run`` needs. Unknown keys are errors (a typo must not be ignored)."""

    model_config = ConfigDict(extra="forbid")

    env: str = DEFAULT_ENV
    episodes: int = Field(1, ge=1)
    seed: int = 0
    planner: Literal["library", "vlm"] = "library"
    vlm: str | None = None
    library: Path | None = None
    out: Path = Path("runs")
    run_id: str | None = None
    max_steps: int | None = Field(None, ge=1)
    video: bool = False
    epo: bool = False
    comm: str = "multihop"
    skill: str | None = None  # library planner: every agent runs this skill, no retrieval
    task: str | None = None  # None: the environment family's default goal (GameFamily.default_task)
    decision_interval: int = Field(8, ge=1, description="env steps between VLM decisions")
    reflection: bool = True
    image: bool = True
    max_repairs: int = Field(2, ge=0)
    vlm_cache: Path | None = None
    vlm_concurrency: int = Field(8, ge=1)
    # process: skills run in locked-down worker processes; inprocess: trusted skills only (docs/skills.md)
    isolation: Literal["process", "inprocess"] = "process"
    sandbox_workers: int = Field(1, ge=1, description="skill worker processes (isolation=process)")
    sandbox_parts_from: int | Literal["auto"] | None = Field(
        "auto",
        description="isolation=process: a skill batch of this many items or more (batched episodes) goes "
        "to the worker in parts it runs as they arrive; auto = 8 where a core is free of the processes "
        "playing episodes, else off; null/off = one message per batch (the speed only: same results)",
    )
    vlm_output: Literal["auto", "text", "json"] = Field(
        "auto",
        description="json: schema-constrained answers; text: the paper's format; auto: json where supported",
    )
    max_vlm_errors: int = Field(
        10, ge=0, description="failed VLM calls after which the run stops (non-zero exit)"
    )
    log_prompts: bool = Field(
        False, description="store prompts, images and raw responses in the run directory"
    )
    vlm_max_tokens: int | None = Field(
        None, ge=16, description="cap on every module's completion tokens (small local models, quick tests)"
    )
    keep_gate: Literal["off", "check", "eval"] = Field(
        "off",
        description="VLM runs: keep synthesized skills only when they hold up (compass/skills/holdup.py): "
        "eval = checked on recorded observations, then played against the library's best at episode end; "
        "check = the check only; off = added at once",
    )
    keep_gate_episodes: int = Field(
        20,
        ge=2,
        description="keep gate: evaluation episodes, candidate and best on the same seeds (paired test)",
    )
    keep_gate_steps: int = Field(300, ge=1, description="keep gate: steps per evaluation episode")
    keep_gate_seed: int = Field(
        1000,
        ge=0,
        description="keep gate: first evaluation seed (keep them apart from tuning and held-out seeds)",
    )
    keep_gate_judge: Literal["team", "author"] = Field(
        "team",
        description="keep gate: team = every agent runs the candidate; author = only the agent that wrote it",
    )

    @field_validator("sandbox_parts_from", mode="before")
    @classmethod
    def _parts_setting(cls, v: object) -> object:
        # One message for every wrong value (a typo of auto, zero, a float), not pydantic's three.
        if v is False or (isinstance(v, str) and v.strip().lower() in ("off", "none", "null")):
            return None  # YAML reads a bare ``off`` as False
        if isinstance(v, str) and v.strip().isdigit():
            v = int(v)  # the command line gives text
        if v is None or v == "auto" or (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
            return v
        raise ValueError(f"sandbox_parts_from must be auto, a number of items (1 or more) or off, got {v!r}")

    @field_validator("out")
    @classmethod
    def _out_is_a_folder(cls, v: Path) -> Path:
        # Checked here, before an environment compiles, not when the first run directory is made.
        for p in (v, *v.parents):
            if p.exists():
                if not p.is_dir():
                    raise ValueError(f"{p} is a file; --out needs a folder to put run directories in")
                break
        return v

    @field_validator("env")
    @classmethod
    def _env_has_family(cls, v: str) -> str:
        if ":" not in v:
            raise ValueError(f"env must look like FAMILY:SCENARIO (e.g. {DEFAULT_ENV}), got {v!r}")
        return v


def default_task(family: str) -> str:
    """The overall goal a run pursues when ``--task`` is not given (the family's default)."""
    from compass.core.family import get_family

    return get_family(family).default_task


#: Settings that change how fast a run goes, never what it plays: left out of traces and of an eval
#: configuration's key, so a trace or a resumed eval does not depend on them.
SPEED_ONLY = frozenset({"sandbox_parts_from"})

#: ``compass run``'s option defaults, read by the command line from here (they live only above).
RUN_DEFAULTS = RunConfig.model_construct()
