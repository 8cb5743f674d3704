"""Spec strings (``openai:gpt-4o-mini``, ``llamacpp:model.gguf``, ...) to backends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from compass.vlm.backends.base import Backend
from compass.vlm.config import VLMConfig
from compass.vlm.errors import VLMError


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
    if BACKENDS[prefix].url:
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


def _openai(spec: Spec, config: VLMConfig) -> Backend:
    from compass.vlm.backends.openai_api import OpenAIBackend

    return OpenAIBackend(
        spec.model, spec.base_url, image_detail=config.image_detail, dialect=spec.options.get("dialect")
    )


def _anthropic(spec: Spec, config: VLMConfig) -> Backend:
    from compass.vlm.backends.anthropic_api import AnthropicBackend

    return AnthropicBackend(spec.model, spec.base_url, dialect=spec.options.get("dialect"))


def _llamacpp(spec: Spec, config: VLMConfig) -> Backend:
    from compass.vlm.backends.llamacpp_local import LlamaCppBackend

    return LlamaCppBackend(
        spec.model,
        n_ctx=_int_option(spec, "n_ctx") or 8192,
        n_threads=_int_option(spec, "n_threads"),
        seed=_int_option(spec, "seed") or 0,
    )


def _hf(spec: Spec, config: VLMConfig) -> Backend:
    from compass.vlm.backends.hf_local import HFBackend

    return HFBackend(spec.model, device=config.device)


def _replay(spec: Spec, config: VLMConfig) -> Backend:
    from compass.vlm.backends.replay import ReplayBackend

    if not spec.model:
        raise VLMError("replay: spec needs a run directory, e.g. replay:runs/2024-06-01_smax")
    return ReplayBackend(spec.model)


def _fake(spec: Spec, config: VLMConfig) -> Backend:
    from compass.vlm.backends.fake import FakeBackend

    return FakeBackend(spec.model or "OK")


@dataclass(frozen=True)
class BackendKind:
    """One model backend, by its spec prefix (which is also its ``Backend.name``)."""

    prefix: str
    form: str  # the spec's form, for help and errors
    build: Callable[[Spec, VLMConfig], Backend]  # imports its SDK only when used
    options: tuple[str, ...] = ()  # ``?key=value`` options it accepts
    url: bool = False  # takes ``@http(s)://HOST:PORT``
    free: bool = False  # runs on our hardware or answers from a recording: never costs money
    key_env: str | None = None  # the environment variable holding its API key


#: Every backend, in one place: the spec parser, the client's hints and pricing read this.
BACKENDS: dict[str, BackendKind] = {
    b.prefix: b
    for b in (
        BackendKind(
            "openai",
            "openai:MODEL, openai:MODEL@http://HOST:PORT/v1[?dialect=llamacpp|vllm|ollama|openai|text]",
            _openai,
            options=("dialect",),
            url=True,
            key_env="OPENAI_API_KEY",
        ),
        BackendKind(
            "anthropic",
            "anthropic:MODEL, anthropic:MODEL@http://HOST:PORT",
            _anthropic,
            options=("dialect",),
            url=True,
            key_env="ANTHROPIC_API_KEY",
        ),
        BackendKind(
            "llamacpp",
            "llamacpp:PATH.gguf[?n_ctx=N&n_threads=N]",
            _llamacpp,
            options=("n_ctx", "n_threads", "seed"),
            free=True,
        ),
        BackendKind("hf", "hf:PATH_OR_NAME", _hf, free=True),
        BackendKind("replay", "replay:RUN_DIR", _replay, free=True),
        BackendKind("fake", "fake:[REPLY]", _fake, free=True),
    )
}
PREFIXES = tuple(BACKENDS)
SPEC_HELP = ", ".join(b.form for b in BACKENDS.values())
#: ``?key=value`` options each prefix accepts.
OPTIONS: dict[str, tuple[str, ...]] = {p: b.options for p, b in BACKENDS.items() if b.options}


def make_backend(spec: str, config: VLMConfig) -> Backend:
    """Build the backend named by ``spec`` (imports each SDK only when its backend is used)."""
    parsed = parse_spec(spec)
    return BACKENDS[parsed.prefix].build(parsed, config)
