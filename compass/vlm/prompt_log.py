"""``--log-prompts``: what the model saw and said, stored under the run directory.

Every file is content-addressed and written once (``prompts/<prompt key>.txt``,
``images/<sha256>.png``, ``responses/<sha256>.txt``), so a prompt asked a hundred times is stored
once, the paths are a pure function of the content (the trace stays byte-identical) and a viewer
can open the files a trace line links to.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from compass.util.atomic import atomic_write_bytes
from compass.vlm.keys import image_hash, prompt_key
from compass.vlm.types import VLMRequest


class PromptLog:
    """Writes prompts, images and responses below ``run_dir``; paths returned are relative to it."""

    def __init__(self, run_dir: str | Path) -> None:
        self.root = Path(run_dir)
        self._lock = threading.Lock()
        self._written: set[str] = set()

    def _once(self, rel: str, data: bytes) -> str:
        with self._lock:
            if rel in self._written:
                return rel
            self._written.add(rel)
        path = self.root / rel
        if not path.exists():
            atomic_write_bytes(path, data)
        return rel

    def prompt(self, req: VLMRequest) -> dict[str, Any]:
        """Store the prompt text (with system text and answer schema) and images; their paths."""
        parts = []
        if req.system:
            parts.append(f"### system\n{req.system}\n")
        parts.append(f"### prompt\n{req.prompt}\n")
        if req.schema is not None:
            parts.append(
                f"### schema ({req.schema_name})\n{json.dumps(req.schema, indent=2, sort_keys=True)}\n"
            )
        links: dict[str, Any] = {
            "prompt": self._once(f"prompts/{prompt_key(req)}.txt", "\n".join(parts).encode("utf-8"))
        }
        if req.images:
            links["images"] = [self._once(f"images/{image_hash(png)}.png", png) for png in req.images]
        return links

    def response(self, text: str) -> str:
        """Store one raw response; its path."""
        data = text.encode("utf-8")
        return self._once(f"responses/{hashlib.sha256(data).hexdigest()}.txt", data)
