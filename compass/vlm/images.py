"""Image helpers: frames to PNG bytes, PNG bytes to base64 and back."""

from __future__ import annotations

import base64
import io
from typing import Any


def to_png(image: Any) -> bytes:
    """PNG bytes from an ``(H, W, 3|4)`` uint8 array, a PIL image, or PNG bytes (returned as is)."""
    if isinstance(image, bytes | bytearray):
        return bytes(image)
    from PIL import Image  # pillow is a core dependency; imported here to keep import light

    if not isinstance(image, Image.Image):
        import numpy as np

        array = np.asarray(image)
        if array.dtype != np.uint8:
            raise TypeError(f"to_png: expected a uint8 array, got {array.dtype}")
        image = Image.fromarray(array)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def to_base64(png: bytes) -> str:
    """Base64 text of the image, as both chat APIs expect inside JSON."""
    return base64.b64encode(png).decode("ascii")


def data_url(png: bytes) -> str:
    """``data:image/png;base64,...`` for OpenAI-style ``image_url`` parts."""
    return f"data:image/png;base64,{to_base64(png)}"


def to_pil(png: bytes) -> Any:
    """A PIL RGB image from PNG (or any Pillow-readable) bytes."""
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB")
