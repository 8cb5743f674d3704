"""Fixtures shared by the sandbox tests."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from compass.core.family import get_family


@pytest.fixture(scope="module")
def view():
    """A recorded combat view of a living unit that sees an enemy (agent 0)."""
    fam = get_family("combat")
    records = [json.loads(x) for x in fam.observations_path.read_text().splitlines() if x.strip()]
    text = next(r["text"] for r in records if r["alive"] and "Enemy #" in r["text"])
    return replace(fam.view_from_text(text), agent_id=0)
