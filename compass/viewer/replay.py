"""Frames of a recorded episode, rendered on demand by re-simulating it from its trace.

A trace holds the run's configuration (``run_start``), each episode's seed and every step's
actions; the environments are deterministic under a seed, so resetting the env with that seed and
applying the recorded actions reproduces each state. The communication protocol is replayed the
same way (its seed, the agents' posted sub-tasks), so an agent's ego frame and minimap include
what teammates relayed to it. Each replayed step's reward is compared with the recorded one; a
mismatch marks the replay as diverged (shown in the page) instead of showing wrong frames silently.

Replay runs forward. An env that can checkpoint itself (``checkpoint()``/``restore(cp)``, as
ALEM's does) is checkpointed every ``CHECKPOINT_EVERY`` steps, together with the communication
protocol, and a thread lays those checkpoints down ahead of the viewer once an episode is open;
so any step of a 10,000-step episode is at most ``CHECKPOINT_EVERY`` env steps away. Other envs
restart from the episode's start for an earlier step (their episodes are short). Rendered frames
are kept in a small LRU cache.
"""

from __future__ import annotations

import copy
import io
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from compass.viewer.runs import RunStore

#: Env steps between two checkpoints of a replay (ALEM replays ~85 steps/s here: ≤ ~1.5 s to any step).
CHECKPOINT_EVERY = 100
_READ_CHUNK = 200  # trace steps read per window while replaying


class ReplayUnavailable(RuntimeError):
    """The episode cannot be re-simulated here (unknown env, missing game, no config)."""


def png(frame: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.asarray(frame, dtype=np.uint8)).save(
        buf, format="PNG", optimize=False, compress_level=1
    )
    return buf.getvalue()


class EpisodeReplay:
    """One episode re-simulated step by step."""

    def __init__(self, store: RunStore, run_id: str, episode: int) -> None:
        from compass.comm import CommProtocol
        from compass.core.family import make_env

        self.store, self.run_id, self.episode = store, run_id, episode
        cfg = store.config(run_id)
        if not cfg.get("env"):
            raise ReplayUnavailable(f"run {run_id!r} records no configuration (no run_start line)")
        self.cfg = cfg
        self.seed = int(cfg.get("seed", 0)) + episode
        try:
            self.env = make_env(cfg["env"], epo=bool(cfg.get("epo")), max_steps=cfg.get("max_steps"))
        except Exception as e:  # an env that cannot be built here (SMACv2 without the game...)
            raise ReplayUnavailable(f"cannot rebuild {cfg['env']}: {e}") from None
        self.comm = CommProtocol(cfg.get("comm", "multihop"), seed=int(cfg.get("seed", 0)))
        self.lock = threading.Lock()
        self.diverged_at: int | None = None
        self.checkpointable = callable(getattr(self.env, "checkpoint", None)) and callable(
            getattr(self.env, "restore", None)
        )
        self.checkpoints: dict[int, tuple[Any, Any, Any, Any]] = {}
        self.done = False
        self._restart()

    def _restart(self) -> None:
        self.comm.reset(self.seed)
        self.views = self.env.reset(self.seed)
        self.t = 0
        self.done = False
        self.perceived = self._perceive()
        self._checkpoint()

    def _checkpoint(self) -> None:
        if self.checkpointable and self.t % CHECKPOINT_EVERY == 0 and self.t not in self.checkpoints:
            self.checkpoints[self.t] = (
                self.env.checkpoint(),
                copy.deepcopy(self.comm),
                self.views,
                self.perceived,
            )

    def _restore(self, t: int) -> None:
        env_cp, comm, views, perceived = self.checkpoints[t]
        self.env.restore(env_cp)
        self.comm = copy.deepcopy(comm)  # the checkpoint stays reusable
        self.views, self.perceived, self.t, self.done = views, perceived, t, False

    def _perceive(self):
        if self.comm is None:
            return self.views
        self.comm.exchange(self.t, self.views)
        out = []
        for v in self.views:
            relayed = self.comm.relayed_for(v.agent_id, v) if v.alive else ()
            out.append(v.with_entities(v.entities + tuple(relayed)) if relayed else v)
        return out

    def seek(self, t: int) -> None:
        """Bring the env to the state agents saw at step ``t`` (before that step's actions)."""
        ep = self.store.episode(self.run_id, self.episode)
        t = max(0, min(t, len(ep.steps)))
        best = max((c for c in self.checkpoints if c <= t), default=None)
        if best is not None and (t < self.t or best > self.t):
            self._restore(best)
        elif t < self.t:
            self._restart()
        while self.t < t and not self.done:
            for rec in self.store.steps(self.run_id, self.episode, self.t, min(t - self.t, _READ_CHUNK)):
                for d in rec["decisions"]:
                    if d.get("subtask") is not None:
                        self.comm.post_intent(d["agent"], self.t, d["subtask"], d.get("skill"))
                step = rec["step"]
                res = self.env.step(list(step["actions"]))
                reward = float(np.mean(res.rewards)) if res.rewards else 0.0
                if self.diverged_at is None and abs(round(reward, 6) - float(step.get("reward", 0))) > 1e-5:
                    self.diverged_at = self.t
                self.views = res.views
                self.t += 1
                if res.done:
                    self.done = True
                    break
                self.perceived = self._perceive()
                self._checkpoint()

    def lay_checkpoints(self, stop: threading.Event) -> None:
        """Replay ahead, ``CHECKPOINT_EVERY`` steps at a time under the lock (frame requests go in
        between), until every checkpoint of the episode exists or ``stop`` is set."""
        total = len(self.store.episode(self.run_id, self.episode).steps)
        while not stop.is_set():
            with self.lock:
                top = max(self.checkpoints, default=0)
                if top + CHECKPOINT_EVERY >= total or (self.done and self.t <= top + CHECKPOINT_EVERY):
                    return
                self.seek(top + CHECKPOINT_EVERY)

    def global_frame(self) -> np.ndarray:
        return self.env.render_global()

    def ego_frame(self, agent: int) -> np.ndarray:
        return self.perceived[agent].frame()

    def agent_panel(self, agent: int) -> dict[str, Any]:
        from compass.comm.minimap import minimap_text

        v = self.perceived[agent]
        relayed = [e for e in v.entities if e.hops > 0 or e.source not in (None, agent)]
        try:
            minimap = minimap_text(v, relayed)
        except Exception:  # a family whose entities carry no relay fields
            minimap = ""
        return {"agent": agent, "alive": v.alive, "text": v.text, "minimap": minimap}


