"""Consoles for the command line: rich on a terminal, complete plain text when piped or redirected.

Rich lays everything out to the terminal's width, and when stdout is a file it still measures the
terminal behind stdin or stderr: ``compass runs list > f`` cut ids at 120 columns and
``compass skills show X > f.py`` wrote line-numbered, cropped code. Here a console that is not
writing to a terminal never wraps or crops, tables become tab-separated rows, markdown stays
markdown and code stays code.
"""

from __future__ import annotations

import logging
import traceback

from rich.console import Console as RichConsole
from rich.console import ConsoleDimensions
from rich.table import Table
from rich.text import Text

#: The width a console writing to a file or pipe lays out to: no line of ours is this long.
PIPE_WIDTH = 1_000_000


class Console(RichConsole):
    """A rich console that, when its output is not a terminal, lays out without a width limit."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal:
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def _plain(cell: object) -> str:
    text = cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain
    return " ".join(text.split())  # one row per line: no tab or newline inside a cell


def print_table(console: RichConsole, table: Table) -> None:
    """A table on a terminal; tab-separated lines (header first, cells whole) otherwise."""
    if console.is_terminal:
        console.print(table)
        return
    columns = table.columns
    lines = ["\t".join(_plain(c.header) for c in columns)]
    for row in zip(*(list(c.cells) for c in columns), strict=True):
        lines.append("\t".join(_plain(cell) for cell in row))
    console.file.write("\n".join(lines) + "\n")


def log_handler(console: RichConsole, level: int = logging.INFO) -> logging.Handler:
    """Log records on ``console``: rich's handler on a terminal, ``LEVEL message`` lines otherwise
    (rich's handler pads each record to the console's width, here unlimited)."""
    if console.is_terminal:
        from rich.logging import RichHandler

        handler: logging.Handler = RichHandler(
            console=console, show_time=False, show_path=False, markup=False, rich_tracebacks=False
        )
    else:
        handler = logging.StreamHandler(console.file)
        handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    handler.setLevel(level)
    return handler


def print_exception(console: RichConsole, exc: BaseException) -> None:
    """A traceback: rich's on a terminal, Python's plain one otherwise."""
    if console.is_terminal:
        from rich.traceback import Traceback

        console.print(Traceback.from_exception(type(exc), exc, exc.__traceback__))
        return
    console.file.write("".join(traceback.format_exception(exc)))


def print_markdown(console: RichConsole, text: str) -> None:
    """Rendered markdown on a terminal; the markdown itself (complete tables) otherwise."""
    if console.is_terminal:
        from rich.markdown import Markdown

        console.print(Markdown(text))
        return
    console.file.write(text.rstrip("\n") + "\n")


def print_code(console: RichConsole, text: str, lexer: str = "python", line_numbers: bool = True) -> None:
    """Highlighted code on a terminal; the text exactly as it is otherwise (``> skill.py`` parses)."""
    if console.is_terminal:
        from rich.syntax import Syntax

        console.print(
            Syntax(
                text, lexer, line_numbers=line_numbers, theme="ansi_dark" if lexer == "diff" else "monokai"
            )
        )
        return
    console.file.write(text if text.endswith("\n") else text + "\n")
