"""``compass play --env FAMILY:SCENARIO [--unit N] [--team SPEC] [--pace turn|FPS] [--port P]``."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

err = Console(stderr=True)


def parse_pace(text: str) -> float | None:
    """``turn`` (None: wait for the person) or a frame rate in steps per second."""
    if text.strip().lower() == "turn":
        return None
    try:
        fps = float(text)
    except ValueError:
        raise ValueError(f"--pace {text!r}: write 'turn' or a frame rate such as 4") from None
    if not 0 < fps <= 60:
        raise ValueError(f"--pace {text}: a frame rate must be above 0 and at most 60")
    return fps


def play_command(
    env: Annotated[str, typer.Option(help="FAMILY:SCENARIO, e.g. smax:protoss_5_vs_5 or alem:default")],
    unit: Annotated[int, typer.Option(min=0, help="the allied unit the person controls")] = 0,
    team: Annotated[
        str, typer.Option(help="who controls the other units: any compass eval team spec")
    ] = "compass",
    pace: Annotated[str, typer.Option(help="'turn' (wait for the person) or steps per second")] = "turn",
    episodes: Annotated[int, typer.Option(min=1, help="episodes per participant, in a row")] = 1,
    seed: Annotated[int, typer.Option(help="seed of the first episode (episode k: seed + k)")] = 0,
    max_steps: Annotated[int | None, typer.Option(min=1, help="steps per episode")] = None,
    out: Annotated[Path, typer.Option(help="where run directories are written")] = Path("runs"),
    library: Annotated[Path | None, typer.Option(help="library root for the agents")] = None,
    planner: Annotated[str, typer.Option(help="the 'compass' kind's planner: library or vlm")] = "library",
    vlm: Annotated[str | None, typer.Option(help="model spec for planner vlm")] = None,
    epo: Annotated[bool, typer.Option(help="egocentric partial observability")] = False,
    instructions: Annotated[
        Path | None, typer.Option(help="a text file shown on the instructions page")
    ] = None,
    abandon_after: Annotated[
        float, typer.Option(min=2.0, help="seconds without contact before an episode is abandoned")
    ] = 30.0,
    max_players: Annotated[int, typer.Option(min=1, help="people playing at once")] = 4,
    port: Annotated[int, typer.Option(min=0, max=65535, help="port (0: any free port)")] = 8766,
    host: Annotated[
        str, typer.Option(help="address to bind; other than loopback requires a token")
    ] = "127.0.0.1",
    token: Annotated[
        str | None, typer.Option(help="access token (generated when binding beyond loopback)")
    ] = None,
) -> None:
    """A person controls one allied unit in the browser while compass agents control the rest;
    every sitting is recorded as a run (docs/play.md)."""
    try:
        import uvicorn  # noqa: F401  (checked here, so the hint below names the extra)

        from compass.play.app import create_play_app
    except ImportError as e:
        raise ValueError(
            "compass play needs fastapi and uvicorn: pip install 'compass-agents[viewer]' "
            f"(from a checkout: pip install -e '.[viewer]') ({e})"
        ) from None
    from compass.play.study import PlaySettings, check_settings
    from compass.viewer.access import allowed_hosts, is_loopback
    from compass.viewer.cli import serve

    if planner not in ("library", "vlm"):
        raise ValueError(f"--planner {planner!r}: library or vlm")
    if instructions is not None and not instructions.is_file():
        raise FileNotFoundError(f"--instructions {instructions}: no such file")
    settings = PlaySettings(
        env=env,
        unit=unit,
        team=team,
        pace=parse_pace(pace),
        episodes=episodes,
        seed=seed,
        max_steps=max_steps,
        out=out,
        library=library,
        planner=planner,
        vlm=vlm,
        epo=epo,
        abandon_after=abandon_after,
        instructions=instructions.read_text(encoding="utf-8") if instructions else None,
    )
    facts = check_settings(settings)
    if not is_loopback(host) and not token:
        token = secrets.token_urlsafe(16)
    app = create_play_app(settings, facts, token, allowed_hosts(host), max_players)
    query = f"?token={token}&participant=ID" if token else "?participant=ID"
    serve(
        app,
        host,
        port,
        lambda shown, bound: (
            f"compass play on http://{shown}:{bound}/play{query}  (runs in {out}; Ctrl-C to stop)"
        ),
    )


def register(app: typer.Typer, skills: typer.Typer) -> None:
    """Add ``play`` to the ``compass`` command line."""
    app.command("play")(play_command)
