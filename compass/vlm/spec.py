"""Spec strings (``openai:gpt-4o-mini``, ``hf:/models/x``, ...) to backends."""

from __future__ import annotations

from dataclasses import dataclass

from compass.vlm.backends.base import Backend
from compass.vlm.config import VLMConfig
from compass.vlm.errors import VLMError

PREFIXES = ("openai", "anthropic", "hf", "replay", "fake")

SPEC_HELP = (
    "openai:MODEL, openai:MODEL@http://HOST:PORT/v1, anthropic:MODEL, anthropic:MODEL@http://HOST:PORT, "
    "hf:PATH_OR_NAME, replay:RUN_DIR, fake:[REPLY]"
)


@dataclass(frozen=True)
class Spec:
    """A parsed spec: backend prefix, model (or path) and optional server URL."""

    prefix: str
    model: str
    base_url: str | None = None


def parse_spec(spec: str) -> Spec:
    """Split ``PREFIX:MODEL[@URL]``; only the API backends take ``@URL`` (paths may contain ``@``)."""
    prefix, sep, rest = spec.strip().partition(":")
    prefix = prefix.lower()
    if not sep or prefix not in PREFIXES:
        raise VLMError(
            f"unknown VLM spec {spec!r}: valid prefixes are {', '.join(p + ':' for p in PREFIXES)} "
            f"({SPEC_HELP})"
        )
    if prefix in ("openai", "anthropic"):
        model, _, url = rest.partition("@")
        if url and not url.startswith(("http://", "https://")):
            raise VLMError(f"spec {spec!r}: the part after '@' must be an http(s) URL")
        return Spec(prefix, model.strip(), url.strip() or None)
    return Spec(prefix, rest)


def make_backend(spec: str, config: VLMConfig) -> Backend:
    """Build the backend named by ``spec`` (imports each SDK only when its backend is used)."""
    parsed = parse_spec(spec)
    if parsed.prefix == "openai":
        from compass.vlm.backends.openai_api import OpenAIBackend

        return OpenAIBackend(parsed.model, parsed.base_url, image_detail=config.image_detail)
    if parsed.prefix == "anthropic":
        from compass.vlm.backends.anthropic_api import AnthropicBackend

        return AnthropicBackend(parsed.model, parsed.base_url)
    if parsed.prefix == "hf":
        from compass.vlm.backends.hf_local import HFBackend

        return HFBackend(parsed.model, device=config.device)
    if parsed.prefix == "replay":
        from compass.vlm.backends.replay import ReplayBackend

        if not parsed.model:
            raise VLMError("replay: spec needs a run directory, e.g. replay:runs/2024-06-01_smax")
        return ReplayBackend(parsed.model)
    from compass.vlm.backends.fake import FakeBackend

    return FakeBackend(parsed.model or "OK")
