"""The one episode pipeline: ``compass run``, ``compass eval``, ``compass demos record`` and the keep
gate (with bootstrapping's evaluation) all play their episodes through :func:`play`.

What is played is a :class:`Table` (environment, planner, communication, scorer, trace sink, the
agents driven from outside) and a list of ``(episode index, seed)``; what differs between the
commands (a video, a trajectory recording, the keep gate's review, a progress bar, printing a row)
is passed in as :class:`Observer` objects, so seeding, scoring and usage accounting are written once.
Per episode, in this order: the communication protocol is reset with the episode's seed, the scorer
starts, the runner plays (observers' step sinks see every step), the scorer finishes, the planner's
usage for the episode is read, and each observer's :meth:`Observer.episode_end` runs in the order
given (the keep gate's review traces its verdicts there, between this episode and the next).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from compass.comm import CommProtocol
from compass.config import RunConfig
from compass.core.family import GameFamily, Scorer, family_for_env, make_env
from compass.core.types import AgentView, MultiAgentEnv, StepResult
from compass.episode.runner import EpisodeResult, EpisodeRunner, run_batched
from compass.episode.trace import NullTrace, TraceSink
from compass.planner.base import Planner


def make_comm(cfg: RunConfig) -> CommProtocol:
    """The communication protocol for ``cfg.comm`` (a typo in the mode lists the valid ones)."""
    return CommProtocol(cfg.comm, seed=cfg.seed)


@dataclass
class Table:
    """Everything episodes are played with; built once, reset per episode by :func:`play`."""

    cfg: RunConfig
    family: GameFamily
    env: MultiAgentEnv
    planner: Planner
    comm: CommProtocol | None
    scorer: Scorer | None = None
    writer: TraceSink = field(default_factory=NullTrace)
    #: agents whose actions come from elsewhere (:class:`compass.eval.controllers.TeamEnv`)
    external: frozenset[int] = frozenset()
    #: awaited each step for external agents' actions, which the trace records (a person:
    #: :class:`compass.play.human.HumanController`); may end the episode (``EpisodeStopped``)
    act_external: Any = None


def table(
    cfg: RunConfig,
    planner: Planner,
    *,
    env: MultiAgentEnv | None = None,
    comm: CommProtocol | None = None,
    writer: TraceSink | None = None,
    scored: bool = True,
    score_env: MultiAgentEnv | None = None,
    external: frozenset[int] = frozenset(),
) -> Table:
    """A :class:`Table` for ``cfg``: its env (unless given), comm protocol, and the family's scorer
    when ``scored`` and the family has one (reading ``score_env``, default ``env``: a team wrapper
    passes the game's own env)."""
    family = family_for_env(cfg.env)
    if env is None:
        env = make_env(cfg.env, epo=cfg.epo, max_steps=cfg.max_steps)
    scorer = None
    if scored and family.make_scorer is not None:
        scorer = family.make_scorer(score_env if score_env is not None else env)
    return Table(
        cfg,
        family,
        env,
        planner,
        comm if comm is not None else make_comm(cfg),
        scorer,
        writer if writer is not None else NullTrace(),
        external,
    )


@dataclass
class PlayedEpisode:
    """One played episode: the runner's result, the family's metrics and the model's usage."""

    result: EpisodeResult
    metrics: dict[str, Any] | None = None  # the family scorer's :meth:`Scorer.finish`
    headline: str | None = None  # the scorer's one line for it
    usage: dict[str, Any] | None = None  # the planner's usage for the episode (None: no model)
    notes: dict[str, Any] = field(default_factory=dict)  # what observers add to the row (video, keep_gate)

    def row(self, family: str) -> dict[str, Any]:
        """The episode's row in a run's ``summary.json`` (metrics under the family's name)."""
        row = self.result.as_dict()
        row.update(self.notes)
        if self.metrics is not None:
            row[family] = self.metrics
            row["headline"] = self.headline
        if self.usage is not None:
            row["vlm"] = self.usage
        return row


class StepSink(Protocol):
    """Sees every step of one episode (a video, a trajectory file, a progress bar)."""

    def step(
        self, t: int, views: list[AgentView], actions: list[int], skills: list[str | None], res: StepResult
    ) -> None: ...

    def finish(self, outcome: str) -> Any: ...


class Observer:
    """What one command adds to the pipeline; every hook is optional (the defaults do nothing)."""

    def steps(self, table: Table, episode: int, seed: int) -> StepSink | None:
        """A sink for this episode's steps, or None."""
        return None

    async def episode_end(self, table: Table, played: PlayedEpisode) -> None:
        """After the episode (and its scoring); may add to ``played.notes``."""


class _FanOut:
    """The runner's one recorder, handing every step to each observer's sink."""

    def __init__(self, sinks: list[StepSink]) -> None:
        self.sinks = sinks

    def step(self, t, views, actions, skills, res) -> None:
        for s in self.sinks:
            s.step(t, views, actions, skills, res)

    def finish(self, outcome: str) -> None:
        for s in self.sinks:
            s.finish(outcome)


async def play(
    table: Table,
    episodes: Sequence[tuple[int, int]],
    observers: Sequence[Observer] = (),
    *,
    close: bool = True,
) -> list[PlayedEpisode]:
    """Play ``(episode index, seed)`` pairs in order on ``table``; ``close``: release the planner
    (:meth:`Planner.aclose`) afterwards, also when an episode fails."""

    def recorder(episode: int, seed: int) -> _FanOut | None:
        sinks = [s for o in observers if (s := o.steps(table, episode, seed)) is not None]
        return _FanOut(sinks) if sinks else None

    scorer = table.scorer
    runner = EpisodeRunner(
        table.env,
        table.planner,
        table.cfg,
        table.writer,
        comm=table.comm,
        on_step=scorer.on_step if scorer is not None else None,
        external=table.external,
        recorder=recorder if observers else None,
        act_external=table.act_external,
    )
    out: list[PlayedEpisode] = []
    try:
        for episode, seed in episodes:
            if table.comm is not None:
                table.comm.reset(seed)
            if scorer is not None:
                scorer.start()
            played = PlayedEpisode(await runner.run_episode(episode, seed))
            if scorer is not None:
                played.metrics = scorer.finish()
                played.headline = scorer.describe_episode(played.metrics)
            played.usage = table.planner.usage_for_episode(episode)
            for o in observers:
                await o.episode_end(table, played)
            out.append(played)
    finally:
        if close:
            await table.planner.aclose()
    return out


async def play_batched(
    tables: Sequence[Table], episodes: Sequence[tuple[int, int]], *, close: bool = True
) -> list[PlayedEpisode]:
    """Play one ``(episode index, seed)`` per table at once (:func:`compass.episode.runner.run_batched`:
    one sandbox batch and one batched env step per step for all); each episode's result, scoring,
    usage and trace are what :func:`play` gives it alone on its table. No observers: recording and
    watching play one episode at a time. ``close``: release every table's planner afterwards."""
    if len(tables) != len(episodes):
        raise ValueError(f"{len(tables)} tables for {len(episodes)} episodes: one each")
    runners = []
    for tab, (_, seed) in zip(tables, episodes, strict=True):
        if tab.act_external is not None:
            raise ValueError("an episode with external actions (a person playing) cannot be batched")
        runners.append(
            EpisodeRunner(
                tab.env,
                tab.planner,
                tab.cfg,
                tab.writer,
                comm=tab.comm,
                on_step=tab.scorer.on_step if tab.scorer is not None else None,
                external=tab.external,
            )
        )
        if tab.comm is not None:
            tab.comm.reset(seed)
        if tab.scorer is not None:
            tab.scorer.start()
    out: list[PlayedEpisode] = []
    try:
        lanes = [(r, episode, seed) for r, (episode, seed) in zip(runners, episodes, strict=True)]
        for tab, (episode, _), result in zip(tables, episodes, await run_batched(lanes), strict=True):
            played = PlayedEpisode(result)
            if tab.scorer is not None:
                played.metrics = tab.scorer.finish()
                played.headline = tab.scorer.describe_episode(played.metrics)
            played.usage = tab.planner.usage_for_episode(episode)
            out.append(played)
    finally:
        if close:
            for p in {id(t.planner): t.planner for t in tables}.values():
                await p.aclose()
    return out


class Progress(Observer):
    """Calls ``start(episode, max_steps)`` per episode and the callback it returns after every step
    (the CLI's progress bars)."""

    def __init__(self, start: Callable[[int, int], Callable[[], None] | None]) -> None:
        self.start = start

    def steps(self, table: Table, episode: int, seed: int) -> StepSink | None:
        tick = self.start(episode, getattr(table.env, "max_steps", table.cfg.max_steps or 0))
        return _Tick(tick) if tick is not None else None


class _Tick:
    def __init__(self, tick: Callable[[], None]) -> None:
        self.tick = tick

    def step(self, t, views, actions, skills, res) -> None:
        self.tick()

    def finish(self, outcome: str) -> None:
        return None


class EachEpisode(Observer):
    """Calls ``fn(played)`` after every episode (after the observers before it in the list)."""

    def __init__(self, fn: Callable[[PlayedEpisode], None]) -> None:
        self.fn = fn

    async def episode_end(self, table: Table, played: PlayedEpisode) -> None:
        self.fn(played)
