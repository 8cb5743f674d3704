"""``replay:RUN_DIR``: answer from a recorded run's ``trace.jsonl`` instead of a model."""

from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

from compass.core.runformat import TRACE, RunFiles, RunFormatError, read_manifest
from compass.vlm.backends.base import Backend, BackendReply
from compass.vlm.errors import VLMError, VLMFatalError
from compass.vlm.keys import prompt_key
from compass.vlm.trace import read_vlm_records, trace_path
from compass.vlm.types import VLMRequest

log = logging.getLogger(__name__)


class ReplayBackend(Backend):
    """Serves recorded responses matched by :func:`~compass.vlm.keys.prompt_key`.

    A prompt asked several times gets its recorded answers in recorded order; once they are used
    up the last one is repeated (with a warning once), so a replay that runs a step further than
    the recording still finishes. A prompt that was never recorded is a :class:`VLMError`.
    Replies bypass the response cache, which would otherwise freeze the first of several answers.
    """

    name = "replay"
    cacheable = False

    def __init__(self, run_dir: str | Path) -> None:
        path = trace_path(run_dir)
        manifest = RunFiles(path.parent).manifest
        if path.name == TRACE and manifest.exists():
            try:
                read_manifest(path.parent)  # a run of a newer format is refused, not misread
            except (OSError, RunFormatError) as exc:
                raise VLMError(f"replay: {exc}") from None
        if not path.is_file():
            raise VLMError(f"replay: no trace at {path} (expected RUN_DIR/trace.jsonl)")
        try:
            records = read_vlm_records(path)
        except (OSError, ValueError) as exc:
            raise VLMError(f"replay: cannot read {path}: {exc}") from exc
        self.path = path
        self.model = str(path.parent if path.name == TRACE else path)
        self._answers: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            self._answers[record["key_prompt"]].append(record)
        self.structured = _recorded_structured(path)
        self._served: dict[str, int] = defaultdict(int)
        self._warned: set[str] = set()

    async def probe(self, timeout_s: float) -> None:
        if not self._answers:
            raise VLMError(f"replay: {self.path} records no VLM calls, so there is nothing to replay")

    def __len__(self) -> int:
        return sum(len(answers) for answers in self._answers.values())

    async def generate(self, req: VLMRequest, timeout_s: float) -> BackendReply:
        key = prompt_key(req)
        answers = self._answers.get(key)
        if not answers:
            # Fatal: falling back would turn a replay that does not match into a different run.
            raise VLMFatalError(
                f"replay: no recorded answer for prompt {key[:12]} (tag {req.tag!r}) in {self.path}; "
                "the run does not match the recording (same env, seed, config, library and --vlm-output?)"
            )
        index = self._served[key]
        self._served[key] = index + 1
        if index >= len(answers) and key not in self._warned:
            self._warned.add(key)
            log.warning(
                "replay: prompt %s (tag %r) asked more often than recorded (%d); repeating the last answer",
                key[:12],
                req.tag,
                len(answers),
            )
        record = answers[min(index, len(answers) - 1)]
        return BackendReply(
            text=record["response"],
            prompt_tokens=_int_or_none(record.get("prompt_tokens")),
            completion_tokens=_int_or_none(record.get("completion_tokens")),
        )


def _recorded_structured(path: Path) -> bool:
    """Whether the recorded run asked for JSON answers (its ``run_start`` line says), so that
    ``--vlm-output auto`` replays it in the same mode."""
    import json

    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if '"run_start"' not in line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                return False
            return bool(record.get("structured_output", False))
    return False


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
