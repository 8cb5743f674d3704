"""``VLMClient``: one async ``complete()`` over every backend, with cache, retries and accounting."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from compass.vlm.backends.base import Backend, BackendReply, PerLoop
from compass.vlm.backends.validate import answer_text
from compass.vlm.cache import ResponseCache
from compass.vlm.config import VLMConfig
from compass.vlm.errors import BackendError, VLMError
from compass.vlm.image_tokens import image_tokens
from compass.vlm.keys import prompt_key, request_key
from compass.vlm.pricing import cost_usd, price_for
from compass.vlm.spec import make_backend
from compass.vlm.tokens import approx_tokens, count_tokens
from compass.vlm.types import Completion, UsageMeter, VLMRequest

log = logging.getLogger(__name__)


class Backoff:
    """tenacity wait: ``base * 2**(n-1)`` with jitter, at least the server's Retry-After, capped.

    The jitter (50-100 % of the delay) keeps agents that were throttled together from retrying
    in lockstep.
    """

    def __init__(self, base_s: float, max_s: float) -> None:
        self.base_s = base_s
        self.max_s = max_s

    def __call__(self, state: RetryCallState) -> float:
        delay = self.base_s * 2 ** (state.attempt_number - 1) * (0.5 + 0.5 * random.random())
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, BackendError) and exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        return min(delay, self.max_s)


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, BackendError) and exc.retryable


class VLMClient:
    """Calls one backend: cache lookup, concurrency limit, retries with backoff, usage accounting.

    Build one with :meth:`from_spec` (``"openai:gpt-4o-mini"``, ``"hf:/models/x"``, ...) or pass a
    :class:`Backend` instance (e.g. a :class:`~compass.vlm.backends.fake.FakeBackend`). A client may
    be shared by many agents and reused across event loops.
    """

    #: The backend-independent prompt hash that traces store (``key_prompt``) and replay matches.
    prompt_key = staticmethod(prompt_key)

    def __init__(
        self, backend: Backend, config: VLMConfig | None = None, meter: UsageMeter | None = None
    ) -> None:
        self.backend = backend
        self.config = config or VLMConfig()
        self.usage = meter or UsageMeter()
        self.cache = ResponseCache(self.config.cache_dir) if self.config.cache_dir is not None else None
        self._slots: PerLoop[asyncio.Semaphore] = PerLoop(lambda: asyncio.Semaphore(self.config.concurrency))
        self._backoff = Backoff(self.config.backoff_base_s, self.config.backoff_max_s)
        self._price = price_for(backend.price_backend, backend.model, self.config.prices)
        if self._price is None:
            log.warning(
                "no price known for %s; its cost is counted as 0 (set VLMConfig.prices)", backend.label
            )

    @classmethod
    def from_spec(
        cls, spec: str, config: VLMConfig | None = None, meter: UsageMeter | None = None
    ) -> VLMClient:
        """A client for ``spec`` (see :data:`compass.vlm.spec.SPEC_HELP`); raises :class:`VLMError`
        for an unknown prefix, a missing API key or a missing optional dependency."""
        config = config or VLMConfig()
        return cls(make_backend(spec, config), config, meter)

    @property
    def label(self) -> str:
        return self.backend.label

    # --- the one entry point ----------------------------------------------------------------
    async def complete(self, req: VLMRequest) -> Completion:
        """Answer ``req``: from the cache if possible, else from the backend (retrying transient
        failures); raises :class:`VLMError` when the call fails for good."""
        req = req.with_defaults(self.config.max_tokens, self.config.temperature)
        key = request_key(self.backend.cache_id, self.backend.model, req)
        hit = self._from_cache(key, req)
        if hit is not None:
            return hit
        async with self._slots.get():
            start = time.perf_counter()
            reply, attempts = await self._call_with_retries(req)
            latency = time.perf_counter() - start
        completion = self._completion(req, reply, key, latency, attempts)
        if self.cache is not None and self.backend.cacheable:
            self.cache.put(
                key,
                {
                    "text": completion.text,
                    "prompt_tokens": completion.prompt_tokens,
                    "completion_tokens": completion.completion_tokens,
                    "backend": completion.backend,
                    "model": completion.model,
                    "tag": req.tag,
                    "latency_s": latency,
                    "cost_usd": completion.cost_usd,
                    "usage_source": completion.usage_source,
                },
            )
        self.usage.record(completion, req.tag)
        return completion

    async def ask(
        self,
        prompt: str,
        *,
        images: Sequence[bytes] = (),
        system: str | None = None,
        tag: str = "default",
        **settings: Any,
    ) -> str:
        """Shorthand: ``complete()`` and return only the text."""
        req = VLMRequest(prompt=prompt, system=system, images=tuple(images), tag=tag, **settings)
        return (await self.complete(req)).text

    async def probe(self, timeout_s: float = 30.0) -> None:
        """Check once, before a run, that the backend answers (one cheap call, or loading a local
        model); raises :class:`VLMError` with one line saying what is wrong and how to fix it."""
        limit = min(timeout_s, self.config.timeout_s)
        try:
            if self.backend.interruptible:
                async with asyncio.timeout(limit):
                    await self.backend.probe(limit)
            else:
                await self.backend.probe(self.config.timeout_s)
        except VLMError:
            raise
        except TimeoutError as exc:
            raise VLMError(f"{self.label} did not answer a one-token probe within {limit:g} s") from exc
        except BackendError as exc:
            raise VLMError(self._probe_failure(exc)) from exc

    def _probe_failure(self, exc: BackendError) -> str:
        where = f"{self.label}"
        if exc.status is None:
            return f"cannot reach {where}: {exc}; is the server running? Start it, or fix the URL in --vlm"
        if exc.status in (401, 403):
            key = _key_env(self.backend.name) or "the key"
            return f"{where} refused the key (status {exc.status}): {exc}; check {key}"
        if exc.status == 404:
            return f"{where}: model or endpoint not found (status 404): {exc}; check the model name and URL"
        return f"{where} failed a one-token probe (status {exc.status}): {exc}"

    # --- steps ------------------------------------------------------------------------------
    def _from_cache(self, key: str, req: VLMRequest) -> Completion | None:
        if self.cache is None or not self.backend.cacheable:
            return None
        start = time.perf_counter()
        record = self.cache.get(key)
        if record is None:
            return None
        completion = Completion(
            text=record["text"],
            prompt_tokens=record["prompt_tokens"],
            completion_tokens=record["completion_tokens"],
            latency_s=time.perf_counter() - start,
            cost_usd=0.0,
            cached=True,
            backend=self.backend.name,
            model=self.backend.model,
            key=key,
            attempts=0,
            usage_source=record.get("usage_source", "reported"),
        )
        self.usage.record(completion, req.tag)
        return completion

    async def _call_with_retries(self, req: VLMRequest) -> tuple[BackendReply, int]:
        attempts = 0
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=self._backoff,
            retry=retry_if_exception(_retryable),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    reply = await self._attempt(req)
        except BackendError as exc:
            self.usage.record_error(req.tag, attempts)
            raise VLMError(self._failure(exc, attempts)) from exc
        except Exception:
            # VLMError from a backend (e.g. replay's unknown prompt) or a bug: count it, keep it as is.
            self.usage.record_error(req.tag, attempts)
            raise
        return reply, attempts

    async def _attempt(self, req: VLMRequest) -> BackendReply:
        if not self.backend.interruptible:
            reply = await self.backend.generate(req, self.config.timeout_s)
        else:
            try:
                # Our own deadline as well as the SDK's: an httpx timeout is per read, so a server
                # that trickles bytes would never trip it.
                async with asyncio.timeout(self.config.timeout_s):
                    reply = await self.backend.generate(req, self.config.timeout_s)
            except TimeoutError as exc:
                message = f"timed out (no reply within {self.config.timeout_s:g} s)"
                raise BackendError(message, retryable=True) from exc
        # Whatever the backend: an empty answer is retried, then counted as a failed call.
        answer_text(reply.text)
        return reply

    def _completion(
        self, req: VLMRequest, reply: BackendReply, key: str, latency: float, attempts: int
    ) -> Completion:
        prompt_tokens = reply.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = self._count(f"{req.system or ''}\n{req.prompt}") + self._image_tokens(req)
        completion_tokens = reply.completion_tokens
        if completion_tokens is None:
            completion_tokens = self._count(reply.text)
        reported = reply.prompt_tokens is not None and reply.completion_tokens is not None
        return Completion(
            text=reply.text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency,
            cost_usd=cost_usd(self._price, prompt_tokens, completion_tokens),
            cached=False,
            backend=self.backend.name,
            model=self.backend.model,
            key=key,
            attempts=attempts,
            usage_source="reported" if reported else "estimated",
        )

    def _image_tokens(self, req: VLMRequest) -> int:
        """Images by the provider's published rule for the detail sent (0 where none is published)."""
        total = 0
        self_hosted = getattr(self.backend, "base_url", None) is not None
        for png in req.images:
            try:
                n = image_tokens(
                    self.backend.name, self.backend.model, png, self.backend.image_detail, self_hosted
                )
            except ValueError:  # not a PNG: its size is unknown
                continue
            total += n or 0
        return total

    def _count(self, text: str) -> int:
        # tiktoken only approximates API tokenizers, and a local model's tokenizer is unknown here.
        return count_tokens(text, self.backend.model) if self.backend.use_tiktoken else approx_tokens(text)

    def _failure(self, exc: BackendError, attempts: int) -> str:
        status = f"status {exc.status}" if exc.status is not None else "no HTTP status"
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        if not exc.retryable:
            tries += " (not retryable)"
        hint = ""
        if exc.status in (401, 403):
            key = _key_env(self.backend.name)
            hint = f" - check {key}" if key else ""
        return f"VLM call to {self.label} failed {tries} ({status}): {exc}{hint}"

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        detail = exc.describe() if isinstance(exc, BackendError) else repr(exc)
        log.info(
            "%s: attempt %d failed (%s); retrying in %.2f s", self.label, state.attempt_number, detail, delay
        )

    # --- lifecycle --------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the backend's connections."""
        await self.backend.aclose()

    async def __aenter__(self) -> VLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"VLMClient({self.label!r}, concurrency={self.config.concurrency})"


def _key_env(backend: str) -> str | None:
    """The API-key variable of ``backend`` (:data:`compass.vlm.spec.BACKENDS`), if it has one."""
    from compass.vlm.spec import BACKENDS

    kind = BACKENDS.get(backend)
    return kind.key_env if kind is not None else None
