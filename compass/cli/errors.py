"""How the command line reports failures: one line, no traceback, unless ``compass --debug``.

Every command of the ``compass`` app (and of the groups other modules register on it) runs inside
:class:`ErrorReportingGroup.invoke`; whatever escapes a command becomes ``error: <what>`` on
stderr and a non-zero exit code. ``--debug`` lets the exception through, with its traceback.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, NoReturn

import typer
from rich.markup import escape
from typer.core import TyperGroup

from compass.util.console import Console, print_exception

try:  # typer >= 0.20 vendors click as typer._click; older typer uses click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException

import click

from compass.core.errors import USER_ERRORS, exit_code, is_expected

err = Console(stderr=True, soft_wrap=True)

__all__ = ["USER_ERRORS", "ErrorReportingGroup", "exit_code", "fail", "report", "set_debug"]


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
    return message if is_expected(exc) else f"{type(exc).__name__}: {message}"


def report(exc: BaseException) -> int:
    """Print ``exc`` as one ``error:`` line on stderr; the exit code it deserves
    (:func:`compass.core.errors.exit_code`)."""
    hint = "" if is_expected(exc) else " (run with --debug for the traceback)"
    err.print(f"[bold red]error:[/] {escape(describe(exc))}{hint}")
    return exit_code(exc)


def fail(message: str, code: int = 2, exc: BaseException | None = None) -> NoReturn:
    """End the command: ``error: <message>`` on one line of stderr, exit ``code``.

    With ``--debug`` the traceback of ``exc`` (default: the exception being handled) comes first.
    A fresh console each time: progress displays swap ``sys.stderr`` while they run.
    """
    exc = exc or sys.exc_info()[1]
    console = Console(stderr=True, soft_wrap=True)
    if state.debug and exc is not None:
        print_exception(console, exc)
    console.print(f"[bold red]error:[/] {escape(message)}")  # one line, however long
    raise typer.Exit(code)


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
