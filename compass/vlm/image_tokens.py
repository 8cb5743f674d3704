"""Estimated prompt tokens of an image, by each provider's published rule.

Used only when a backend does not report usage (reported usage always wins). The rules:

- OpenAI (vision guide, "Calculating costs"): ``detail="low"`` costs the model's base tokens;
  ``"high"`` first fits the image in 2048x2048, then scales its shortest side down to 768, and
  costs base + per-tile tokens for each 512 px tile. Base/tile are 85/170 for gpt-4o, gpt-4.1,
  gpt-4.5, o1 and o3, and 2833/5667 for gpt-4o-mini (billed at its lower price, so the cost is
  alike). ``"auto"`` lets the API choose; it is estimated as ``"high"`` (the upper bound).
- Anthropic (vision docs, "Calculate image costs"): an image whose long edge exceeds 1568 px is
  scaled down to it first; tokens = width x height / 750. There is no detail setting.
- Anything else (self-hosted servers, local models): unknown here, counted as 0 and labelled so.
"""

from __future__ import annotations

import math
import struct

DETAILS = ("low", "high", "auto")

# (base tokens, tokens per 512 px tile); the longest matching prefix wins.
_OPENAI_TILE_RULES: dict[str, tuple[int, int]] = {
    "gpt-4o-mini": (2833, 5667),
    "gpt-4o": (85, 170),
    "chatgpt-4o": (85, 170),
    "gpt-4.1": (85, 170),
    "gpt-4.5": (85, 170),
    "gpt-4-turbo": (85, 170),
    "o1": (85, 170),
    "o3": (85, 170),
}
_DEFAULT_TILE_RULE = (85, 170)


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk; ValueError for anything that is not a PNG."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    return struct.unpack(">II", png[16:24])


def openai_rule(model: str) -> tuple[tuple[int, int], str]:
    """(base, tile) tokens for ``model`` and which rule matched (``gpt-4o`` rule for unknown models)."""
    matches = [name for name in _OPENAI_TILE_RULES if model.startswith(name)]
    if not matches:
        return _DEFAULT_TILE_RULE, "gpt-4o rule (model not in the table)"
    name = max(matches, key=len)
    return _OPENAI_TILE_RULES[name], f"{name} rule"


def openai_image_tokens(width: int, height: int, model: str, detail: str) -> int:
    """Tokens OpenAI bills for one image of ``width`` x ``height`` sent with ``detail``."""
    if detail not in DETAILS:
        raise ValueError(f"image detail must be one of {', '.join(DETAILS)}, got {detail!r}")
    (base, tile), _ = openai_rule(model)
    if detail == "low":
        return base
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return base + tile * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    """Tokens Anthropic bills for one image (long edge capped at 1568 px first)."""
    w, h = float(width), float(height)
    if max(w, h) > 1568:
        scale = 1568 / max(w, h)
        w, h = w * scale, h * scale
    return math.ceil(w * h / 750)


def image_tokens(
    provider: str, model: str, png: bytes, detail: str = "low", self_hosted: bool = False
) -> int | None:
    """Estimated tokens of one PNG sent to ``provider`` (``openai``/``anthropic``); None if unknown.

    ``self_hosted``: an OpenAI-compatible server; OpenAI's rule applies there only to OpenAI's
    own model names (a local Qwen2-VL tokenises images its own way).
    """
    width, height = png_size(png)
    if provider == "openai":
        if self_hosted and not any(model.startswith(name) for name in _OPENAI_TILE_RULES):
            return None
        return openai_image_tokens(width, height, model, detail)
    if provider == "anthropic":
        return anthropic_image_tokens(width, height)
    return None


def image_rule(provider: str, model: str, detail: str = "low") -> str:
    """A short label of the rule :func:`image_tokens` applies (for reports)."""
    if provider == "openai":
        return f"openai {openai_rule(model)[1]}, detail={detail}"
    if provider == "anthropic":
        return "anthropic w*h/750"
    return "not estimated (provider publishes no rule)"
