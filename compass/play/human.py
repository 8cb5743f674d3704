"""A person as the controller of one agent: an awaitable action source with pacing, fed by the page.

The episode runs in its own thread and event loop (:mod:`compass.play.study`); the web server runs
in another. Each step the runner awaits :meth:`HumanController.act`, which publishes what the
person's agent sees to a :class:`Board` (the page long-polls it) and waits for the person's input,
handed over from the server's thread by :meth:`HumanController.submit`. ``turn`` pace waits for
the person; a frame rate advances with the no-op (the action the runner fills for external agents)
when the person has not acted in time. A person who is gone (the page said so, or has not polled
for ``abandon_after`` seconds) ends the episode as ``abandoned``.

Every input is validated here, not in the page: a step that is over, an action that is not among
this step's legal ones, another unit's id, or a second action for the same step is refused.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from compass.core.controller import EpisodeStopped, HumanKey
from compass.core.types import AgentView

#: the action recorded when the person does not act in time at a frame-rate pace
NOOP = 0


class Refused(ValueError):
    """Input from the page that is not accepted; the message says why (sent back as the reply)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Board:
    """The latest state for one player's page, versioned; safe to publish from any thread and to
    wait on from any event loop (a long poll)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.version = 0
        self.state: dict[str, Any] = {"version": 0, "phase": "starting"}
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []

    def publish(self, state: dict[str, Any]) -> None:
        with self._lock:
            self.version += 1
            self.state = {**state, "version": self.version}
            waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            loop.call_soon_threadsafe(_wake, fut)

    async def wait(self, after: int, timeout: float) -> dict[str, Any]:
        """The state once its version is past ``after``, or the current one after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        with self._lock:
            if self.version > after:
                return self.state
            self._waiters.append((loop, fut))
        try:
            await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            pass
        return self.state


