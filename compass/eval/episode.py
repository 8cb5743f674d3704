"""One eval episode as a pure function of (configuration, environment, seed) -> result row.

Used by local worker processes and by Ray tasks alike. Environments and read-only libraries are
cached per process (an episode resets them); a VLM episode starts from a fresh copy of its
library, so episodes never depend on which ones ran before in the same worker.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compass.comm import CommProtocol
from compass.config import SPEED_ONLY
from compass.core.controller import ALLY, ENEMY
from compass.core.errors import is_expected
from compass.core.family import family_for_env, make_env
from compass.episode.pipeline import play, play_batched, table
from compass.episode.runner import can_batch
from compass.episode.trace import RunWriter
from compass.eval.controllers import TeamEnv, UnitPlanners, parse_team, resolve, side_controllers, split_team
from compass.eval.spec import ConfigSpec, Job
from compass.skills.library import SkillLibrary, default_library_root

_ENVS: dict[tuple, Any] = {}
_LIBRARIES: dict[tuple, SkillLibrary] = {}


class EpisodeError(RuntimeError):
    """An episode failed; carries which one and, for unexpected errors, the worker's traceback."""

    def __init__(self, job_label: str, message: str, user_error: bool, tb: str = "") -> None:
        super().__init__(f"{job_label}: {message}")
        self.job_label, self.message, self.user_error, self.tb = job_label, message, user_error, tb

    def __reduce__(self):  # survive pickling across processes and Ray
        return (EpisodeError, (self.job_label, self.message, self.user_error, self.tb))


def label(job: Job) -> str:
    return f"config {job.config!r}, {job.env}, seed {job.seed}"


def _env(cfg, external_enemy: bool):
    key = (cfg.env, cfg.epo, cfg.max_steps, external_enemy)
    if key not in _ENVS:
        env = make_env(cfg.env, epo=cfg.epo, max_steps=cfg.max_steps, external_enemy=external_enemy)
        # Compile reset and step now, so an episode's wall time is play, not this worker's warm-up.
        env.reset(0)
        if external_enemy:
            env.step([0] * env.n_agents, [0] * env.n_enemies)
        else:
            env.step([0] * env.n_agents)
        _ENVS[key] = env
    return _ENVS[key]


def _shared_library(root: Path | None, family: str) -> SkillLibrary:
    key = (str(root) if root else None, family)
    if key not in _LIBRARIES:
        _LIBRARIES[key] = SkillLibrary(root, family)
    return _LIBRARIES[key]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)


def play_episode(job: Job) -> dict[str, Any]:
    """Play ``job`` and return its row; any failure is an :class:`EpisodeError` naming the episode."""
    try:
        return _play(job)
    except EpisodeError:
        raise
    except Exception as e:
        # Expected errors (a bad spec, a missing model: compass.core.errors) need no traceback.
        expected = is_expected(e)
        raise EpisodeError(label(job), f"{type(e).__name__}: {e}", expected, traceback.format_exc()) from None


@dataclass
class _Seat:
    """One job set up to play: its table, and what to close and remove afterwards."""

    job: Job
    cfg: Any
    family: Any
    table: Any
    writer: RunWriter
    team_env: Any
    tmp: Path

    def close(self, complete: bool) -> None:
        """``complete``: the episode ended; else (an error, Ctrl-C) its trace stays a partial file,
        so an episode without a row never leaves a ``trace.jsonl`` that passes for a finished one."""
        self.writer.close(complete=complete)
        if isinstance(self.team_env, TeamEnv):
            self.team_env.close()

    def row(self, played: Any, wall: float) -> dict[str, Any]:
        ep = played.result.as_dict()
        if played.metrics is not None:
            ep["metrics"] = played.metrics
        ep["vlm"] = played.usage or {}
        return episode_row(self.job.config, self.job.env, self.job.seed, ep, wall, self.family.name)


def _configured(job: Job) -> tuple[ConfigSpec, Any, Any, list | None]:
    """(spec, run config, family, enemy assignments or None for the env's own enemy) of ``job``."""
    spec = ConfigSpec(**job.config_fields)
    cfg = spec.run_config(job.env, job.seed, job.max_steps)
    family = family_for_env(cfg.env)
    if cfg.task is None:
        cfg = cfg.model_copy(update={"task": family.default_task})
    enemy = None if spec.enemy == "default" else parse_team(spec.enemy)
    return spec, cfg, family, enemy


