"""``openai:MODEL`` and ``openai:MODEL@URL``: the OpenAI API or any OpenAI-compatible server."""

from __future__ import annotations

import os
from typing import Any

from compass.vlm.backends.base import BackendReply, PerLoop, SdkBackend
from compass.vlm.backends.sdk_errors import to_backend_error
from compass.vlm.backends.validate import answer_text, expect_object, reading, token_count
from compass.vlm.errors import BackendError, VLMError
from compass.vlm.images import data_url
from compass.vlm.types import VLMRequest

ENV_KEY = "OPENAI_API_KEY"

#: How each OpenAI-compatible server takes a JSON schema (``openai:MODEL@URL?dialect=...``):
#: OpenAI, vLLM and llama.cpp's ``llama-server`` take ``response_format`` ``json_schema``;
#: llama-cpp-python's server takes ``json_object`` with a ``schema``; Ollama takes ``format``;
#: ``text`` sends no schema (the paper's text protocol).
DIALECTS = ("openai", "vllm", "llamacpp", "ollama", "text")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` for OpenAI's strict mode: every property required, no extra properties, and
    without the keywords strict mode refuses (string lengths)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("maxLength", "minLength", "title", "default"):
            continue
        if isinstance(value, dict):
            value = (
                strict_schema(value)
                if key != "properties"
                else {k: strict_schema(v) for k, v in value.items()}
            )
        elif isinstance(value, list):
            value = [strict_schema(v) if isinstance(v, dict) else v for v in value]
        out[key] = value
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def schema_options(dialect: str, req: VLMRequest) -> dict[str, Any]:
    """The ``chat.completions.create`` arguments that ask ``dialect`` for ``req.schema``."""
    if req.schema is None or dialect == "text":
        return {}
    if dialect == "llamacpp":
        return {"response_format": {"type": "json_object", "schema": req.schema}}
    if dialect == "ollama":
        return {"extra_body": {"format": req.schema}}
    schema = strict_schema(req.schema) if dialect == "openai" else req.schema
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": req.schema_name, "schema": schema, "strict": dialect == "openai"},
        }
    }


def openai_messages(req: VLMRequest, detail: str = "low") -> list[dict[str, Any]]:
    """Chat messages in OpenAI wire format: images as ``image_url`` data-URL parts, then the text.

    ``detail`` is always sent: left out, the API picks one itself and bills accordingly, so the
    tokens an image costs would not be known in advance.
    """
    messages: list[dict[str, Any]] = []
    if req.system:
        messages.append({"role": "system", "content": req.system})
    if req.images:
        content: Any = [
            {"type": "image_url", "image_url": {"url": data_url(image), "detail": detail}}
            for image in req.images
        ]
        content.append({"type": "text", "text": req.prompt})
    else:
        content = req.prompt  # plain string: accepted by text-only servers too
    messages.append({"role": "user", "content": content})
    return messages


class OpenAIBackend(SdkBackend):
    """Calls ``chat.completions`` through the official ``openai.AsyncOpenAI`` client.

    With ``base_url`` (vLLM, Ollama, llama.cpp, ...) the key is optional (``OPENAI_API_KEY`` if set,
    else ``"EMPTY"``) and ``max_tokens`` is sent; against the OpenAI API the key is required and
    ``max_completion_tokens`` is sent.
    """

    name = "openai"
    use_tiktoken = True

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        dialect: str | None = None,
        image_detail: str = "low",
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise VLMError("openai backend needs the 'openai' package: pip install openai") from exc
        if not model:
            raise VLMError("openai: spec needs a model name, e.g. openai:gpt-4o-mini")
        self._sdk = openai
        self.model = model
        self.image_detail = image_detail
        self.base_url = base_url.rstrip("/") if base_url else None
        key = api_key or os.environ.get(ENV_KEY)
        if not key:
            if self.base_url is None:
                raise VLMError(
                    f"openai: {ENV_KEY} is not set; export it, or use a local OpenAI-compatible "
                    f"server with openai:{model}@http://HOST:PORT/v1"
                )
            key = "EMPTY"  # local servers ignore the key but the SDK insists on one
        self._key = key
        # An unknown server gets the text protocol unless the spec names how it takes schemas.
        self.dialect = (dialect or ("text" if self.base_url else "openai")).lower()
        if self.dialect not in DIALECTS:
            raise VLMError(
                f"openai: unknown dialect {self.dialect!r}; use one of {', '.join(DIALECTS)} "
                f"(e.g. openai:{model}@http://127.0.0.1:8080/v1?dialect=llamacpp)"
            )
        self.structured = self.dialect != "text"
        # SDK retries are off: VLMClient retries with its own policy and accounting.
        self._clients: PerLoop[Any] = PerLoop(
            lambda: openai.AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0)
        )

    @property
    def cache_id(self) -> str:
        base = f"openai@{self.base_url}" if self.base_url else "openai"
        # The detail changes what an image costs and may change the answer; "low" keeps old keys.
        return base if self.image_detail == "low" else f"{base}#detail={self.image_detail}"

    @property
    def price_backend(self) -> str:
        return "local" if self.base_url else "openai"

    @property
    def label(self) -> str:
        return f"openai:{self.model}@{self.base_url}" if self.base_url else f"openai:{self.model}"

    async def generate(self, req: VLMRequest, timeout_s: float) -> BackendReply:
        limit = {"max_tokens" if self.base_url else "max_completion_tokens": req.max_tokens}
        try:
            response = await self._clients.get().chat.completions.create(
                model=self.model,
                messages=openai_messages(req, self.image_detail),
                temperature=req.temperature,
                timeout=timeout_s,
                **limit,
                **schema_options(self.dialect, req),
            )
        except Exception as exc:
            error = to_backend_error(exc, self._sdk)
            if error is None:
                raise
            raise error from exc
        response = expect_object(response, "chat completion")
        with reading("chat completion"):
            if not response.choices:
                raise BackendError("response has no choices", retryable=True)
            text = answer_text(response.choices[0].message.content)
            usage = response.usage
        return BackendReply(
            text=text,
            prompt_tokens=token_count(getattr(usage, "prompt_tokens", None)),
            completion_tokens=token_count(getattr(usage, "completion_tokens", None)),
        )
