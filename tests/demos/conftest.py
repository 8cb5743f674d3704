"""Recorded demonstrations shared by the demos tests (recorded once per session: SMAX compiles are slow)."""

from __future__ import annotations

import pytest

from tests.fakes.fake_vlm_server import fake_vlm_server  # noqa: F401 - fixture re-export


@pytest.fixture(autouse=True)
def _keyless(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def heuristic_demos(tmp_path_factory):
    """Two short protoss episodes of SMAX's heuristic: ``(folder, headers)``."""
    from compass.demos.record import record_episodes

    out = tmp_path_factory.mktemp("demos")
    rows = record_episodes("smax:protoss_5_vs_5", "heuristic", 2, 3, out, max_steps=60)
    return out, rows
