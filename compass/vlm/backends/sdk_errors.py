"""Translating the openai/anthropic SDK exceptions (same shape in both) into BackendError."""

from __future__ import annotations

import email.utils
import json
import time
from types import ModuleType
from typing import Any

from compass.vlm.errors import BackendError, is_retryable_status


def retry_after_s(headers: Any) -> float | None:
    """Seconds asked for by ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date), if any."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass  # malformed header: fall through to Retry-After
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return max(email.utils.mktime_tz(parsed) - time.time(), 0.0) if parsed else None


def _status_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", "") or exc)


def to_backend_error(exc: BaseException, sdk: ModuleType) -> BackendError | None:
    """The :class:`BackendError` for an exception raised by ``sdk``'s client, or ``None`` if foreign."""
    if isinstance(exc, sdk.APITimeoutError):
        return BackendError("request timed out (SDK timeout)", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return BackendError(f"connection error: {exc}", retryable=True)
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        return BackendError(
            _status_detail(exc),
            status=status,
            retryable=is_retryable_status(status),
            retry_after=retry_after_s(getattr(exc.response, "headers", None)),
        )
    if isinstance(exc, sdk.APIResponseValidationError):
        return BackendError(
            f"malformed response: {exc}", status=getattr(exc, "status_code", None), retryable=True
        )
    if isinstance(exc, json.JSONDecodeError):
        # The SDKs let a truncated/garbled 200 body escape as a bare JSONDecodeError.
        return BackendError(f"response body is not valid JSON (truncated?): {exc}", retryable=True)
    return None
