"""Local token counting, used only when a backend does not report usage.

tiktoken downloads its BPE files on first use and caches them (``TIKTOKEN_CACHE_DIR``). Without
network access and without a warm cache it cannot load them; then counts fall back to the common
approximation ``ceil(characters / 4)``, with one warning per process. Image tokens are not counted
by either method: only the API's own usage figures include them.
"""

from __future__ import annotations

import functools
import logging
import math
from typing import Any

log = logging.getLogger(__name__)

APPROXIMATION = "chars/4"

# Model families tokenised with o200k_base (everything newer than gpt-4-turbo).
_O200K_PREFIXES = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4")


def encoding_name(model: str) -> str:
    """The tiktoken encoding for ``model``: ``o200k_base`` for the gpt-4o family, else ``cl100k_base``."""
    return "o200k_base" if model.startswith(_O200K_PREFIXES) else "cl100k_base"


@functools.cache
def _encoding(name: str) -> Any | None:
    """The tiktoken encoding, or ``None`` (remembered) if it cannot be loaded here."""
    try:
        import tiktoken
    except ImportError:
        log.warning("tiktoken is not installed; counting tokens as %s", APPROXIMATION)
        return None
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # tiktoken surfaces requests, OS and value errors alike
        log.warning(
            "tiktoken cannot load %s (%s: %s); counting tokens as %s (offline?)",
            name,
            type(exc).__name__,
            exc,
            APPROXIMATION,
        )
        return None


def approx_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the rough English average for BPE tokenizers."""
    return math.ceil(len(text) / 4)


def count_tokens(text: str, model: str = "") -> int:
    """Tokens in ``text`` for ``model``: tiktoken when it can load, else :func:`approx_tokens`."""
    if not text:
        return 0
    encoding = _encoding(encoding_name(model))
    if encoding is None:
        return approx_tokens(text)
    return len(encoding.encode(text, disallowed_special=()))


def counting_method(model: str = "") -> str:
    """How :func:`count_tokens` counts for ``model`` here: an encoding name or ``chars/4``."""
    name = encoding_name(model)
    return name if _encoding(name) is not None else APPROXIMATION
