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
episode, but not written). At the episode's end each staged skill and the skill the library
currently offers for the run's task (the one recorded as best for it, else the top retrieval)
are played on the same gate seeds (``--keep-gate-seed``.., default 1000.., away from the tuning
seeds 0-999 and held-out seeds), episode i of both on seed i. A one-sided paired t-test on the
per-seed difference of the family's figure (its score, else the return) decides: the candidate is
kept, as a library version (author: the model; the test's n, mean difference, CI and p in the
commit message and its header) and as the task's best (``_best.json``), only when it is better at
error rate ``alpha`` (5 %); a tie or a worse result drops it, with the figures in the trace and
the summary. So a candidate no better than the best is kept with probability at most ``alpha``
(measured: ``benchmarks/bench_gate.py``). With ``judge="author"`` only the agent that wrote the
skill runs it in the candidate's episodes; the others keep running the best (a role's skill is
not judged as a whole-team policy).
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


class _SplitPlanner:
    """Role-aware evaluation: ``agents`` run ``skill``, every other agent runs ``others``."""

    def __init__(self, library: SkillLibrary, skill: str, others: str, agents: set[int]) -> None:
        from compass.planner.base import LibraryPlanner

        self.library = library
        self.mine, self.rest, self.agents = (
            LibraryPlanner(library, skill),
            LibraryPlanner(library, others),
            agents,
        )

    async def decide(self, ctx: Any) -> Any:
        return await (self.mine if ctx.agent_id in self.agents else self.rest).decide(ctx)

    def observe_step(self, episode: int, step: int, views: list, reward: float) -> None: ...

    def usage_for_episode(self, episode: int) -> None:
        return None

    def usage_summary(self) -> None:
        return None

    async def aclose(self) -> None: ...


async def evaluate_skill(
    lib: SkillLibrary,
    skill: Skill,
    env_spec: str,
    seeds: list[int],
    max_steps: int | None = None,
    isolation: str = "process",
    agents: list[int] | None = None,
    others: Skill | None = None,
) -> dict[str, Any]:
    """Every agent runs ``skill`` (it need not be in ``lib``) for one episode per seed.

    With ``agents`` and ``others`` (role-aware judging) only those agents run ``skill``; the rest
    run ``others``. Returns episodes, wins, win rate, mean return, the per-episode ``returns`` and
    ``outcomes`` and, for a family with a scorer and a ``score_key``, ``score`` (the mean of that
    metric) with the per-episode ``scores``.
    """
    from compass.config import RunConfig
    from compass.core.family import family_for_env
    from compass.episode.pipeline import play, table
    from compass.planner.base import LibraryPlanner

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / lib.family).mkdir()
        split = agents is not None and others is not None and others.name != skill.name
        for sk in (skill, others) if split else (skill,):
            (root / lib.family / f"{sk.name}.py").write_text(sk.file_text(), encoding="utf-8")
        one = SkillLibrary(root, lib.family, embedder=lib.embedder)
        if skill.name not in one:
            raise HoldUpError(f"candidate {skill.name} did not load: {'; '.join(map(str, one.problems))}")
        planner = (
            _SplitPlanner(one, skill.name, others.name, set(agents))
            if split
            else LibraryPlanner(one, skill.name)
        )
        cfg = RunConfig(env=env_spec, max_steps=max_steps, isolation=isolation)
        family = family_for_env(env_spec)
        key = family.score_key if family.make_scorer is not None else None
        tab = table(cfg, planner, scored=key is not None)
        # Every evaluation episode is the runner's episode 0 of its seed: nothing carries over.
        played = await play(tab, [(0, s) for s in seeds])
        wins = sum(p.result.outcome == "win" for p in played)
        rets = [p.result.ret for p in played]
        outcomes = [p.result.outcome for p in played]
        scores = [float(p.metrics[key]) for p in played] if key else []
    out: dict[str, Any] = {
        "episodes": len(seeds),
        "wins": wins,
        "win_rate": wins / len(seeds),
        "mean_return": float(np.mean(rets)),
        "returns": [round(float(x), 4) for x in rets],
        "outcomes": outcomes,
    }
    if key:
        out.update(score_key=key, score=float(np.mean(scores)), scores=[round(x, 4) for x in scores])
    return out


def episode_figures(ev: dict[str, Any]) -> list[float]:
    """The per-episode figure the gate compares: the family's score (ALEM: Total %), else the
    episode return (combat: damage dealt plus the win bonus, so it orders wins above losses)."""
    return [float(x) for x in (ev["scores"] if "scores" in ev else ev["returns"])]


def judge(candidate: dict[str, Any], best: dict[str, Any], alpha: float = 0.05) -> dict[str, Any]:
    """The paired test of two evaluations on the same seeds (:func:`compass.eval.stats.paired_test`):
    verdict "better", "tie" or "worse" at one-sided error rate ``alpha``, with n, mean difference,
    CI and p-values."""
    from compass.eval.stats import paired_test

    out = paired_test(episode_figures(candidate), episode_figures(best), alpha)
    out["figure"] = candidate.get("score_key", "return")
    return out


