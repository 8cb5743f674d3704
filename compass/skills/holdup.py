"""Skills are kept only when they hold up: checked on recorded observations, then played.

Two checks, shared by bootstrapping from demonstrations (:mod:`compass.skills.bootstrap`) and by
the keep gate of VLM runs (:class:`KeepGate`):

- :func:`check_on_views`: compile a candidate in the sandbox and run it on recorded observations
  (the family's ``observations.jsonl``, or a demonstration's); the first failure is the verdict;
- :func:`evaluate_skill`: every agent of the team runs the candidate for a few short episodes;
  the family's scorer ranks it (``GameFamily.score_key``: ALEM's Total %), else the win rate.

The keep gate (``compass run --keep-gate eval|check|off``): a skill that synthesis or repair
writes during a run is first checked on the family's recorded observations (a failure is refused
at once: it is never used nor stored), then *staged* (used by the agents for the rest of the
episode, but not written). At the episode's end each staged skill is played on the run's training
seeds against the skill the library currently offers for the run's task (the one recorded as best
for it, else the top retrieval) and kept as a library version (author: the model; reason and
figures in its header) when it is at least as good; otherwise it is dropped, with the reason in the
trace and the summary. A kept skill that is better becomes the library's best for the task
(``_best.json``, versioned with it), which is what the library planner then plays.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from compass.core.errors import CompassError
from compass.core.family import GameFamily, get_family
from compass.sandbox import SkillError, compile_skill
from compass.sandbox.executors import candidate_executor
from compass.skills.library import SkillLibrary, header_length
from compass.skills.skill import Skill

log = logging.getLogger(__name__)

GateMode = Literal["off", "check", "eval"]


class HoldUpError(CompassError, ValueError):
    """A candidate that cannot even be evaluated (it does not load in a library of its own)."""


def check_on_views(
    skill: Skill, family: GameFamily, views: list, path: str = "<candidate>", isolation: str = "process"
) -> str | None:
    """Compile ``skill`` and run it on ``views`` in the sandbox; the first problem as a message, or None."""
    try:
        compiled = compile_skill(
            skill.code, skill.name, family.name, path, line_offset=header_length(skill.file_text())
        )
    except SkillError as e:
        return f"does not compile: {e}"
    if not views:
        return None
    with candidate_executor(family.skill_api, 0, isolation) as executor:
        results = executor.run_batch([(compiled, view) for view in views])
    for k, (view, r) in enumerate(zip(views, results, strict=True)):
        if r.error is not None:
            return f"fails on recorded observation {k} (agent {view.agent_id}, step {view.step}): [{r.error.kind}] {r.error}"
    return None


def family_views(family: GameFamily) -> list:
    """The family's recorded observations as views (empty when it ships none)."""
    from compass.skills.observations import load_observations

    if not family.observations_path.exists():
        return []
    return [family.view_from_text(t) for t in load_observations(family.observations_path)]


async def evaluate_skill(
    lib: SkillLibrary,
    skill: Skill,
    env_spec: str,
    seeds: list[int],
    max_steps: int | None = None,
    isolation: str = "process",
) -> dict[str, Any]:
    """Every agent runs ``skill`` (it need not be in ``lib``) for one episode per seed.

    Returns episodes, wins, win rate, mean return and, for a family with a scorer and a
    ``score_key``, ``score`` (the mean of that metric) with the per-episode ``scores``.
    """
    from compass.config import RunConfig
    from compass.core.family import family_for_env
    from compass.episode.pipeline import play, table
    from compass.planner.base import LibraryPlanner

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / lib.family).mkdir()
        (root / lib.family / f"{skill.name}.py").write_text(skill.file_text(), encoding="utf-8")
        one = SkillLibrary(root, lib.family, embedder=lib.embedder)
        if skill.name not in one:
            raise HoldUpError(f"candidate {skill.name} did not load: {'; '.join(map(str, one.problems))}")
        cfg = RunConfig(env=env_spec, max_steps=max_steps, isolation=isolation)
        family = family_for_env(env_spec)
        key = family.score_key if family.make_scorer is not None else None
        tab = table(cfg, LibraryPlanner(one, skill.name), scored=key is not None)
        # Every evaluation episode is the runner's episode 0 of its seed: nothing carries over.
        played = await play(tab, [(0, s) for s in seeds])
        wins = sum(p.result.outcome == "win" for p in played)
        rets = [p.result.ret for p in played]
        scores = [float(p.metrics[key]) for p in played] if key else []
    out: dict[str, Any] = {
        "episodes": len(seeds),
        "wins": wins,
        "win_rate": wins / len(seeds),
        "mean_return": float(np.mean(rets)),
    }
    if key:
        out.update(score_key=key, score=float(np.mean(scores)), scores=[round(x, 4) for x in scores])
    return out


def compare(candidate: dict[str, Any], best: dict[str, Any]) -> int:
    """-1, 0 or 1: the candidate's evaluation is worse than, as good as, or better than the best's.

    By the family's score when there is one, else the win rate; equal primaries are settled by
    the mean return (within 1e-9 both ways: as good)."""
    key = "score" if "score" in candidate and "score" in best else "win_rate"
    for k in (key, "mean_return"):
        diff = float(candidate[k]) - float(best[k])
        if abs(diff) > 1e-9:
            return 1 if diff > 0 else -1
    return 0


def describe(ev: dict[str, Any]) -> str:
    """``Total % 2.13`` / ``win 2/4`` and the mean return, for reasons and headers."""
    head = f"{ev['score_key']} {ev['score']:.3f}" if "score" in ev else f"win {ev['wins']}/{ev['episodes']}"
    return f"{head}, return {ev['mean_return']:.3f}"


