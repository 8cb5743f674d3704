"""One check of what a backend got back, shared by every backend.

SDK response objects are built without validation, so a proxy's HTML page, a ``null`` answer or a
body of another shape used to surface as ``AttributeError``/``TypeError`` far from the call, or as
an empty answer passed on as if the model had said nothing. Each backend reads its response inside
:func:`reading` and passes the text through :func:`answer_text`; everything wrong becomes a typed,
retryable :class:`~compass.vlm.errors.MalformedReply`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from compass.vlm.errors import EmptyReply, MalformedReply


def expect_object(response: Any, what: str) -> Any:
    """``response`` unless the SDK handed back raw text (it does for a non-JSON content type)."""
    if isinstance(response, str | bytes):
        preview = " ".join(str(response[:80]).split())
        raise MalformedReply(f"expected a {what} object, got text: {preview!r}")
    if response is None:
        raise MalformedReply(f"expected a {what} object, got nothing")
    return response


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Read fields of a response inside this: a missing field or a wrong type is a MalformedReply."""
    try:
        yield
    except MalformedReply:
        raise
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        raise MalformedReply(f"{what} has an unexpected shape ({type(exc).__name__}: {exc})") from exc


def answer_text(text: Any) -> str:
    """The answer's text; an :class:`EmptyReply` for ``None``/blank, a MalformedReply for non-text."""
    if text is None:
        raise EmptyReply("the answer is null")
    if not isinstance(text, str):
        raise MalformedReply(f"the answer is {type(text).__name__}, not text")
    if not text.strip():
        raise EmptyReply()
    return text


def token_count(value: Any) -> int | None:
    """A usage count if it is a non-negative int (servers send strings, nulls, floats...)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