def describe_test(test: dict[str, Any]) -> str:
    """``n 20, mean diff +0.120 [90% CI +0.031, +0.209], p 0.012 (paired t, one-sided)``."""
    lo, hi = test["ci"]
    return (
        f"{test['figure']} n {test['n']}, mean diff {test['mean_diff']:+.3f} "
        f"[{test['ci_level']:.0%} CI {lo:+.3f}, {hi:+.3f}], p {test['p_better']:.3g} "
        f"({test['test']}, alpha {test['alpha']})"
    )


def describe(ev: dict[str, Any]) -> str:
    """``Total % 2.13`` / ``win 2/4`` and the mean return, for reasons and headers."""
    head = f"{ev['score_key']} {ev['score']:.3f}" if "score" in ev else f"win {ev['wins']}/{ev['episodes']}"
    return f"{head}, return {ev['mean_return']:.3f}"


GATE_SEED = 1000  # gate evaluations play seeds 1000.. (tuning seeds are 0-999, held-out ones 2000..)


@dataclass
class KeepGate:
    """Decides which skills written during a run stay in its library (see the module docstring)."""

    library: SkillLibrary
    env_spec: str
    task: str
    mode: GateMode = "eval"
    episodes: int = 20
    max_steps: int = 300
    seed: int = GATE_SEED  # evaluations play seeds seed .. seed+episodes-1, the same for every candidate
    alpha: float = 0.05  # one-sided error rate of the paired test: P(keep | no better than the best)
    judge: Literal["team", "author"] = "team"  # author: only the agent that wrote it plays the candidate
    isolation: str = "process"
    log: list[dict[str, Any]] = field(default_factory=list)
    authors: dict[str, int] = field(default_factory=dict)  # staged skill -> the agent that wrote it
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
        best_skill = self.library.skills[best_name] if best_name is not None else None
        author = self.authors.get(name) if self.judge == "author" else None
        agents = [author] if author is not None and best_skill is not None else None
        cand = await evaluate_skill(
            self.library, skill, self.env_spec, self.seeds, self.max_steps, self.isolation, agents, best_skill
        )
        entry["candidate"] = cand
        who = f"agent {author} runs it, the others {best_name}" if agents else "every agent runs it"
        where = f"seeds {self.seeds[0]}-{self.seeds[-1]} x {self.max_steps} steps on {self.env_spec}, {who}"
        if best_skill is None:  # nothing to compare with: an empty library keeps what runs
            test, best = None, None
            verdict = "better"
        else:
            key = (best_name, best_skill.code_hash)
            if key not in self._baseline:
                self._baseline[key] = await evaluate_skill(
                    self.library, best_skill, self.env_spec, self.seeds, self.max_steps, self.isolation
                )
            best = self._baseline[key]
            entry["best"] = {"skill": best_name, **best}
            test = judge(cand, best, self.alpha)
            entry["test"] = test
            verdict = test["verdict"]
        versus = f"{describe(best)} of {best_name}" if best is not None else "no skill to compare with"
        figures = (
            f"{describe(cand)} vs {versus}" + (f"; {describe_test(test)}" if test else "") + f" ({where})"
        )
        if verdict == "worse":
            self.library.drop(name)
            return {**entry, "verdict": "dropped", "reason": f"worse than the library's best: {figures}"}
        if verdict == "tie":  # not shown better: keeping it would keep luck (and fill the library)
            self.library.drop(name)
            return {
                **entry,
                "verdict": "dropped",
                "reason": f"not shown better than the library's best: {figures}",
            }
        meta["eval"] = figures
        record = {
            "task": self.task,
            "env": self.env_spec,
            "seeds": self.seeds,
            "max_steps": self.max_steps,
            "evaluation": {k: v for k, v in cand.items() if k not in ("scores", "returns", "outcomes")},
            "replaced": best_name,
        }
        if test is not None:
            record["test"] = {k: test[k] for k in ("n", "mean_diff", "ci", "ci_level", "p_better", "alpha")}
        if agents:
            record["agents"] = agents
        stored = self.library.keep(
            name,
            meta,
            reason=f"keep {name}: better than {best_name or 'nothing'}: {figures}",
            best_for=record,
        )
        if stored.name != name:
            record["skill"] = stored.name
        return {
            **entry,
            "verdict": "kept",
            "stored_as": stored.name,
            "became_best": True,
            "reason": f"better than the library's best: {figures}",
        }

    def summary(self) -> dict[str, Any]:
        """For ``summary.json``: the settings and what happened to every candidate."""
        return {
            "mode": self.mode,
            "episodes": self.episodes,
            "alpha": self.alpha,
            "judge": self.judge,
            "rule": "paired t-test on the same seeds, one-sided: kept when p(better) < alpha",
            "max_steps": self.max_steps,
            "seeds": self.seeds,
            "task": self.task,
            "kept": [e["stored_as"] for e in self.log if e["verdict"] == "kept"],
            "dropped": [e["skill"] for e in self.log if e["verdict"] == "dropped"],
            "refused": [e["skill"] for e in self.log if e["verdict"] == "refused"],
            "best": self.library.best_for(self.task),
            "log": self.log,
        }
