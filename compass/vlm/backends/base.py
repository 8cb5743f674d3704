"""The contract between :class:`~compass.vlm.client.VLMClient` and one model backend."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from compass.vlm.types import VLMRequest

T = TypeVar("T")

#: The probe's prompt (answered with one token) that checks server, model name and key before a run.
PROBE_PROMPT = "compass probe: reply with OK"


@dataclass(frozen=True)
class BackendReply:
    """What a backend returns; token counts are ``None`` when it did not report them."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Backend:
    """One way of answering a :class:`VLMRequest`.

    Subclasses set ``name`` (the spec prefix) and ``model`` and implement :meth:`generate`, raising
    :class:`~compass.vlm.errors.BackendError` for failures the client should classify/retry. The
    client owns caching, retries, concurrency and accounting; a backend does one attempt.
    """

    name: str = "base"
    model: str = ""
    #: Replies may be stored in / served from the response cache.
    cacheable: bool = True
    #: The client may cancel a call at its timeout (false for in-process generation threads).
    interruptible: bool = True
    #: Count tokens with tiktoken when the reply has no usage (API backends); else chars/4.
    use_tiktoken: bool = False
    #: Image detail sent (OpenAI only); estimates of image tokens follow it.
    image_detail: str = "low"
    #: Constrains answers to ``VLMRequest.schema`` (structured output); others get the text protocol.
    structured: bool = False
    #: Takes images (a text-only local model does not).
    accepts_images: bool = True

    @property
    def cache_id(self) -> str:
        """The backend identity in cache keys (distinguishes e.g. two servers serving one model name)."""
        return self.name

    @property
    def price_backend(self) -> str:
        """The backend name used for pricing (``"local"`` for self-hosted servers, which are free)."""
        return self.name

    @property
    def label(self) -> str:
        """How error messages name this backend, e.g. ``openai:gpt-4o-mini``."""
        return f"{self.name}:{self.model}"

    async def generate(self, req: VLMRequest, timeout_s: float) -> BackendReply:
        """Answer ``req`` once (no retries); ``req`` has max_tokens and temperature filled in."""
        raise NotImplementedError

    async def probe(self, timeout_s: float) -> None:
        """Check, once before a run, that this backend answers at all: one cheap call (API
        backends) or loading the model (local ones). Raises :class:`~compass.vlm.errors.BackendError`
        or :class:`~compass.vlm.errors.VLMError`; the default (scripted backends) checks nothing."""

    async def aclose(self) -> None:
        """Release connections/threads; the default holds nothing."""


class SdkBackend(Backend):
    """A backend that calls a vendor SDK's async client, one client per event loop.

    Subclasses set ``_clients`` (a :class:`PerLoop` of SDK clients) in ``__init__`` and implement
    :meth:`generate`; the probe is one generation of one token, so it checks server, model name and
    key exactly as a run's first call would.
    """

    _clients: PerLoop[Any]

    async def probe(self, timeout_s: float) -> None:
        await self.generate(VLMRequest(prompt=PROBE_PROMPT, max_tokens=1, temperature=0.0), timeout_s)

    async def aclose(self) -> None:
        client = self._clients.current()
        if client is not None:
            await client.close()
        self._clients.clear()


class PerLoop(Generic[T]):
    """One lazily made object per running event loop.

    asyncio primitives and SDK connection pools are bound to the loop that first used them; a
    client reused across ``asyncio.run`` calls (or pytest-asyncio's per-test loops) would
    otherwise fail with "attached to a different loop" / "event loop is closed".
    """

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._items: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        item = self._items.get(loop)
        if item is None:
            item = self._items[loop] = self._factory()
        return item

    def current(self) -> T | None:
        """The current loop's object if one was made (None outside a loop)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return self._items.get(loop)

    def all(self) -> list[T]:
        return list(self._items.values())

    def clear(self) -> None:
        self._items.clear()