def _seat(job: Job, env: Any | None = None) -> _Seat:
    """Set ``job`` up on ``env`` (default: this process's cached env of its configuration)."""
    spec, cfg, family, enemy = _configured(job)
    if env is None:
        env = _env(cfg, external_enemy=enemy is not None)
    ally_map = resolve(parse_team(spec.team), env.n_agents, "team")
    enemy_map = resolve(enemy, env.n_enemies, "enemy") if enemy is not None else {}
    kinds = {a.kind if a.kind != "compass" else cfg.planner for a in ally_map.values()}
    tmp = Path(tempfile.mkdtemp(prefix="compass-eval-"))
    try:
        if "vlm" in kinds:
            # The VLM evolves its library: start every episode from the same copy.
            src = (Path(cfg.library) / family.name) if cfg.library else family.seed_skills_dir
            shutil.copytree(
                src, tmp / "lib" / family.name, ignore=shutil.ignore_patterns("_stats.json", "__pycache__")
            )
            library = SkillLibrary(tmp / "lib", family.name)
        else:
            library = _shared_library(
                Path(cfg.library) if cfg.library else default_library_root(), family.name
            )

        by_agent, groups = split_team(ally_map, cfg, library)
        egroups: dict = {}
        for u, a in enemy_map.items():
            egroups.setdefault(a, []).append(u)
        ally_ctrl = side_controllers(groups, ALLY, env, family, library, cfg)
        enemy_ctrl = side_controllers(egroups, ENEMY, env, family, library, cfg)
        distinct = {id(p) for p in by_agent.values()}
        if len(distinct) == 1 and len(by_agent) == env.n_agents:
            planner = next(iter(by_agent.values()))
        else:
            planner = UnitPlanners(library, by_agent)
        enemy_comm = None
        if any(a.kind in ("skill", "library") for a in enemy_map.values()):
            enemy_comm = CommProtocol("multihop", seed=cfg.seed)
        team_env = (
            TeamEnv(env, ally_ctrl, enemy_ctrl or None, enemy_comm) if (ally_ctrl or enemy_ctrl) else env
        )

        run_dir = (
            Path(job.trace_root) / slug(job.config) / slug(job.env) / f"seed-{job.seed}"
            if job.trace_root
            else tmp / "run"
        )
        writer = RunWriter(run_dir)
        writer.trace(
            {
                "kind": "run_start",
                "config": cfg.model_dump(mode="json", exclude={"out", "run_id", *SPEED_ONLY}),
                "team": spec.team,
                "enemy": spec.enemy,
                "library": sorted(library.names()),
            }
        )
        if "library" in kinds or any(a.kind == "library" for a in enemy_map.values()):
            library.retrieve(cfg.task, k=1)  # loads the embedding model outside the timed episode
        tab = table(
            cfg,
            planner,
            env=team_env,
            writer=writer,
            score_env=env,
            external=frozenset(u for c in ally_ctrl for u in c.units),
        )
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _Seat(job, cfg, family, tab, writer, team_env, tmp)


def _play(job: Job) -> dict[str, Any]:
    seat = _seat(job)
    try:
        t0 = time.perf_counter()
        played = None
        try:
            (played,) = asyncio.run(play(seat.table, [(0, seat.cfg.seed)]))
            wall = time.perf_counter() - t0
        finally:
            seat.close(complete=played is not None)
        return seat.row(played, wall)
    finally:
        shutil.rmtree(seat.tmp, ignore_errors=True)


# --- batched episodes ------------------------------------------------------------------------------


def batch_key(job: Job) -> tuple | None:
    """Jobs with the same key can be played as one batch (:func:`play_batch`); None: this job
    plays alone. Batched: one configuration and env, no VLM planner (its calls and its library's
    evolution are per episode), the env's own enemy, and an env kind its family batches
    (``GameFamily.batch_envs``). Decided from the spec alone (no env is built)."""
    try:
        spec, cfg, family, enemy = _configured(job)
        kinds = {a.kind if a.kind != "compass" else cfg.planner for a in parse_team(spec.team)}
    except Exception:  # a bad spec: the job plays alone, where its error is reported (EpisodeError)
        return None
    if enemy is not None or cfg.env.partition(":")[0] not in family.batch_envs:
        return None
    if "vlm" in kinds:
        return None
    return (job.config, job.env, job.max_steps)


