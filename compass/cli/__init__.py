"""The ``compass`` command line: ``main.py`` (the app, ``run``, ``skills list|show|search|check``,
and ``COMMANDS``, every command module's ``register``), ``library.py`` (skill editing commands),
``errors.py`` (one ``fail()``, one ``report()``), ``config_file.py`` (``--config`` YAML).

``app`` and ``entrypoint`` are loaded on first use, so command modules elsewhere
(``compass/eval/cli.py``...) can import ``compass.cli.errors`` without building the app.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("app", "entrypoint"):
        from compass.cli import main

        return getattr(main, name)
    raise AttributeError(f"module 'compass.cli' has no attribute {name!r}")