class ReplayCache:
    """Live replays (a few) and rendered PNGs (LRU), shared by the server's worker threads."""

    def __init__(self, store: RunStore, max_replays: int = 2, max_frames: int = 512) -> None:
        self.store = store
        self.max_replays, self.max_frames = max_replays, max_frames
        self._replays: OrderedDict[tuple[str, int], EpisodeReplay] = OrderedDict()
        self._frames: OrderedDict[tuple, bytes] = OrderedDict()
        self._failed: dict[tuple[str, int], str] = {}
        self._warmers: dict[tuple[str, int], threading.Event] = {}
        self._lock = threading.Lock()

    def replay(self, run_id: str, episode: int) -> EpisodeReplay:
        key = (run_id, episode)
        with self._lock:
            if key in self._failed:
                raise ReplayUnavailable(self._failed[key])
            if key in self._replays:
                self._replays.move_to_end(key)
                return self._replays[key]
        try:
            r = EpisodeReplay(self.store, run_id, episode)
        except ReplayUnavailable as e:
            with self._lock:
                self._failed[key] = str(e)
            raise
        with self._lock:
            if key in self._replays:  # another thread built it meanwhile
                return self._replays[key]
            self._replays[key] = r
            while len(self._replays) > self.max_replays:
                old, _ = self._replays.popitem(last=False)
                if old in self._warmers:
                    self._warmers.pop(old).set()
            if r.checkpointable and len(self.store.episode(run_id, episode).steps) > 2 * CHECKPOINT_EVERY:
                stop = self._warmers[key] = threading.Event()
                threading.Thread(
                    target=r.lay_checkpoints, args=(stop,), daemon=True, name="replay-ahead"
                ).start()
        return r

    def close(self) -> None:
        """Stop the threads replaying ahead."""
        with self._lock:
            for stop in self._warmers.values():
                stop.set()
            self._warmers.clear()

    def frame(self, run_id: str, episode: int, t: int, which: str) -> tuple[bytes, dict[str, Any]]:
        """PNG of ``which`` (``global`` or ``agent<i>``) at step ``t``, and replay status."""
        key = (run_id, episode, t, which)
        with self._lock:
            if key in self._frames:
                self._frames.move_to_end(key)
                return self._frames[key], {"cached": True}
        r = self.replay(run_id, episode)
        with r.lock:
            r.seek(t)
            if which == "global":
                data = png(r.global_frame())
            else:
                data = png(r.ego_frame(int(which.removeprefix("agent"))))
            status = {"t": r.t, "diverged_at": r.diverged_at}
        with self._lock:
            self._frames[key] = data
            while len(self._frames) > self.max_frames:
                self._frames.popitem(last=False)
        return data, status

    def panels(self, run_id: str, episode: int, t: int) -> dict[str, Any]:
        r = self.replay(run_id, episode)
        with r.lock:
            r.seek(t)
            return {
                "t": r.t,
                "diverged_at": r.diverged_at,
                "agents": [r.agent_panel(i) for i in range(len(r.perceived))],
            }
