"""Spec strings (``openai:gpt-4o-mini``, ``llamacpp:model.gguf``, ...) to backends."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from compass.vlm.backends.base import Backend
from compass.vlm.config import VLMConfig
from compass.vlm.errors import VLMError

PREFIXES = ("openai", "anthropic", "llamacpp", "hf", "replay", "fake")

SPEC_HELP = (
    "openai:MODEL, openai:MODEL@http://HOST:PORT/v1[?dialect=llamacpp|vllm|ollama|openai|text], "
    "anthropic:MODEL, anthropic:MODEL@http://HOST:PORT, llamacpp:PATH.gguf[?n_ctx=N&n_threads=N], "
    "hf:PATH_OR_NAME, replay:RUN_DIR, fake:[REPLY]"
)

#: ``?key=value`` options each prefix accepts.
OPTIONS: dict[str, tuple[str, ...]] = {
    "openai": ("dialect",),
    "anthropic": ("dialect",),
    "llamacpp": ("n_ctx", "n_threads", "seed"),
}


@dataclass(frozen=True)
class Spec:
    """A parsed spec: backend prefix, model (or path), optional server URL and ``?key=value`` options."""

    prefix: str
    model: str
    base_url: str | None = None
    options: dict[str, str] = field(default_factory=dict)


def _split_options(spec: str, prefix: str, rest: str) -> tuple[str, dict[str, str]]:
    if prefix not in OPTIONS or "?" not in rest:
        return rest, {}
    rest, _, query = rest.rpartition("?")
    options = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(options) - set(OPTIONS[prefix]))
    if unknown:
        raise VLMError(
            f"spec {spec!r}: unknown option(s) {', '.join(unknown)}; {prefix}: takes "
            f"{', '.join(OPTIONS[prefix])}"
        )
    return rest, options


def parse_spec(spec: str) -> Spec:
    """Split ``PREFIX:MODEL[@URL][?key=value&...]``; only the API backends take ``@URL`` (paths may
    contain ``@``)."""
    prefix, sep, rest = spec.strip().partition(":")
    prefix = prefix.lower()
    if not sep or prefix not in PREFIXES:
        raise VLMError(
            f"unknown VLM spec {spec!r}: valid prefixes are {', '.join(p + ':' for p in PREFIXES)} "
            f"({SPEC_HELP})"
        )
    rest, options = _split_options(spec, prefix, rest)
    if prefix in ("openai", "anthropic"):
        model, _, url = rest.partition("@")
        if url and not url.startswith(("http://", "https://")):
            raise VLMError(f"spec {spec!r}: the part after '@' must be an http(s) URL")
        return Spec(prefix, model.strip(), url.strip() or None, options)
    return Spec(prefix, rest, None, options)


def _int_option(spec: Spec, name: str) -> int | None:
    value = spec.options.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise VLMError(f"{spec.prefix}: option {name}={value!r} is not an integer") from None


def make_backend(spec: str, config: VLMConfig) -> Backend:
    """Build the backend named by ``spec`` (imports each SDK only when its backend is used)."""
    parsed = parse_spec(spec)
    if parsed.prefix == "openai":
        from compass.vlm.backends.openai_api import OpenAIBackend

        return OpenAIBackend(
            parsed.model,
            parsed.base_url,
            image_detail=config.image_detail,
            dialect=parsed.options.get("dialect"),
        )
    if parsed.prefix == "anthropic":
        from compass.vlm.backends.anthropic_api import AnthropicBackend

        return AnthropicBackend(parsed.model, parsed.base_url, dialect=parsed.options.get("dialect"))
    if parsed.prefix == "llamacpp":
        from compass.vlm.backends.llamacpp_local import LlamaCppBackend

        return LlamaCppBackend(
            parsed.model,
            n_ctx=_int_option(parsed, "n_ctx") or 8192,
            n_threads=_int_option(parsed, "n_threads"),
            seed=_int_option(parsed, "seed") or 0,
        )
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
