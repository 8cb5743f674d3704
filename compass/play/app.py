"""The ``compass play`` web app: the viewer's app (runs, replays, library, same access rules) plus
the play pages and their small JSON API.

Pages: ``/play`` instructions (``?participant=ID`` is carried into the run's manifest), ``POST
/api/play/start`` starts a sitting, whose game page is ``/play/s/{id}``, ``/play/s/{id}/done``
the completion page. API (one sitting each, by its unguessable id): ``GET /api/play/{id}/state
?after=V`` long-polls the next state (a poll also says the person is still there), ``POST
/api/play/{id}/act`` ``{t, action, key, rt_ms}`` (no key: clicked) hands over the person's action (refused: 4xx with
a reason), ``POST /api/play/{id}/next`` starts the next episode, ``POST /api/play/{id}/leave``
(the page's ``pagehide`` beacon) ends the episode as ``abandoned``.
"""

from __future__ import annotations

import html
import json
import threading
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, HTTPException, Query
from fastapi.responses import HTMLResponse, JSONResponse, Response

from compass.play.human import Refused
from compass.play.study import PARTICIPANT, PlaySettings, Sitting
from compass.viewer.app import create_app

STATIC = Path(__file__).parent / "static"
#: how long one long poll waits for a new state before answering with the current one
POLL_S = 10.0


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _page(title: str, body: str, script: str = "") -> HTMLResponse:
    scripts = f"<script>{script}</script><script src='/play/static/play.js'></script>" if script else ""
    return HTMLResponse(
        f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)} · compass play</title>
<link rel="stylesheet" href="/static/viewer.css"><link rel="stylesheet" href="/play/static/play.css"></head><body>
<main><h1>{_e(title)}</h1>{body}</main>{scripts}</body></html>"""
    )


def create_play_app(
    settings: PlaySettings,
    facts: dict[str, Any],
    token: str | None = None,
    hosts: frozenset[str] | None = None,
    max_players: int = 4,
) -> FastAPI:
    """The viewer app over ``settings.out`` with the play pages for ``settings`` added."""
    app = create_app(Path(settings.out), settings.library, token, hosts)
    sittings: dict[str, Sitting] = {}
    lock = threading.Lock()
    app.state.sittings = sittings

    def sitting(sid: str) -> Sitting:
        s = sittings.get(sid)
        if s is None:
            raise HTTPException(404, "no such sitting (start again from /play)")
        return s

    @app.get("/play/static/{name}")
    def static(name: str) -> Response:
        path = STATIC / name
        if name not in {"play.js", "play.css"} or not path.exists():
            raise HTTPException(404, "no such file")
        media = "text/javascript" if name.endswith(".js") else "text/css"
        return Response(path.read_text(encoding="utf-8"), media_type=media)

    @app.get("/play", response_class=HTMLResponse)
    def page_instructions(participant: str = "") -> HTMLResponse:
        if participant and not PARTICIPANT.match(participant):
            raise HTTPException(400, "participant id: 1-64 letters, digits, '.', '_' or '-'")
        pace = (
            "turn by turn: the game waits for you"
            if settings.pace is None
            else (f"{settings.pace:g} steps per second: if you do not act in time your unit waits (no-op)")
        )
        extra = f"<div class='study-text'>{_e(settings.instructions)}</div>" if settings.instructions else ""
        game = (
            "Your unit fights beside its teammates against the enemy team: move, stop, or attack an "
            "enemy by pressing its number or clicking it in the list."
            if facts["family"] == "combat"
            else "Your agent survives and works with its teammates: move, act on the tile you face "
            "(Do), place, craft, sleep, give and request, with the keys shown or by clicking an action."
        )
        body = f"""<div id="instructions">{extra}
