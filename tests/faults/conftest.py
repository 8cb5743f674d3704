"""Fixtures for the fault tests: offline and keyless, like the VLM tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from compass.vlm import tokens as vlm_tokens  # noqa: E402
from tests.fakes.fake_vlm_server import fake_vlm_server  # noqa: E402, F401 - fixture re-export


@pytest.fixture(autouse=True)
def _offline_and_keyless(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(vlm_tokens, "_encoding", lambda name: None)
