"""A live ``compass play`` server (the viewer's app with the play pages) in a thread of this process."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import httpx
import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(settings, max_players: int = 4):
    """Serve ``settings`` on 127.0.0.1 (Host check on, as ``compass play`` does); yields the base URL
    and the app (its ``state.sittings``)."""
    import uvicorn

    from compass.play.app import create_play_app
    from compass.play.study import check_settings
    from compass.viewer.access import allowed_hosts

    app = create_play_app(settings, check_settings(settings), None, allowed_hosts("127.0.0.1"), max_players)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", log_config=None)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "play server did not start"
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        for s in app.state.sittings.values():
            s.leave("test over")
        for s in app.state.sittings.values():
            s.join(timeout=30)
        server.should_exit = True
        thread.join(timeout=10)


class Player:
    """A person's page, as plain HTTP: start a sitting, wait for states, act."""

    def __init__(self, url: str, participant: str = "") -> None:
        self.http = httpx.Client(base_url=url, timeout=120)
        r = self.http.post("/api/play/start", json={"participant": participant})
        assert r.status_code == 200, r.text
        self.id = r.json()["id"]
        self.version = 0

    def state(self) -> dict:
        """The next state (long poll until one newer than the last seen)."""
        while True:
            st = self.http.get(f"/api/play/{self.id}/state", params={"after": self.version}).json()
            if st["version"] > self.version:
                self.version = st["version"]
                return st

    def until(self, *phases: str) -> dict:
        while True:
            st = self.state()
            if st["phase"] in phases:
                return st
            assert st["phase"] != "error", st

    def act(self, t: int, action: int, **extra) -> httpx.Response:
        return self.http.post(f"/api/play/{self.id}/act", json={"t": t, "action": action, **extra})


@pytest.fixture
def player_cls():
    return Player
