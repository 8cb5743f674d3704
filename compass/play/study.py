"""One participant's sitting: several episodes in a row with a person controlling one agent and
compass controlling the rest, recorded as one run directory (``runs/<id>/``: ``manifest.json``
with the participant id, ``trace.jsonl`` with the person's actions as ``"controller": "human"``
lines, ``summary.json``), replayable in the viewer like any run.

Each sitting plays in its own thread and event loop, with its own environment, planner and
communication protocol, so two people on one server play separate episodes; the web server hands
input over through :class:`~compass.play.human.HumanController`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compass.config import SPEED_ONLY, RunConfig
from compass.core.controller import ALLY
from compass.core.family import family_for_env, make_env
from compass.core.runformat import FORMAT_VERSION
from compass.play.human import Board, HumanController

#: a participant id as it may appear in a URL and a run id (MUG-style study links)
PARTICIPANT = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class PlaySettings:
    """What ``compass play`` serves: the game, the person's unit, who controls the rest, pacing."""

    env: str
    unit: int = 0
    team: str = "compass"
    pace: float | None = None  # None: turn (wait for the person); else frames per second
    episodes: int = 1
    seed: int = 0
    max_steps: int | None = None
    out: Path = Path("runs")
    library: Path | None = None
    planner: str = "library"
    vlm: str | None = None
    epo: bool = False
    abandon_after: float = 30.0
    instructions: str | None = None  # extra text for the instructions page (a study's own wording)

    def run_config(self) -> RunConfig:
        return RunConfig(
            env=self.env,
            seed=self.seed,
            episodes=self.episodes,
            max_steps=self.max_steps,
            out=self.out,
            library=self.library,
            planner=self.planner,  # type: ignore[arg-type]
            vlm=self.vlm,
            epo=self.epo,
        )


def check_settings(s: PlaySettings) -> dict[str, Any]:
    """Refuse settings that cannot be played, with one line saying what to fix; returns the facts the
    pages need (family, team size). Builds the env once (also compiling it before anyone waits)."""
    from compass.eval.controllers import parse_team, resolve

    family = family_for_env(s.env)
    if family.human_keys is None:
        raise ValueError(f"{family.name} cannot be played by hand (its family lists no human keys)")
    if s.pace is not None and not 0 < s.pace <= 60:
        raise ValueError(f"--pace {s.pace}: a frame rate must be above 0 and at most 60 (or 'turn')")
    env = make_env(s.env, epo=s.epo, max_steps=s.max_steps)
    if not 0 <= s.unit < env.n_agents:
        raise ValueError(f"--unit {s.unit}: {s.env} has allied units 0-{env.n_agents - 1}")
    resolve(parse_team(s.team), env.n_agents, "--team")
    views = env.reset(s.seed)  # compile reset, step and the ego frame now, not at a person's first key
    views[s.unit].frame()
    env.step([0] * env.n_agents)
    return {"family": family.name, "n_agents": env.n_agents, "max_steps": getattr(env, "max_steps", None)}


def _clean(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:40] or "x"


