"""JAX's persistent compilation cache, shared by every JAX environment adapter."""

from __future__ import annotations

import logging
import os


def enable_jax_cache() -> None:
    """Persist XLA compilations in ``$COMPASS_JAX_CACHE`` (default ``~/.cache/compass/jax``), so later
    processes skip the tens-of-seconds compiles. Idempotent."""
    import jax

    cache_dir = _cache_dir()
    os.makedirs(cache_dir, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", cache_dir)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


def _cache_dir() -> str:
    return os.environ.get("COMPASS_JAX_CACHE", os.path.expanduser("~/.cache/compass/jax"))


def note_compile(what: str, seconds: int) -> None:
    """Say on the console (the ``compass`` logger, INFO) that ``what`` is being compiled and how
    long that takes, so a first use does not look hung. ``seconds``: measured on a quiet machine
    with a warm compilation cache (issue 25: SMAX 4 s, ALEM 19 s); more under load, and more on a
    machine's first run, whose compilation cache is still empty."""
    try:
        cold = not any(os.scandir(_cache_dir()))
    except OSError:
        cold = True
    extra = "; longer now: the compilation cache is empty" if cold else ", longer under load"
    logging.getLogger("compass.compile").info("compiling %s (first use, ~%d s%s)", what, seconds, extra)
