"""``hf:PATH_OR_NAME``: a local transformers vision-language model, run in a worker thread."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from compass.vlm.backends.base import Backend, BackendReply, PerLoop
from compass.vlm.errors import VLMError
from compass.vlm.images import to_pil
from compass.vlm.types import VLMRequest

INSTALL_HINT = "pip install 'compass-agents[hf]'"


def chat_messages(req: VLMRequest, with_system: bool = True) -> list[dict[str, Any]]:
    """Messages in the transformers chat-template format: one ``{"type": "image"}`` placeholder per image."""
    messages: list[dict[str, Any]] = []
    prompt = req.prompt
    if req.system:
        if with_system:
            messages.append({"role": "system", "content": [{"type": "text", "text": req.system}]})
        else:
            prompt = f"{req.system}\n\n{prompt}"
    content: list[dict[str, Any]] = [{"type": "image"} for _ in req.images]
    content.append({"type": "text", "text": prompt})
    messages.append({"role": "user", "content": content})
    return messages


class HFBackend(Backend):
    """Loads ``AutoProcessor`` + ``AutoModelForImageTextToText`` (``AutoModelForVision2Seq`` on old
    transformers) from a local directory or the local HF cache, on first use.

    ``generate()`` runs in a thread so the event loop keeps serving other agents, one call at a time
    (a lock) since one CPU model gains nothing from parallel calls. Calls cannot be interrupted, so
    the client applies no timeout to this backend. Token counts come from the processor's input ids
    and the generated ids.
    """

    name = "hf"
    interruptible = False

    def __init__(self, path_or_name: str, device: str = "cpu", dtype: str | None = None) -> None:
        try:
            import torch  # noqa: F401 - fail now, not at the first call
            import transformers  # noqa: F401
        except ImportError as exc:
            raise VLMError(f"hf backend needs transformers and torch: {INSTALL_HINT}") from exc
        if not path_or_name:
            raise VLMError("hf: spec needs a model directory or name, e.g. hf:/models/Qwen2-VL-2B-Instruct")
        self.model = path_or_name
        self.device = device
        self.dtype = dtype
        self._model: Any = None
        self._processor: Any = None
        self._load_error: VLMError | None = None  # a failed load is not retried on every call
        self._thread_lock = threading.Lock()  # guards loading and generate() across threads/loops
        self._queue: PerLoop[asyncio.Lock] = PerLoop(asyncio.Lock)

    def load(self) -> None:
        """Load processor and model (idempotent; blocking)."""
        with self._thread_lock:
            self._load_locked()

    async def probe(self, timeout_s: float) -> None:
        await asyncio.to_thread(self.load)

    def _load_locked(self) -> None:
        if self._model is not None:
            return
        if self._load_error is not None:
            raise self._load_error
        import torch
        import transformers

        auto_model = getattr(transformers, "AutoModelForImageTextToText", None) or getattr(
            transformers, "AutoModelForVision2Seq", None
        )
        if auto_model is None:
            raise VLMError(
                f"hf: transformers {transformers.__version__} has no image-text-to-text models; "
                f"{INSTALL_HINT}"
            )
        source = str(Path(self.model).expanduser()) if Path(self.model).expanduser().exists() else self.model
        kwargs: dict[str, Any] = {}
        if self.dtype:
            kwargs["dtype"] = getattr(torch, self.dtype)
        try:
            processor = transformers.AutoProcessor.from_pretrained(source)
            model = auto_model.from_pretrained(source, **kwargs)
        except (OSError, ValueError, KeyError) as exc:
            self._load_error = VLMError(
                f"hf: cannot load a vision-language model from {self.model!r}: {_first_line(exc)} "
                "(give a local model directory, or a name already in the Hugging Face cache)"
            )
            raise self._load_error from exc
        model.to(self.device)
        model.eval()
        self._processor, self._model = processor, model

    async def generate(self, req: VLMRequest, timeout_s: float) -> BackendReply:
        async with self._queue.get():
            return await asyncio.to_thread(self._generate_blocking, req)

    def _generate_blocking(self, req: VLMRequest) -> BackendReply:
        import torch

        with self._thread_lock:
            self._load_locked()
            processor, model = self._processor, self._model
            text = self._render_prompt(req)
            images = [to_pil(image) for image in req.images] or None
            inputs = processor(text=[text], images=images, return_tensors="pt").to(self.device)
            tokenizer = getattr(processor, "tokenizer", processor)
            sampling = bool(req.temperature and req.temperature > 0)
            options: dict[str, Any] = {"max_new_tokens": req.max_tokens, "do_sample": sampling}
            if sampling:
                options["temperature"] = req.temperature
            if getattr(tokenizer, "pad_token_id", None) is not None:
                options["pad_token_id"] = tokenizer.pad_token_id
            with torch.inference_mode():
                output = model.generate(**inputs, **options)
        prompt_len = int(inputs["input_ids"].shape[1])
        new_ids = output[0, prompt_len:].tolist()
        completion_tokens = _generated_length(new_ids, getattr(model.generation_config, "eos_token_id", None))
        reply = tokenizer.decode(new_ids[:completion_tokens], skip_special_tokens=True)
        return BackendReply(text=reply.strip(), prompt_tokens=prompt_len, completion_tokens=completion_tokens)

    def _render_prompt(self, req: VLMRequest) -> str:
        processor = self._processor
        if not getattr(processor, "chat_template", None):
            raise VLMError(f"hf: {self.model} has no chat template, so image placeholders cannot be placed")
        from jinja2 import TemplateError

        try:
            return processor.apply_chat_template(
                chat_messages(req), add_generation_prompt=True, tokenize=False
            )
        except TemplateError:
            # Some templates reject a system turn; fold the system text into the user turn instead.
            return processor.apply_chat_template(
                chat_messages(req, with_system=False), add_generation_prompt=True, tokenize=False
            )

    async def aclose(self) -> None:
        # Drop references only: taking the thread lock here could block the loop behind a generate().
        self._model = self._processor = None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _generated_length(ids: list[int], eos: int | list[int] | None) -> int:
    """Generated tokens up to and including the first end-of-sequence (padding after it excluded)."""
    stops = set(eos) if isinstance(eos, list) else ({eos} if eos is not None else set())
    for i, token in enumerate(ids):
        if token in stops:
            return i + 1
    return len(ids)
