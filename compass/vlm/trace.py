"""The ``kind: "vlm"`` records of a run's ``trace.jsonl``, as written by runs and read by replay."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from compass.core.runformat import TRACE
from compass.vlm.keys import prompt_key
from compass.vlm.types import Completion, VLMRequest

log = logging.getLogger(__name__)

KIND = "vlm"


def vlm_trace_record(
    req: VLMRequest, completion: Completion, include_prompt: bool = False, **extra: Any
) -> dict[str, Any]:
    """One trace line for a VLM call; replay needs ``kind``, ``key_prompt`` and ``response``.

    ``extra`` (e.g. ``agent=3, step=12``) is merged in; ``include_prompt`` also stores the prompt
    and system text (not the images) for reading traces by eye.
    """
    record: dict[str, Any] = {
        "kind": KIND,
        "tag": req.tag,
        "key_prompt": prompt_key(req),
        "key": completion.key,
        "backend": completion.backend,
        "model": completion.model,
        "response": completion.text,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "latency_s": completion.latency_s,
        "cost_usd": completion.cost_usd,
        "cached": completion.cached,
        "n_images": len(req.images),
    }
    if include_prompt:
        record["system"] = req.system
        record["prompt"] = req.prompt
    record.update(extra)
    return record


def trace_path(run_dir: str | Path) -> Path:
    """``RUN_DIR/trace.jsonl``; a path to a ``.jsonl`` file is taken as is."""
    path = Path(run_dir).expanduser()
    return path if path.suffix == ".jsonl" else path / TRACE


def read_vlm_records(path: str | Path) -> list[dict[str, Any]]:
    """The ``kind == "vlm"`` records of a trace, in file order.

    Blank lines and other kinds are skipped; an unparsable line (e.g. the last line of a run that
    was killed mid-write) is skipped with a warning; a vlm record without ``key_prompt`` or
    ``response`` is an error, since replaying around it would silently shift answers.
    """
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                log.warning("%s:%d: unparsable trace line skipped (%s)", path, number, exc)
                continue
            if not isinstance(record, dict) or record.get("kind") != KIND:
                continue
            if not isinstance(record.get("key_prompt"), str) or not isinstance(record.get("response"), str):
                raise ValueError(
                    f"{path}:{number}: vlm record needs string fields 'key_prompt' and 'response'"
                )
            records.append(record)
    return records
