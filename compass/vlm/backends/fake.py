"""``fake:``: a scripted in-process backend for unit tests of code that calls a VLM."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from compass.vlm.backends.base import Backend, BackendReply
from compass.vlm.types import VLMRequest

Responder = Callable[[VLMRequest], Any]


class FakeBackend(Backend):
    """Answers with ``responder(request)`` after ``latency_s`` seconds.

    The responder may return a ``str``, a :class:`BackendReply` (to fix token counts), or an
    awaitable of either; it may raise :class:`~compass.vlm.errors.BackendError` to simulate a
    failure (``retryable=True`` ones are retried by the client). A plain string instead of a
    callable is a constant reply. Every request is appended to ``calls``.
    """

    name = "fake"

    def __init__(
        self,
        responder: Responder | str = "OK",
        latency_s: float = 0.0,
        model: str = "fake",
        structured: bool = False,
    ) -> None:
        self.responder: Responder = (
            (lambda _req, text=responder: text) if isinstance(responder, str) else responder
        )
        self.latency_s = latency_s
        self.model = model
        self.structured = structured  # True: the planner sends schemas (``req.schema``) for JSON answers
        self.calls: list[VLMRequest] = []

    async def generate(self, req: VLMRequest, timeout_s: float) -> BackendReply:
        self.calls.append(req)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        result = self.responder(req)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, BackendReply):
            return result
        if not isinstance(result, str):
            raise TypeError(
                f"FakeBackend responder returned {type(result).__name__}, expected str or BackendReply"
            )
        return BackendReply(text=result)
