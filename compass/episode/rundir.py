"""Run directories that never collide, with a manifest that says what the run was and how it ended.

A run id is ``<readable part>-<UTC timestamp>-<random hex>``; the readable part names env, planner,
backend and model, output mode, EPO, comm and ablation switches. The directory is created with
``mkdir(exist_ok=False)`` (atomic), so two runs started in the same second, even with the same
configuration, get two directories. ``manifest.json`` holds the full configuration and a
``status`` of ``running``, ``complete`` or ``failed`` (with the error).
"""

from __future__ import annotations

import re
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compass.config import RunConfig
from compass.core.runformat import FORMAT_VERSION, MANIFEST, read_manifest
from compass.util.atomic import atomic_write_json

__all__ = ["create_run_dir", "finish_manifest", "read_manifest", "readable_id", "write_manifest"]


def _clean(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.-")[:limit] or "x"


def readable_id(cfg: RunConfig, structured: bool | None = None) -> str:
    """The human-readable part of a run id: what was run, with which switches."""
    parts = [_clean(cfg.env.replace(":", "-"), 60), cfg.planner]
    if cfg.planner == "vlm" and cfg.vlm:
        prefix, _, model = cfg.vlm.partition(":")
        model = model.split("?")[0].split("@")[0].rstrip("/")
        parts.append(f"{prefix}-{_clean(Path(model).name or model, 32)}")
        if structured is not None:
            parts.append("json" if structured else "text")
        if not cfg.reflection:
            parts.append("norefl")
        if not cfg.image:
            parts.append("noimg")
    if cfg.epo:
        parts.append("epo")
    if cfg.comm != "multihop":
        parts.append(f"comm_{_clean(cfg.comm, 20)}")
    parts.append(f"s{cfg.seed}")
    return "-".join(parts)


def create_run_dir(cfg: RunConfig, structured: bool | None = None) -> Path:
    """Create this run's directory atomically and return it.

    With ``cfg.run_id`` that exact directory is created (an existing one is an error, never
    reused); otherwise a fresh unique id is made.
    """
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.run_id:
        path = out / cfg.run_id
        try:
            path.mkdir()
        except FileExistsError:
            raise FileExistsError(
                f"run directory {path} already exists; choose another --run-id (or leave it out)"
            ) from None
        return path
    base = readable_id(cfg, structured)
    for _ in range(100):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path = out / f"{base}-{stamp}-{secrets.token_hex(3)}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"could not create a fresh run directory under {out}")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_manifest(run_dir: Path, cfg: RunConfig, **fields: Any) -> dict[str, Any]:
    """Write ``manifest.json`` (status ``running``) with the full configuration."""
    manifest = {
        "format_version": FORMAT_VERSION,
        "run_id": run_dir.name,
        "status": "running",
        "started": _now(),
        "config": cfg.model_dump(mode="json"),
        **fields,
    }
    atomic_write_json(run_dir / MANIFEST, manifest)
    return manifest


def finish_manifest(run_dir: Path, manifest: dict[str, Any], error: BaseException | None = None) -> None:
    """Mark the run ``complete``, or ``failed`` with the error's one-line description."""
    manifest = dict(manifest, finished=_now())
    if error is None:
        manifest["status"] = "complete"
    else:
        manifest["status"] = "failed"
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        manifest["error"] = f"{type(error).__name__}: {message}" if message else type(error).__name__
    atomic_write_json(run_dir / MANIFEST, manifest)
