"""Shared fixtures: compiled environments and the shipped library are built once per session."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def smax_protoss():
    """One protoss 5v5 SMAX env (jitted once; episodes reset it)."""
    from compass.games.combat.smax import SmaxEnv

    return SmaxEnv("protoss_5_vs_5")


@pytest.fixture(scope="session")
def combat_library():
    """The shipped combat library (read-only in tests)."""
    from compass.skills.library import SkillLibrary

    return SkillLibrary(None, "combat")