<p>You control <b>unit {settings.unit}</b> of the team in <b>{_e(settings.env)}</b>; compass agents
control the other {facts["n_agents"] - 1}. {game}</p>
<p>Pace: {_e(pace)}. You will play {settings.episodes} episode(s) in a row. Press <kbd>?</kbd> during
play for the keys. Closing the tab ends the episode (it is recorded as abandoned).</p>
<button id="start" autofocus>Start</button></div>"""
        return _page("Instructions", body, f"const PARTICIPANT = {json.dumps(participant)};")

    @app.post("/api/play/start")
    def start(body: Annotated[dict, Body()]) -> dict[str, str]:
        """Start a sitting (``{participant}``); the page then opens ``/play/s/{id}``."""
        participant = body.get("participant") or ""
        if not isinstance(participant, str):
            raise HTTPException(422, "participant must be a string")
        if participant and not PARTICIPANT.match(participant):
            raise HTTPException(400, "participant id: 1-64 letters, digits, '.', '_' or '-'")
        with lock:
            live = [s for s in sittings.values() if not s.done]
            if len(live) >= max_players:
                raise HTTPException(503, f"{max_players} people are playing already; try again later")
            s = Sitting(settings, participant or None)
            sittings[s.id] = s
        s.start()
        return {"id": s.id, "url": f"/play/s/{s.id}"}

    @app.get("/play/s/{sid}", response_class=HTMLResponse)
    def page_play(sid: str) -> HTMLResponse:
        sitting(sid)
        body = """<div id="play"><div id="status">starting…</div>
<div class="play-row"><div><img id="frame" alt="your unit's view"><div id="hud"></div></div>
<div class="side"><h2>actions</h2><ol id="actions"></ol><h2>team</h2><div id="team"></div>
<h2>shared by teammates</h2><pre id="shared"></pre></div></div>
<details><summary>what your unit observes</summary><pre id="obs"></pre></details>
<div id="help" hidden><h2>keys</h2><table id="keymap"></table><p>Press <kbd>?</kbd> or <kbd>Esc</kbd> to close.</p></div>
<div id="between" hidden><p id="between-text"></p><button id="next">Next episode (Enter)</button></div>
</div>"""
        return _page("compass play", body, f"const SITTING = {json.dumps(sid)};")

    @app.get("/play/s/{sid}/done", response_class=HTMLResponse)
    def page_done(sid: str) -> HTMLResponse:
        s = sitting(sid)
        st = s.board.state
        if st.get("phase") not in ("complete", "abandoned"):
            raise HTTPException(409, "this sitting is not over yet")
        outcomes = ", ".join(_e(o) for o in st.get("outcomes", []))
        body = f"""<div id="done"><p>Thank you! Your episodes: {outcomes}.</p>
<p>Completion code: <code id="code">{_e(st.get("code"))}</code></p></div>"""
        return _page("Done", body)

    @app.get("/api/play/{sid}/state")
    async def api_state(sid: str, after: int = Query(0, ge=0)) -> dict[str, Any]:
        s = sitting(sid)
        with s.human.poll():
            return await s.board.wait(after, POLL_S)

    @app.post("/api/play/{sid}/act")
    def api_act(sid: str, body: Annotated[dict, Body()]) -> JSONResponse:
        s = sitting(sid)
        t, action = body.get("t"), body.get("action")
        if not isinstance(t, int) or not isinstance(action, int) or isinstance(action, bool):
            return JSONResponse({"detail": "send {t: int, action: int}"}, 422)
        unit = body.get("unit")
        if unit is not None and (not isinstance(unit, int) or isinstance(unit, bool)):
            return JSONResponse({"detail": "unit must be an integer"}, 422)
        key = body.get("key")
        if key is not None and not isinstance(key, str):
            return JSONResponse({"detail": "key must be a string"}, 422)
        try:
            s.human.submit(t, action, unit, rt_ms=body.get("rt_ms"), key=key)
        except Refused as r:
            return JSONResponse({"detail": str(r)}, r.status)
        return JSONResponse({"ok": True})

    @app.post("/api/play/{sid}/next")
    def api_next(sid: str) -> dict[str, bool]:
        sitting(sid).next_episode()
        return {"ok": True}

    @app.post("/api/play/{sid}/leave")
    def api_leave(sid: str) -> dict[str, bool]:
        s = sitting(sid)
        if not s.done:
            s.leave()
        return {"ok": True}

    return app
