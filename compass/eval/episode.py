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
from pathlib import Path
from typing import Any

from compass.comm import CommProtocol
from compass.core.controller import ALLY, ENEMY
from compass.core.errors import is_expected
from compass.core.family import family_for_env, make_env
from compass.episode.pipeline import play, table
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


def _play(job: Job) -> dict[str, Any]:
    spec = ConfigSpec(**job.config_fields)
    cfg = spec.run_config(job.env, job.seed, job.max_steps)
    family = family_for_env(cfg.env)
    if cfg.task is None:
        cfg = cfg.model_copy(update={"task": family.default_task})
    enemy = None if spec.enemy == "default" else parse_team(spec.enemy)
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
                "config": cfg.model_dump(mode="json", exclude={"out", "run_id"}),
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
        t0 = time.perf_counter()
        try:
            (played,) = asyncio.run(play(tab, [(0, cfg.seed)]))
            wall = time.perf_counter() - t0
        finally:
            writer.close()
            if isinstance(team_env, TeamEnv):
                team_env.close()
        ep = played.result.as_dict()
        if played.metrics is not None:
            ep["metrics"] = played.metrics
        ep["vlm"] = played.usage or {}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return episode_row(job.config, job.env, job.seed, ep, wall, family.name)


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
