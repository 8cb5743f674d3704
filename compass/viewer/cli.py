"""``compass view [RUNS_DIR] [--library DIR] [--port N] [--host H]``."""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

err = Console(stderr=True)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def view_command(
    runs_dir: Annotated[Path, typer.Argument(help="where run directories are (compass run --out)")] = Path(
        "runs"
    ),
    library: Annotated[
        Path | None,
        typer.Option(help="library root to browse and edit (default: the shipped seed skills, read-only)"),
    ] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="port (0: any free port)")] = 8765,
    host: Annotated[
        str, typer.Option(help="address to bind; other than loopback requires a token")
    ] = "127.0.0.1",
    token: Annotated[
        str | None, typer.Option(help="access token (generated when binding beyond loopback)")
    ] = None,
) -> None:
    """Browse runs (replays, decisions, prompts) and the skill library (search, edit, history) in a browser."""
    try:
        import uvicorn

        from compass.viewer.app import create_app
    except ImportError as e:
        err.print(
            f"[bold red]error:[/] the viewer needs fastapi and uvicorn: pip install -e '.[viewer]' ({escape(str(e))})"
        )
        raise typer.Exit(2) from None
    if not runs_dir.is_dir():
        err.print(f"[bold red]error:[/] no runs directory {escape(str(runs_dir))} (compass run writes runs/)")
        raise typer.Exit(2)
    if library is not None and not library.is_dir():
        err.print(f"[bold red]error:[/] no library root {escape(str(library))}")
        raise typer.Exit(2)
    if not _loopback(host) and not token:
        token = secrets.token_urlsafe(16)
    app = create_app(runs_dir, library, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host

    async def announce() -> None:
        import asyncio

        while not server.started:
            await asyncio.sleep(0.05)
        bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
        suffix = f"/?token={token}" if token else "/"
        err.print(f"compass viewer on http://{shown}:{bound}{suffix}  (Ctrl-C to stop)")

    import asyncio

    async def main() -> None:
        await asyncio.gather(server.serve(), announce())

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


def register(app: typer.Typer, skills: typer.Typer) -> None:
    """Add ``view`` to the ``compass`` command line."""
    app.command("view")(view_command)
