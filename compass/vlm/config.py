"""Settings shared by every backend of a :class:`~compass.vlm.client.VLMClient`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class VLMConfig(BaseModel):
    """How a client calls its backend: limits, retries, cache, prices and generation defaults."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(8, ge=1, description="calls in flight at once per client")
    timeout_s: float = Field(60.0, gt=0, description="per attempt; the hf backend cannot be interrupted")
    max_retries: int = Field(4, ge=0, description="retries after the first attempt")
    backoff_base_s: float = Field(0.5, ge=0, description="first retry delay; doubles per attempt")
    backoff_max_s: float = Field(30.0, ge=0, description="cap on one delay, Retry-After included")
    cache_dir: Path | None = Field(None, description="response cache directory; None disables caching")
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="model -> (USD per 1M prompt tokens, USD per 1M completion tokens)"
    )
    temperature: float = Field(0.0, ge=0)
    max_tokens: int = Field(1024, ge=1)
    device: str = Field("cpu", description="torch device of the hf backend")
    image_detail: Literal["low", "high", "auto"] = Field(
        "low", description="OpenAI image `detail`, always sent; also what image tokens are estimated for"
    )
