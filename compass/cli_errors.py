"""How the command line reports failures: one line, no traceback, unless ``compass --debug``.

Every command of the ``compass`` app (and of the groups other modules register on it) runs inside
:class:`ErrorReportingGroup.invoke`; whatever escapes a command becomes ``error: <what>`` on
stderr and a non-zero exit code. ``--debug`` lets the exception through, with its traceback.
"""

from __future__ import annotations

import logging
from typing import Any

import typer
from rich.markup import escape
from typer.core import TyperGroup

from compass.util.console import Console

try:  # typer >= 0.20 vendors click as typer._click; older typer uses click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException

import click

err = Console(stderr=True, soft_wrap=True)

#: Exceptions that mean the user asked for something that cannot be done (bad path, bad spec...);
#: they exit with 2 like option errors, anything else with 1.
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, LookupError, ImportError)


class _State:
    debug = False


state = _State()


def set_debug(debug: bool) -> None:
    """Called by the app's callback: show tracebacks (and debug logs) from here on."""
    state.debug = debug
    if debug:
        logging.basicConfig(level=logging.DEBUG)


def describe(exc: BaseException) -> str:
    """One line naming what failed: the message, prefixed by the type where the type is the news."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, USER_ERRORS) or type(exc).__name__ in ("VLMError", "SkillError"):
        return message
    return f"{type(exc).__name__}: {message}"


def report(exc: BaseException) -> int:
    """Print ``exc`` as one ``error:`` line on stderr; the exit code it deserves."""
    user = isinstance(exc, USER_ERRORS) or type(exc).__name__ == "VLMError"
    hint = "" if user else " (run with --debug for the traceback)"
    err.print(f"[bold red]error:[/] {escape(describe(exc))}{hint}")
    return 2 if user else 1


class ErrorReportingGroup(TyperGroup):
    """A Typer group whose commands never end in a traceback (see the module docstring)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (
            typer.Exit,
            typer.Abort,
            ClickException,
            click.exceptions.Exit,
            click.ClickException,
            click.Abort,
        ):
            raise  # typer.Exit, usage errors: already reported well
        except Exception as exc:
            if state.debug:
                raise
            raise typer.Exit(report(exc)) from None
