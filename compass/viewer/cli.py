"""``compass view [RUNS_DIR] [--library DIR] [--port N] [--host H]``."""

from __future__ import annotations

import errno
import secrets
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from compass.util.console import Console

err = Console(stderr=True)


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so a busy port is one line, not uvicorn's traceback."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as e:
        sock.close()
        hint = " (another compass server? pick another --port, or --port 0 for any free one)"
        busy = e.errno == errno.EADDRINUSE
        err.print(
            "[bold red]error:[/] "
            + escape(f"cannot listen on {host}:{port}: {e.strerror or e}{hint if busy else ''}")
        )
        raise typer.Exit(2) from None
    return sock


def serve(app: object, host: str, port: int, url: Callable[[str, int], str]) -> None:
    """Serve ``app`` on ``host:port`` until Ctrl-C; print ``url(shown_host, bound_port)`` once up.

    The socket is bound first (:func:`_listen`), so a busy port is one line; ``compass view`` and
    ``compass play`` both serve through here.
    """
    import asyncio

    import uvicorn

    sock = _listen(host, port)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host

    async def announce() -> None:
        while not server.started:
            await asyncio.sleep(0.05)
        err.print(url(shown, sock.getsockname()[1]))

    async def main() -> None:
        await asyncio.gather(server.serve(sockets=[sock]), announce())

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


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
        import uvicorn  # noqa: F401  (checked here, so the hint below names the extra)

        from compass.viewer.access import allowed_hosts
        from compass.viewer.app import create_app
    except ImportError as e:
        err.print(
            "[bold red]error:[/] "
            + escape(
                f"the viewer needs fastapi and uvicorn: pip install 'compass-agents[viewer]' "
                f"(from a checkout: pip install -e '.[viewer]') ({e})"
            )
        )
        raise typer.Exit(2) from None
    if not runs_dir.is_dir():
        err.print(f"[bold red]error:[/] no runs directory {escape(str(runs_dir))} (compass run writes runs/)")
        raise typer.Exit(2)
    if library is not None and not library.is_dir():
        err.print(f"[bold red]error:[/] no library root {escape(str(library))}")
        raise typer.Exit(2)
    from compass.viewer.access import is_loopback

    if not is_loopback(host) and not token:
        token = secrets.token_urlsafe(16)
    # The Host header must name the address served (DNS rebinding); a wildcard bind has no one
    # name, and there the token guards (compass/viewer/access.py).
    app = create_app(runs_dir, library, token, allowed_hosts(host))
    suffix = f"/?token={token}" if token else "/"
    serve(
        app,
        host,
        port,
        lambda shown, bound: f"compass viewer on http://{shown}:{bound}{suffix}  (Ctrl-C to stop)",
    )


def register(app: typer.Typer, skills: typer.Typer) -> None:
    """Add ``view`` to the ``compass`` command line."""
    app.command("view")(view_command)
