"""Errors raised by the VLM layer."""

from __future__ import annotations

from compass.core.errors import CompassError


class VLMError(CompassError, RuntimeError):
    """A VLM call (or client setup) failed for good; the message says what and how to fix it.

    Exit code 1 from every command (``docs/vlm.md``): without its model a run has no result."""

    exit_code = 1


class VLMFatalError(VLMError):
    """A failure after which the run's results would be meaningless (e.g. a replay trace that does
    not match the run): callers must not fall back, the run stops with a non-zero exit."""


class BackendError(Exception):
    """One failed attempt at a backend call, classified for the retry loop.

    Backends translate their SDK's exceptions into this; :class:`~compass.vlm.client.VLMClient`
    retries it when ``retryable`` and turns the last one into a :class:`VLMError`. Fakes may raise
    it to simulate outages.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after

    def describe(self) -> str:
        """``status 429: rate limit ...`` or just the message when there was no HTTP status."""
        return f"status {self.status}: {self}" if self.status is not None else str(self)


def is_retryable_status(status: int) -> bool:
    """429, 408 and every 5xx are worth retrying; other 4xx (bad request, auth) never are."""
    return status in (408, 429) or status >= 500


class MalformedReply(BackendError):
    """The server answered, but not with a usable completion (HTML, wrong shape, not text...).

    Always retryable: proxies and overloaded servers send such answers transiently.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(f"malformed response: {message}", status=status, retryable=True)


class EmptyReply(MalformedReply):
    """A well-formed completion with no text (``null`` content, no text blocks, only whitespace)."""

    def __init__(self, message: str = "the answer is empty") -> None:
        super().__init__(message)
