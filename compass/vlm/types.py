"""Request, completion and usage-accounting types shared by every backend."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class VLMRequest:
    """One prompt to a vision-language model.

    ``images`` are PNG-encoded bytes (see :func:`compass.vlm.images.to_png`). ``max_tokens`` and
    ``temperature`` left as ``None`` take the client's configured defaults. ``tag`` names the
    caller (e.g. the module ``"planner"``) for per-tag usage accounting; it is not part of the
    cache key. ``schema`` (a JSON schema, named ``schema_name``) asks for structured output.
    """

    prompt: str
    system: str | None = None
    images: tuple[bytes, ...] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    tag: str = "default"
    #: JSON schema of the answer (structured output); ``None`` asks for free text. Backends that
    #: cannot constrain their output ignore it (:attr:`Backend.structured` says which can).
    schema: dict[str, Any] | None = field(default=None, hash=False)
    schema_name: str = "answer"

    def __post_init__(self) -> None:
        # Accept a list (or bytearrays) for convenience but keep the request hashable and immutable.
        for i, image in enumerate(self.images):
            if not isinstance(image, bytes | bytearray):
                raise TypeError(f"VLMRequest.images[{i}] must be PNG bytes, got {type(image).__name__}")
        object.__setattr__(self, "images", tuple(bytes(image) for image in self.images))

    def with_defaults(self, max_tokens: int, temperature: float) -> VLMRequest:
        """A copy with unset generation settings filled in."""
        return replace(
            self,
            max_tokens=self.max_tokens if self.max_tokens is not None else max_tokens,
            temperature=self.temperature if self.temperature is not None else temperature,
        )


@dataclass(frozen=True)
class Completion:
    """A model's answer to one :class:`VLMRequest`.

    ``latency_s`` is the wall time of the backend call including retries (not the wait for a
    concurrency slot); for a cache hit it is the lookup time. ``cost_usd`` is what this call cost:
    0 for cache hits and local backends. ``key`` is the cache key (:func:`compass.vlm.keys.request_key`).
    ``attempts`` counts backend attempts (1 + retries; 0 for a cache hit).
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cost_usd: float
    cached: bool
    backend: str
    model: str
    key: str
    attempts: int = 1
    #: "reported" when the backend reported both token counts, else "estimated" (see client._completion).
    usage_source: str = "reported"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class UsageStats:
    """Running totals for one bucket (overall or one tag).

    Tokens count every successful call, cache hits included (they describe the prompts); cost
    counts only what was paid; latency covers live (non-cached) calls only.
    """

    calls: int = 0
    cached: int = 0
    errors: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s_total: float = 0.0
    latency_s_max: float = 0.0
    estimated_calls: int = 0  # calls whose tokens were estimated here, not reported by the backend

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.estimated_calls += completion.usage_source != "reported"
        self.retries += max(completion.attempts - 1, 0)  # cache hits have 0 attempts
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.cost_usd += completion.cost_usd
        if completion.cached:
            self.cached += 1
        else:
            self.latency_s_total += completion.latency_s
            self.latency_s_max = max(self.latency_s_max, completion.latency_s)

    def add_error(self, attempts: int) -> None:
        self.errors += 1
        self.retries += max(attempts - 1, 0)

    def as_dict(self) -> dict[str, Any]:
        live = self.calls - self.cached
        out = asdict(self)
        out["total_tokens"] = self.prompt_tokens + self.completion_tokens
        out["latency_s_mean"] = self.latency_s_total / live if live else 0.0
        out["cost_usd"] = round(self.cost_usd, 8)
        return out


class UsageMeter:
    """Aggregates calls, tokens, cost and latency overall and per request tag.

    Updates take a lock, so one meter may be shared by several clients, tasks and threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = UsageStats()
        self._by_tag: dict[str, UsageStats] = {}

    def record(self, completion: Completion, tag: str) -> None:
        """Count one successful call (live or cached)."""
        with self._lock:
            self._total.add(completion)
            self._by_tag.setdefault(tag, UsageStats()).add(completion)

    def record_error(self, tag: str, attempts: int = 1) -> None:
        """Count one call that failed for good after ``attempts`` attempts."""
        with self._lock:
            self._total.add_error(attempts)
            self._by_tag.setdefault(tag, UsageStats()).add_error(attempts)

    @property
    def total(self) -> UsageStats:
        with self._lock:
            return replace(self._total)

    def tag(self, tag: str) -> UsageStats:
        """A snapshot of one tag's totals (zeros if the tag was never seen)."""
        with self._lock:
            return replace(self._by_tag.get(tag, UsageStats()))

    def summary(self) -> dict[str, Any]:
        """``{"total": {...}, "by_tag": {tag: {...}}}`` with plain JSON types."""
        with self._lock:
            return {
                "total": self._total.as_dict(),
                "by_tag": {tag: stats.as_dict() for tag, stats in sorted(self._by_tag.items())},
            }

    def reset(self) -> None:
        with self._lock:
            self._total = UsageStats()
            self._by_tag = {}


__all__ = ["Completion", "UsageMeter", "UsageStats", "VLMRequest"]