def _wake(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


def png_data_url(frame: Any) -> str:
    """A frame as an inline PNG (fast compression: latency matters more than bytes on a LAN)."""
    import io

    import numpy as np
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.asarray(frame, dtype=np.uint8)).save(buf, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


class HumanController:
    """Drives agent ``agent`` from a person's input; ``act`` is the runner's ``act_external``.

    ``pace``: None waits for the person each step (turn); a number of frames per second advances
    with the no-op when the person has not acted within ``1/pace`` s. ``keys(view)`` lists what the
    person may do (the family's ``human_keys``); ``panel(agent, view)`` adds what the page shows
    beside the frame (team messages, health); ``trace(record)`` writes one trace line per step.
    """

    controller = "human"

    def __init__(
        self,
        agent: int,
        keys: Callable[[AgentView], tuple[HumanKey, ...]],
        trace: Callable[[dict[str, Any]], None] | None,
        board: Board,
        *,
        pace: float | None = None,
        abandon_after: float = 30.0,
        panel: Callable[[int, AgentView], dict[str, Any]] | None = None,
        header: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.agent, self.keys, self.trace, self.board = agent, keys, trace, board
        self.pace, self.abandon_after = pace, abandon_after
        self.panel, self.header = panel, header or dict
        self.units = (agent,)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue | None = None
        self._open: tuple[int, int, dict[int, set[str]]] | None = None  # (episode, t, action -> keys)
        self.last_seen = time.monotonic()
        self.polling = 0  # long polls waiting now: a page that waits for the next frame is there
        self.left: str | None = None  # why the person is gone (set from the server's thread)
        self.reactions_ms: list[float] = []

    # --- the server's side (any thread) ---------------------------------------------------------

    def seen(self) -> None:
        """The page polled or acted: the person is still there."""
        self.last_seen = time.monotonic()

    @contextlib.contextmanager
    def poll(self):
        """A long poll in progress counts as contact for as long as it waits."""
        self.seen()
        self.polling += 1
        try:
            yield
        finally:
            self.polling -= 1
            self.seen()

    def leave(self, why: str = "the page was closed") -> None:
        """The person is gone; the episode ends as ``abandoned`` at its next wait."""
        self.left = why
        self._put(None)

    def submit(
        self, t: int, action: int, unit: int | None = None, rt_ms: Any = None, key: str | None = None
    ) -> None:
        """Hand the person's ``action`` for step ``t`` (sent with ``key``; None: clicked) to the
        episode; :class:`Refused` if it is not this step's, not a legal action of the person's own
        unit, the key does not send it, or the step already has one."""
        self.seen()
        if unit is not None and unit != self.agent:
            raise Refused(f"unit {unit} is not yours (you control unit {self.agent})", 403)
        with self._lock:
            if self._open is None or self._open[1] != t:
                now = "none" if self._open is None else str(self._open[1])
                raise Refused(f"step {t} is not open for input (the open step is {now})", 409)
            offered = self._open[2]
            if action not in offered:
                raise Refused(f"action {action} is not one of unit {self.agent}'s actions at step {t}")
            if key is not None and key not in offered[action]:
                raise Refused(f"key {key[:20]!r} does not send action {action}")
            self._open = None  # one action per step: a second one for t is refused above
        client_rt = None
        if isinstance(rt_ms, int | float) and not isinstance(rt_ms, bool) and 0 <= rt_ms < 3.6e6:
            client_rt = round(float(rt_ms), 1)
        via = "click" if key is None else "key"
        self._put((t, action, via, key or "", client_rt, time.perf_counter()))

    def _put(self, item: Any) -> None:
        loop, inbox = self._loop, self._inbox
        if loop is not None and inbox is not None:
            with contextlib.suppress(RuntimeError):  # the episode's loop is gone: nothing waits
                loop.call_soon_threadsafe(inbox.put_nowait, item)

    # --- the episode's side ---------------------------------------------------------------------

    def gone(self) -> str | None:
        """Why the person counts as gone now, or None."""
        if self.left:
            return self.left
        if self.polling > 0:
            return None
        idle = time.monotonic() - self.last_seen
        if idle > self.abandon_after:
            return f"no contact for {idle:.0f} s"
        return None

    async def act(self, episode: int, t: int, views: list[AgentView]) -> dict[int, int]:
        """Show step ``t`` to the person and return their action (the no-op at a frame-rate pace
        when they did not act in time); raises :class:`EpisodeStopped` if they are gone."""
        if self._loop is None:
            self._loop, self._inbox = asyncio.get_running_loop(), asyncio.Queue()
        view = views[self.agent]
        if not view.alive:
            self.board.publish(self._state(episode, t, view, ()))
            if (why := self.gone()) is not None:
                raise EpisodeStopped("abandoned", why)
            return {}
        keys = tuple(self.keys(view))
        offered: dict[int, set[str]] = {}
        for k in keys:
            offered.setdefault(k.action, set()).add(k.key)
        with self._lock:
            self._open = (episode, t, offered)
        shown = time.perf_counter()
        self.board.publish(self._state(episode, t, view, keys))
        deadline = None if self.pace is None else shown + 1.0 / self.pace
        item = None
        while item is None:
            if (why := self.gone()) is not None:
                self._close_step()
                raise EpisodeStopped("abandoned", why)
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.perf_counter()))
            try:
                item = await asyncio.wait_for(self._inbox.get(), wait)
            except TimeoutError:
                if deadline is not None and time.perf_counter() >= deadline:
                    break
                continue
            if item is not None and item[0] != t:
                item = None  # a late answer to an earlier step (cannot happen: submit checks t)
        if item is None:  # the frame's time ran out: the no-op, recorded as such
            self._close_step()
            self._trace(self._record(episode, t, NOOP, "", "pace", None, None))
            return {self.agent: NOOP}
        _, action, via, key, client_rt, at = item
        reaction = round((at - shown) * 1000, 1)
        self.reactions_ms.append(reaction)
        self._trace(self._record(episode, t, action, key, via, reaction, client_rt))
        return {self.agent: action}

    def _close_step(self) -> None:
        with self._lock:
            self._open = None

    def _trace(self, record: dict[str, Any]) -> None:
        if self.trace is not None:
            self.trace(record)

    def _record(
        self,
        episode: int,
        t: int,
        action: int,
        key: str,
        via: str,
        reaction: float | None,
        client: float | None,
    ) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "kind": "human",
            "controller": self.controller,
            "episode": episode,
            "t": t,
            "agent": self.agent,
            "action": action,
            "via": via,
            "reaction_ms": reaction,
        }
        if key:
            rec["key"] = key
        if client is not None:
            rec["page_reaction_ms"] = client
        return rec

    def _state(self, episode: int, t: int, view: AgentView, keys: tuple[HumanKey, ...]) -> dict[str, Any]:
        state: dict[str, Any] = {
            **self.header(),
            "phase": "play",
            "episode": episode,
            "t": t,
            "unit": self.agent,
            "alive": view.alive,
            "health": round(float(view.own.health), 3),
            "text": view.text,
            "keys": [{"key": k.key, "action": k.action, "label": k.label} for k in keys],
        }
        try:
            state["frame"] = png_data_url(view.frame())
        except Exception:  # an env that draws no frame for a dead unit: the page keeps the last one
            state["frame"] = None
        if self.panel is not None:
            state.update(self.panel(self.agent, view))
        return state