@dataclass
class Sitting:
    """One participant's episodes, played in a thread; the page reads :attr:`board`."""

    settings: PlaySettings
    participant: str | None
    id: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    board: Board = field(default_factory=Board)
    run_dir: Path | None = None
    human: HumanController = field(init=False)
    done: bool = False
    outcomes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.settings
        # Made now, so the page's polls count as contact while the game and agents load.
        self.human = HumanController(
            s.unit, lambda view: (), None, self.board, pace=s.pace, abandon_after=s.abandon_after
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = False
        self._next: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name=f"play-{self.id[:6]}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def next_episode(self) -> None:
        """The person asked for the next episode (between episodes)."""
        self.human.seen()
        if self._loop is not None and self._next is not None:
            with contextlib.suppress(RuntimeError):  # the sitting's loop has ended
                self._loop.call_soon_threadsafe(self._next.set)

    def leave(self, why: str = "the page was closed") -> None:
        """The person is gone: the episode under way ends as ``abandoned``, no further one starts."""
        self.human.leave(why)
        self.next_episode()

    # --- the sitting's thread -------------------------------------------------------------------

    def _main(self) -> None:
        try:
            asyncio.run(self._play())
        except Exception as e:  # shown on the page; the run is marked failed in its manifest
            self.board.publish({"phase": "error", "message": f"{type(e).__name__}: {e}"})
            traceback.print_exc()
        finally:
            self.done = True

    async def _play(self) -> None:
        from compass.comm import CommProtocol
        from compass.episode.pipeline import Observer, PlayedEpisode, Table, play, table
        from compass.episode.rundir import finish_manifest, readable_id, write_manifest
        from compass.episode.session import library_root_for
        from compass.episode.trace import RunWriter
        from compass.eval.controllers import (
            TeamEnv,
            UnitPlanners,
            parse_team,
            resolve,
            side_controllers,
            split_team,
        )
        from compass.eval.stats import summarize_outcomes
        from compass.planner.base import LibraryPlanner
        from compass.skills.library import SkillLibrary

        self._loop, self._next = asyncio.get_running_loop(), asyncio.Event()
        s = self.settings
        cfg = s.run_config()
        family = family_for_env(cfg.env)
        cfg = cfg.model_copy(update={"task": family.default_task})
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        who = _clean(self.participant) if self.participant else "anon"
        run_id = f"play-{who}-{readable_id(cfg)}-{stamp}-{secrets.token_hex(3)}"
        cfg = cfg.model_copy(update={"run_id": run_id})
        out = Path(cfg.out)
        out.mkdir(parents=True, exist_ok=True)
        run_dir = out / run_id
        run_dir.mkdir()
        self.run_dir = run_dir
        human_info = {"unit": s.unit, "pace": "turn" if s.pace is None else s.pace, "team": s.team}
        manifest = write_manifest(
            run_dir, cfg, controller="human", participant=self.participant, human=human_info
        )
        writer = RunWriter(run_dir)
        env = make_env(cfg.env, epo=cfg.epo, max_steps=cfg.max_steps)
        try:
            library = SkillLibrary(library_root_for(cfg, family, run_dir), family.name)
            ally = resolve(parse_team(s.team), env.n_agents, "--team")
            ally.pop(s.unit)  # the person's unit
            by_agent, groups = split_team(ally, cfg, library, run_dir=run_dir)
            ctrl = side_controllers(groups, ALLY, env, family, library, cfg)
            team_env = TeamEnv(env, ctrl) if ctrl else env
            planner = UnitPlanners(library, by_agent)
            comm = CommProtocol(cfg.comm, seed=cfg.seed)
            human = self.human
            human.keys = family.human_keys  # type: ignore[assignment]
            human.trace = writer.trace
            human.panel = lambda agent, view: _panel(comm, agent, view)
            human.header = lambda: {"episodes": s.episodes, "max_steps": getattr(env, "max_steps", None)}
            external = frozenset({s.unit} | {u for c in ctrl for u in c.units})
            tab = table(
                cfg, planner, env=team_env, comm=comm, writer=writer, score_env=env, external=external
            )
            tab.act_external = human.act  # the person is a controller: the pipeline is compass's own
            writer.trace(
                {
                    "kind": "run_start",
                    "config": cfg.model_dump(mode="json", exclude={"out", "run_id", *SPEED_ONLY}),
                    "controller": "human",
                    "human": human_info,
                    "participant": self.participant,
                    "library": sorted(library.names()),
                }
            )
            if any(isinstance(p, LibraryPlanner) for p in by_agent.values()):
                library.retrieve(cfg.task, k=1)  # the embedding model loads before the person waits
            sitting = self

            def seeds():  # episodes in a row until the last, or until the person is gone
                for ep in range(cfg.episodes):
                    if sitting.outcomes[-1:] == ["abandoned"] or sitting._stopped:
                        return
                    yield ep, cfg.seed + ep

            class Between(Observer):
                """After each episode: the person's figures on its row, then wait for "next"."""

                async def episode_end(self, table: Table, played: PlayedEpisode) -> None:
                    rts = human.reactions_ms
                    played.notes["human"] = {
                        "unit": s.unit,
                        "actions": len(rts),
                        "median_reaction_ms": sorted(rts)[len(rts) // 2] if rts else None,
                    }
                    human.reactions_ms = []
                    outcome = played.result.outcome
                    sitting.outcomes.append(outcome)
                    writer.flush()
                    ep = played.result.episode
                    if outcome != "abandoned" and ep + 1 < cfg.episodes:
                        row = played.row(family.name)
                        sitting.board.publish(sitting._between(ep, row))
                        if not await sitting._wait_next(human):
                            sitting._stopped = True

            try:
                played_eps = await play(tab, seeds(), [Between()])
            finally:
                if isinstance(team_env, TeamEnv):
                    team_env.close()
            episodes = [p.row(family.name) for p in played_eps]
            writer.close(complete=True)
            played = [e for e in episodes if e["outcome"] != "abandoned"]
            summary: dict[str, Any] = {
                "format_version": FORMAT_VERSION,
                "run_id": run_dir.name,
                "env": cfg.env,
                "planner": cfg.planner,
                "vlm": cfg.vlm,
                "controller": "human",
                "participant": self.participant,
                "human": human_info,
                "library": str(library.dir),
                "comm": cfg.comm,
                "epo": cfg.epo,
                "seed": cfg.seed,
                "episodes": episodes,
                "abandoned": len(episodes) - len(played),
                "overall": summarize_outcomes(played),
            }
            if tab.scorer is not None:
                summary[family.name] = tab.scorer.summary()
            writer.summary(summary)
            finish_manifest(run_dir, dict(manifest, outcomes=self.outcomes))
        except BaseException as exc:
            writer.close(complete=False)
            finish_manifest(run_dir, manifest, exc)
            raise
        self.board.publish(
            {
                "phase": "complete" if self.outcomes[-1:] != ["abandoned"] else "abandoned",
                "outcomes": self.outcomes,
                "run": run_dir.name,
                "code": run_dir.name[-6:],
            }
        )

    def _between(self, ep: int, row: dict[str, Any]) -> dict[str, Any]:
        return {
            "phase": "between",
            "episode": ep,
            "episodes": self.settings.episodes,
            "outcome": row["outcome"],
            "steps": row["steps"],
            "headline": row.get("headline"),
        }

    async def _wait_next(self, human: HumanController) -> bool:
        """Until the person asks for the next episode (True) or is gone (False)."""
        assert self._next is not None
        self._next.clear()
        while not self._next.is_set():
            if human.gone() is not None:
                return False
            try:
                await asyncio.wait_for(self._next.wait(), 1.0)
            except TimeoutError:
                continue
        return human.gone() is None


def _panel(comm: Any, agent: int, view: Any) -> dict[str, Any]:
    """Beside the frame: what teammates told the person's agent (sub-tasks, skills) and the
    entities they relayed (the entity memory), as the agent's own planner would get them."""
    from compass.comm.minimap import minimap_text

    team = [
        {"agent": a, "subtask": it.subtask, "skill": it.skill, "since": it.step}
        for a, it in comm.ally_intents_for(agent).items()
    ]
    relayed = [e for e in view.entities if e.hops > 0 or e.source not in (None, agent)]
    try:
        shared = minimap_text(view, relayed)
    except Exception:  # a family whose entities carry no relay fields
        shared = ""
    return {"team": team, "shared": shared}