@dataclass
class KeepGate:
    """Decides which skills written during a run stay in its library (see the module docstring)."""

    library: SkillLibrary
    env_spec: str
    task: str
    mode: GateMode = "eval"
    episodes: int = 2
    max_steps: int = 300
    seed: int = 0  # the run's first training seed: evaluations play seeds seed .. seed+episodes-1
    isolation: str = "process"
    log: list[dict[str, Any]] = field(default_factory=list)
    _views: list | None = None
    _baseline: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def family(self) -> GameFamily:
        return get_family(self.library.family)

    @property
    def seeds(self) -> list[int]:
        return list(range(self.seed, self.seed + self.episodes))

    def precheck(self, skill: Skill) -> str | None:
        """Run a new skill on the family's recorded observations: the first problem, or None."""
        if self._views is None:
            self._views = family_views(self.family)
        return check_on_views(skill, self.family, self._views, isolation=self.isolation)

    def refused(self, episode: int, skill: str, reason: str, model: str = "") -> dict[str, Any]:
        """Log a candidate that failed the check on recorded observations (it was never staged)."""
        entry = {
            "episode": episode,
            "skill": skill,
            "verdict": "refused",
            "stage": "check",
            "reason": reason[:500],
        }
        if model:
            entry["model"] = model
        self.log.append(entry)
        return entry

    def current_best(self) -> str | None:
        """The skill the library offers for the task now: the recorded best, else the top
        retrieval among skills that are not on trial."""
        best = self.library.best_for(self.task)
        if best is not None and best not in self.library.staged:
            return best
        staged = len(self.library.staged)
        hits = self.library.retrieve(self.task, k=1 + staged)
        return next((h.skill.name for h in hits if h.skill.name not in self.library.staged), None)

    async def review(self, episode: int) -> list[dict[str, Any]]:
        """Keep or drop every staged skill (oldest first); returns one log entry per skill."""
        out = []
        for name in list(self.library.staged):
            try:
                entry = await self._review_one(episode, name)
            except Exception as exc:  # an evaluation that breaks drops the candidate, not the run
                log.warning("keep gate: evaluating %s failed: %s: %s", name, type(exc).__name__, exc)
                if name in self.library.staged:
                    self.library.drop(name)
                entry = {
                    "episode": episode,
                    "skill": name,
                    "verdict": "dropped",
                    "stage": "eval",
                    "reason": f"evaluation failed: {type(exc).__name__}: {str(exc)[:300]}",
                }
            self.log.append(entry)
            out.append(entry)
        return out

    async def _review_one(self, episode: int, name: str) -> dict[str, Any]:
        skill = self.library.staged[name]
        entry: dict[str, Any] = {"episode": episode, "skill": name, "stage": self.mode}
        meta = {"gate": f"checked on {len(self._views or [])} recorded observations"}
        if self.mode == "check":
            stored = self.library.keep(name, meta, reason=f"keep {name}: passed the check ({meta['gate']})")
            return {**entry, "verdict": "kept", "stored_as": stored.name, "reason": meta["gate"]}
        best_name = self.current_best()
        cand = await evaluate_skill(
            self.library, skill, self.env_spec, self.seeds, self.max_steps, self.isolation
        )
        entry["candidate"] = cand
        where = f"seeds {self.seeds[0]}-{self.seeds[-1]} x {self.max_steps} steps on {self.env_spec}"
        if best_name is None:  # nothing to compare with: an empty library keeps what runs
            verdict, best = 1, None
        else:
            best_skill = self.library.skills[best_name]
            key = (best_name, best_skill.code_hash)
            if key not in self._baseline:
                self._baseline[key] = await evaluate_skill(
                    self.library, best_skill, self.env_spec, self.seeds, self.max_steps, self.isolation
                )
            best = self._baseline[key]
            entry["best"] = {"skill": best_name, **best}
            verdict = compare(cand, best)
        versus = f"{describe(best)} of {best_name}" if best is not None else "no skill to compare with"
        figures = f"{describe(cand)} vs {versus} ({where})"
        if verdict < 0:
            self.library.drop(name)
            return {**entry, "verdict": "dropped", "reason": f"worse than the library's best: {figures}"}
        meta["eval"] = figures
        became_best = verdict > 0
        record = None
        if became_best:
            record = {
                "task": self.task,
                "env": self.env_spec,
                "seeds": self.seeds,
                "max_steps": self.max_steps,
                "evaluation": {k: v for k, v in cand.items() if k != "scores"},
                "replaced": best_name,
            }
        how = "better than" if became_best else "as good as"
        stored = self.library.keep(
            name, meta, reason=f"keep {name}: {how} {best_name or 'nothing'}: {figures}", best_for=record
        )
        if stored.name != name and record is not None:
            record["skill"] = stored.name
        return {
            **entry,
            "verdict": "kept",
            "stored_as": stored.name,
            "became_best": became_best,
            "reason": f"{how} the library's best: {figures}",
        }

    def summary(self) -> dict[str, Any]:
        """For ``summary.json``: the settings and what happened to every candidate."""
        return {
            "mode": self.mode,
            "episodes": self.episodes,
            "max_steps": self.max_steps,
            "seeds": self.seeds,
            "task": self.task,
            "kept": [e["stored_as"] for e in self.log if e["verdict"] == "kept"],
            "dropped": [e["skill"] for e in self.log if e["verdict"] == "dropped"],
            "refused": [e["skill"] for e in self.log if e["verdict"] == "refused"],
            "best": self.library.best_for(self.task),
            "log": self.log,
        }
