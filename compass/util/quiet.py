"""Importing chatty third-party packages without their prints, and without losing our streams."""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType


def import_quietly(name: str) -> ModuleType:
    """Import ``name`` with its import-time prints discarded (jaxmarl prints "Submoduled
    environments not found" on stdout, into a piped result). Whatever sys.stdout and sys.stderr
    were stay so afterwards: jaxmarl's mabrax module resets them to the process's original
    streams, which took output away from a redirected stdout (CliRunner, pytest capture)."""
    if name in sys.modules:
        return sys.modules[name]
    saved = sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__
    try:
        with open(os.devnull, "w") as devnull:
            # the originals too: mabrax "restores" to them halfway through jaxmarl's import
            sys.stdout = sys.stderr = sys.__stdout__ = sys.__stderr__ = devnull
            return importlib.import_module(name)
    finally:
        sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__ = saved
