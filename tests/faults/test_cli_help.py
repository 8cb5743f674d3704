"""The command line's help says what the source says: rich markup in help texts would eat
bracketed parts such as ``[@URL]`` or ``[default: 16]`` (they look like tags)."""

from __future__ import annotations

import click
import typer
from rich.text import Text
from typer.testing import CliRunner

from compass.cli import app


def _helps(command: click.Command, path: str = "compass"):
    yield path, command.help or ""
    for p in command.params:
        yield f"{path} {p.name}", getattr(p, "help", None) or ""
    for name, sub in getattr(command, "commands", {}).items():
        yield from _helps(sub, f"{path} {name}")


def test_no_help_text_loses_a_bracketed_part_to_markup():
    helps = list(_helps(typer.main.get_command(app)))
    assert len(helps) > 100  # every command and option
    eaten = {where: text for where, text in helps if Text.from_markup(text).plain != text.replace("\\[", "[")}
    assert not eaten, eaten


def test_help_shows_vlm_urls_and_the_batch_default():
    from compass.eval.driver import DEFAULT_BATCH

    wide = {"COLUMNS": "250"}
    run = CliRunner().invoke(app, ["run", "--help"], env=wide).output
    assert "openai:MODEL[@URL][?dialect=...], anthropic:MODEL[@URL]" in run
    ev = CliRunner().invoke(app, ["eval", "--help"], env=wide).output
    assert f"1: one by one) [default: {DEFAULT_BATCH}]" in ev
