"""The base of the errors compass raises on purpose, and the one rule for the exit code they give.

``exit_code`` 2: the user asked for something that cannot be done (a bad path, spec or option; the
same code as a command-line usage error). 1: the request was fine, but the work failed so that its
result would be meaningless (a model that is absent or answers nothing usable, a replay that does
not match its run, a skill that fails its check). Every command ends through
:func:`compass.cli.errors.report` or :func:`compass.cli.errors.fail`, which apply :func:`exit_code`.
"""

from __future__ import annotations

#: Built-in exceptions that mean a bad request (a missing file, a bad value, an unknown name).
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, LookupError, ImportError)


class CompassError(Exception):
    """Base of compass's own errors; the message says what failed and where, in one line."""

    #: what the command line exits with (see the module docstring)
    exit_code: int = 2


def exit_code(exc: BaseException) -> int:
    """The exit code ``exc`` deserves: its own for a :class:`CompassError`, 2 for a bad request
    (:data:`USER_ERRORS`), 1 for anything else."""
    if isinstance(exc, CompassError):
        return exc.exit_code
    return 2 if isinstance(exc, USER_ERRORS) else 1


def is_expected(exc: BaseException) -> bool:
    """Whether ``exc`` is an error compass reports as such (its message is the news; no traceback hint)."""
    return isinstance(exc, (CompassError, *USER_ERRORS))
