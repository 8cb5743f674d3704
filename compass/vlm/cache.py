"""On-disk response cache: one JSON file per request key."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from compass.util.atomic import atomic_write_text

log = logging.getLogger(__name__)

_REQUIRED = {"text": str, "prompt_tokens": int, "completion_tokens": int}


class ResponseCache:
    """Stores replies under ``root/<key[:2]>/<key>.json``.

    Writes are atomic (temporary file in the same directory, then ``os.replace``), so concurrent
    writers and crashes never leave half a file behind. A file that cannot be read or parsed is a
    miss with a warning, never an exception.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser()

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives (sharded by its first two hex characters)."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record for ``key``, or ``None`` on a miss or an unreadable entry."""
        path = self.path(key)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("vlm cache: cannot read %s (%s); treating as a miss", path, exc)
            return None
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            log.warning("vlm cache: corrupt entry %s (%s); treating as a miss", path, exc)
            return None
        problem = _validate(record, key)
        if problem:
            log.warning("vlm cache: invalid entry %s (%s); treating as a miss", path, problem)
            return None
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` for ``key`` atomically; failures are logged, not raised."""
        path = self.path(key)
        payload = {**record, "key": key, "stored_at": time.time()}
        try:
            atomic_write_text(path, json.dumps(payload, ensure_ascii=False))
        except (OSError, TypeError, ValueError) as exc:
            # A cache that cannot be written only costs money later; the call itself succeeded.
            log.warning("vlm cache: cannot write %s (%s)", path, exc)


def _validate(record: Any, key: str) -> str | None:
    if not isinstance(record, dict):
        return "not a JSON object"
    for name, kind in _REQUIRED.items():
        if not isinstance(record.get(name), kind):
            return f"field {name!r} missing or not {kind.__name__}"
    if record.get("key", key) != key:
        return "stored under another key"
    return None
