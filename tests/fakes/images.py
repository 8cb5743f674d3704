"""Small deterministic PNGs for tests."""

from __future__ import annotations

import io


def tiny_png(color: tuple[int, int, int] = (200, 30, 30), size: tuple[int, int] = (32, 24)) -> bytes:
    """A solid-colour RGB PNG (``size`` is width, height)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()
