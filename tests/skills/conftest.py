from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compass.core.family import get_family


@pytest.fixture
def lib_root(tmp_path) -> Path:
    """A writable copy of the shipped combat library (no stats), as a library root."""
    root = tmp_path / "lib"
    shutil.copytree(
        get_family("combat").seed_skills_dir,
        root / "combat",
        ignore=shutil.ignore_patterns("_stats.json", "__pycache__"),
    )
    return root
