"""Fixtures for the VLM layer tests: the fake wire-format server, a PNG, fast client settings."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# The shared fakes live in tests/fakes; make the repo root importable however pytest was started.
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from compass.vlm import VLMConfig  # noqa: E402
from compass.vlm import tokens as vlm_tokens  # noqa: E402
from tests.fakes.fake_vlm_server import fake_vlm_server  # noqa: E402, F401 - fixture re-export
from tests.fakes.images import tiny_png  # noqa: E402

API_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


@pytest.fixture(autouse=True)
def _offline_and_keyless(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real keys or base URLs leak in, and local token counting never tries to download BPE files."""
    for name in API_KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(vlm_tokens, "_encoding", lambda name: None)


@pytest.fixture
def png() -> bytes:
    return tiny_png()


@pytest.fixture
def fast_config(tmp_path: Path) -> Callable[..., VLMConfig]:
    """``fast_config(**overrides)``: short timeout and millisecond backoff, so retry tests take no time."""

    def make(**overrides: Any) -> VLMConfig:
        settings: dict[str, Any] = {
            "timeout_s": 2.0,
            "max_retries": 3,
            "backoff_base_s": 0.001,
            "backoff_max_s": 0.5,
        }
        settings.update(overrides)
        return VLMConfig(**settings)

    return make
