"""JAX's persistent compilation cache, shared by every JAX environment adapter."""

from __future__ import annotations

import os


def enable_jax_cache() -> None:
    """Persist XLA compilations in ``$COMPASS_JAX_CACHE`` (default ``~/.cache/compass/jax``), so later
    processes skip the tens-of-seconds compiles. Idempotent."""
    import jax

    cache_dir = os.environ.get("COMPASS_JAX_CACHE", os.path.expanduser("~/.cache/compass/jax"))
    os.makedirs(cache_dir, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", cache_dir)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
