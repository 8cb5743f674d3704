"""The trainer's typed configuration (YAML on disk; defaults follow JaxMARL's SMAX MAPPO recipe)."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field


class MappoConfig(BaseModel):
    """Hyper-parameters of one MAPPO training run. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")

    env: str = "smax:protoss_5_vs_5"
    total_steps: int = Field(3_000_000, ge=1, description="environment steps (of one env) over all envs")
    num_envs: int = Field(128, ge=1)
    num_steps: int = Field(128, ge=1, description="rollout length per update")
    max_episode_steps: int = Field(200, ge=1, description="episode limit (SMACv2's 5v5 limit)")
    epo: bool = Field(False, description="SMACv2's extended partial observability for the actors (smax only)")
    lr: float = Field(0.002, gt=0)
    anneal_lr: bool = True
    gamma: float = Field(0.99, ge=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip_eps: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.0, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.25, gt=0)
    update_epochs: int = Field(4, ge=1)
    num_minibatches: int = Field(4, ge=1)
    hidden: int = Field(128, ge=1, description="GRU and dense width")
    seed: int = 0
    checkpoint_every: int = Field(10, ge=1, description="updates between checkpoints")
    eval_episodes: int = Field(64, ge=0, description="greedy episodes on held-out seeds at the end")

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // self.steps_per_update)


def load_config(path: str | Path) -> MappoConfig:
    """Read a YAML config; a missing file or bad key is a ``ValueError`` naming the file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as e:
        raise ValueError(f"cannot read config {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of settings")
    try:
        return MappoConfig(**data)
    except Exception as e:  # pydantic's message names the key
        raise ValueError(f"{path}: {e}") from None


def dump_config(cfg: MappoConfig) -> str:
    return yaml.safe_dump(cfg.model_dump(), sort_keys=True)
