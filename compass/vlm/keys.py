"""Content keys: the cache key of a request and its backend-independent prompt key."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from compass.vlm.types import VLMRequest


def image_hash(image: bytes) -> str:
    """sha256 hex digest of one image's bytes."""
    return hashlib.sha256(image).hexdigest()


def _digest(payload: dict[str, Any]) -> str:
    # Canonical JSON: sorted keys, no whitespace, so equal requests always hash equally.
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def prompt_key(req: VLMRequest) -> str:
    """sha256 over (system, prompt, image hashes): what was asked, whoever answered.

    The replay backend matches recorded answers by this key, so a run recorded with one model can
    be replayed under any spec.
    """
    return _digest(
        {
            "system": req.system,
            "prompt": req.prompt,
            "images": [image_hash(image) for image in req.images],
        }
    )


def request_key(backend: str, model: str, req: VLMRequest) -> str:
    """sha256 over (backend, model, system, prompt, image hashes, max_tokens, temperature[, schema]).

    This is the response-cache key and ``Completion.key``. Pass a request whose ``max_tokens``
    and ``temperature`` are filled in (:meth:`VLMRequest.with_defaults`), so that a default
    spelled out and a default left implicit share a key. ``tag`` is deliberately left out.
    """
    payload: dict[str, Any] = {
        "backend": backend,
        "model": model,
        "system": req.system,
        "prompt": req.prompt,
        "images": [image_hash(image) for image in req.images],
        "max_tokens": req.max_tokens,
        "temperature": None if req.temperature is None else float(req.temperature),
    }
    if req.schema is not None:  # only when set, so text-mode keys stay what they were
        payload["schema"] = {"name": req.schema_name, "schema": req.schema}
    return _digest(payload)
