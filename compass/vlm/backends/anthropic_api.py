"""``anthropic:MODEL`` and ``anthropic:MODEL@URL``: the Anthropic Messages API."""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

from compass.vlm.backends.base import BackendReply, PerLoop, SdkBackend
from compass.vlm.backends.sdk_errors import to_backend_error
from compass.vlm.backends.validate import answer_text, expect_object, reading, token_count
from compass.vlm.errors import VLMError
from compass.vlm.images import to_base64
from compass.vlm.types import VLMRequest

ENV_KEY = "ANTHROPIC_API_KEY"

#: ``tools``: structured output as a forced tool call whose input schema is the answer's;
#: ``text``: the paper's text protocol (for compatible servers without tool use).
DIALECTS = ("tools", "text")


def tool_options(req: VLMRequest) -> dict[str, Any]:
    """Ask for ``req.schema`` as one forced tool call (Anthropic's structured output)."""
    if req.schema is None:
        return {}
    name = req.schema_name
    return {
        "tools": [{"name": name, "description": f"Report the {name} answer.", "input_schema": req.schema}],
        "tool_choice": {"type": "tool", "name": name},
    }


def anthropic_messages(req: VLMRequest) -> list[dict[str, Any]]:
    """The user turn in Anthropic wire format: base64 ``image`` blocks, then the text."""
    content: list[dict[str, Any]] = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": to_base64(image)}}
        for image in req.images
    ]
    content.append({"type": "text", "text": req.prompt})
    return [{"role": "user", "content": content}]


class AnthropicBackend(SdkBackend):
    """Calls ``messages.create`` through the official ``anthropic.AsyncAnthropic`` client.

    ``base_url`` is the server root *without* ``/v1`` (the SDK appends ``/v1/messages``); a trailing
    ``/v1`` is dropped for you.
    """

    name = "anthropic"
    use_tiktoken = True

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        dialect: str | None = None,
    ) -> None:
        try:
            import anthropic
        except ImportError as exc:
            raise VLMError("anthropic backend needs the 'anthropic' package: pip install anthropic") from exc
        if not model:
            raise VLMError("anthropic: spec needs a model name, e.g. anthropic:claude-3-5-haiku-latest")
        self._sdk = anthropic
        self.model = model
        url = base_url.rstrip("/") if base_url else None
        self.base_url = url.removesuffix("/v1") if url else None
        key = api_key or os.environ.get(ENV_KEY)
        if not key:
            if self.base_url is None:
                raise VLMError(
                    f"anthropic: {ENV_KEY} is not set; export it, or point the spec at a "
                    f"compatible server with anthropic:{model}@http://HOST:PORT"
                )
            key = "EMPTY"
        self._key = key
        # A compatible server may lack tool use: it gets the text protocol unless the spec says tools.
        self.dialect = (dialect or ("text" if self.base_url else "tools")).lower()
        if self.dialect not in DIALECTS:
            raise VLMError(f"anthropic: unknown dialect {self.dialect!r}; use one of {', '.join(DIALECTS)}")
        self.structured = self.dialect == "tools"
        self._clients: PerLoop[Any] = PerLoop(
            lambda: anthropic.AsyncAnthropic(api_key=self._key, base_url=self.base_url, max_retries=0)
        )
        # Recent SDKs dropped ``temperature`` from messages.create (and the API ignores/rejects it for
        # newer models); send it only where the installed SDK still takes it.
        create = anthropic.resources.messages.AsyncMessages.create
        self.sends_temperature = "temperature" in inspect.signature(create).parameters

    @property
    def cache_id(self) -> str:
        return f"anthropic@{self.base_url}" if self.base_url else "anthropic"

    @property
    def price_backend(self) -> str:
        return "local" if self.base_url else "anthropic"

    @property
    def label(self) -> str:
        return f"anthropic:{self.model}@{self.base_url}" if self.base_url else f"anthropic:{self.model}"

    async def generate(self, req: VLMRequest, timeout_s: float) -> BackendReply:
        extra: dict[str, Any] = {"system": req.system} if req.system else {}
        if self.sends_temperature:
            extra["temperature"] = req.temperature
        if self.structured:
            extra.update(tool_options(req))
        try:
            response = await self._clients.get().messages.create(
                model=self.model,
                messages=anthropic_messages(req),
                max_tokens=req.max_tokens,
                timeout=timeout_s,
                **extra,
            )
        except Exception as exc:
            error = to_backend_error(exc, self._sdk)
            if error is None:
                raise
            raise error from exc
        response = expect_object(response, "message")
        with reading("message"):
            if isinstance(response.content, str):  # a list of blocks is the only valid shape
                raise TypeError("content is a string, not a list of blocks")
            tools = [b.input for b in response.content or () if getattr(b, "type", "") == "tool_use"]
            if tools:  # structured output: the forced tool call's input is the answer, as JSON text
                text = answer_text(json.dumps(tools[0], ensure_ascii=False))
            else:
                blocks = [
                    block.text for block in response.content or () if getattr(block, "type", "") == "text"
                ]
                text = answer_text("".join(blocks) if blocks else None)
            usage = response.usage
        return BackendReply(
            text=text,
            prompt_tokens=token_count(getattr(usage, "input_tokens", None)),
            completion_tokens=token_count(getattr(usage, "output_tokens", None)),
        )