def _lane_envs(cfg: Any, n: int) -> list[Any]:
    """``n`` envs of ``cfg`` (one per episode of a batch), cached per process, the batched step
    compiled for ``n`` (so an episode's wall time is play, not this worker's warm-up)."""
    key = ("lanes", cfg.env, cfg.epo, cfg.max_steps)
    envs = _ENVS.setdefault(key, [])
    while len(envs) < n:
        envs.append(make_env(cfg.env, epo=cfg.epo, max_steps=cfg.max_steps))
    if (key, n) not in _ENVS:
        for e in envs[:n]:
            e.reset(0)
        envs[0].step_batch([e.step_idle() for e in envs[:n]])
        _ENVS[(key, n)] = True
    return envs[:n]


def play_batch(jobs: list[Job]) -> list[dict[str, Any]]:
    """Rows of ``jobs`` (one :func:`batch_key`, distinct seeds) played as one batch of episodes in
    one vmapped env (:func:`compass.episode.pipeline.play_batched`); each row equals
    :func:`play_episode`'s for its job, but ``wall_s``, the batch's wall time shared equally.
    Jobs that cannot be batched, or a batch of one, are played one by one."""
    keys = {batch_key(j) for j in jobs}
    if len(jobs) <= 1 or None in keys or len(keys) > 1:
        return [play_episode(j) for j in jobs]
    what = f"config {jobs[0].config!r}, {jobs[0].env}, seeds {', '.join(str(j.seed) for j in jobs)} (batched)"
    try:
        return _play_batch(jobs)
    except EpisodeError:
        raise
    except Exception as e:
        raise EpisodeError(what, f"{type(e).__name__}: {e}", is_expected(e), traceback.format_exc()) from None


def _play_batch(jobs: list[Job]) -> list[dict[str, Any]]:
    _, cfg, _, _ = _configured(jobs[0])
    envs = _lane_envs(cfg, len(jobs))
    if not can_batch(envs[0]):  # the family lists the env kind, but this env cannot (its options)
        return [play_episode(j) for j in jobs]
    seats: list[_Seat] = []
    played = None
    try:
        for job, env in zip(jobs, envs, strict=True):
            seats.append(_seat(job, env))
        t0 = time.perf_counter()
        played = asyncio.run(play_batched([s.table for s in seats], [(0, s.cfg.seed) for s in seats]))
        wall = (time.perf_counter() - t0) / len(jobs)
    finally:
        for s in seats:
            s.close(complete=played is not None)  # a batch's rows come all at once, or none
            shutil.rmtree(s.tmp, ignore_errors=True)
    return [s.row(p, wall) for s, p in zip(seats, played, strict=True)]


def episode_row(
    config: str, env: str, seed: int, ep: dict, wall_s: float, family: str = ""
) -> dict[str, Any]:
    """The flat result row of one episode (``ep`` is an ``EpisodeResult.as_dict()`` plus usage/metrics)."""
    usage = ep.get("vlm") or {}
    metrics = ep.get("metrics") or ep.get(family) or {}
    core = {
        "episode",
        "seed",
        "outcome",
        "return",
        "steps",
        "skill_errors",
        "decisions",
        "vlm",
        "metrics",
        family,
    }
    return {
        "config": config,
        "env": env,
        "seed": int(seed),
        "outcome": ep["outcome"],
        "win": int(ep["outcome"] == "win"),
        "return": float(ep["return"]),
        "steps": int(ep["steps"]),
        "skill_errors": int(ep.get("skill_errors", 0)),
        "decisions": int(ep.get("decisions", 0)),
        "vlm_calls": int(usage.get("calls", 0)),
        "prompt_tokens": int(usage.get("prompt_tokens", 0)),
        "completion_tokens": int(usage.get("completion_tokens", 0)),
        "cost_usd": float(usage.get("cost_usd", 0.0)),
        "wall_s": round(float(wall_s), 3),
        "metrics": {
            k: v for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)
        },
        "extra": {k: v for k, v in ep.items() if k not in core},
    }
