"""ALEM scores: Base%, Coord.% and Total%, two ways.

Each achievement has a tier weight (basic 1, intermediate 3, advanced 5, very advanced 8); the
category maxima are the weight sums, 217 base (66 achievements), 159 coordination (27) and 376
total (93). The leaderboard's "reward bounds" 66/27/93 are these achievement counts, not other
normalisers: both scorings below divide by 217/159/376.

- **Team** (``team_base_pct``, ``team_coord_pct``, ``team_total_pct``): an achievement counts once
  if ANY agent unlocked it; its weighted sum over the category maximum. This is alem's
  ``compute_score`` ``Team/normal_reward_pct_of_max``, ``Team/coord_reward_pct_of_max`` and
  ``Team/reward_pct_of_max``, which ``scripts/make_submission.py`` turns into the leaderboard's
  Base/Coord./Total (and the ALEM paper's Table 1). Use these beside the leaderboard.
- **Agent mean** (``base_pct``, ``coord_pct``, ``total_pct``): each agent's own weighted sum over
  the maximum, averaged over the agents (alem's ``Agent{i}/..._pct_of_max`` averaged). compass's
  results before issue 23 used this; it is never above the team score (an agent's unlocks are a
  subset of the team's) and equals it only when every agent unlocked the same achievements.

The game's per-step reward also carries 0.1 x health change; the maxima are pure achievement
sums, so the scores use achievements only (as ``compute_score`` does).

The one-level ``overworld`` variant can only unlock 57 of the 93 achievements. Its agent-mean
scores are reported against the full-game maxima by default (comparable with the full game) or,
with ``normalisers="overworld"``, against what the overworld offers (38 / 159 / 197); its team
scores always use the overworld maxima, as ``compute_score`` does for a one-level game. Either way
only overworld-reachable achievements count there: the Debug env grants DEFEAT_NECROMANCER to
everyone at step 0 (its boss counter starts "beaten" with one level).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compass.eval.stats import bootstrap_mean_ci
from compass.games.alem.names import (
    ACHIEVEMENT_WEIGHTS,
    ACHIEVEMENTS,
    FIRST_COORD_ACHIEVEMENT,
    OVERWORLD_ACHIEVEMENTS,
)

BASE_MAX = 217
COORD_MAX = 159
TOTAL_MAX = 376
N_ACH = len(ACHIEVEMENTS)
_WEIGHTS = np.asarray(ACHIEVEMENT_WEIGHTS, dtype=np.float64)
_IS_COORD = np.arange(N_ACH) >= FIRST_COORD_ACHIEVEMENT
_OVERWORLD = np.isin(np.arange(N_ACH), sorted(OVERWORLD_ACHIEVEMENTS))

# Table 1 of the ALEM paper: (Base%, Coord.%, Total%) per difficulty, for side-by-side reports.
PAPER_TABLE1 = {
    "easy": {
        "gemini-3.1-pro-high": (18.1, 18.0, 18.1),
        "MARL 1B": (21.0, 22.0, 21.4),
        "LLM average": (5.7, 6.6, 6.1),
    },
    "medium": {
        "gemini-3.1-pro-high": (15.1, 23.4, 18.6),
        "MARL 1B": (20.1, 19.8, 19.9),
        "LLM average": (5.5, 7.0, 6.1),
    },
    "hard": {
        "gemini-3.1-pro-high": (13.8, 17.5, 15.4),
        "MARL 1B": (13.6, 17.6, 15.3),
        "LLM average": (5.6, 6.9, 6.2),
    },
}


@dataclass(frozen=True)
class AgentScore:
    """One agent's episode: rewards per category, their percentages of the maxima, what it unlocked."""

    agent_id: int
    base_reward: float
    coord_reward: float
    base_pct: float
    coord_pct: float
    total_pct: float
    achievements: tuple[str, ...]
    steps_survived: int
    death_cause: str | None = None  # None: alive at the end (compass.games.alem.deaths labels)
    # Times a teammate revived it (alem's revive); steps_survived and death_cause are its first death's.
    revivals: int = 0


@dataclass(frozen=True)
class EpisodeScore:
    """The team's episode: agent-averaged percentages (the paper's numbers) and the per-agent detail."""

    base_pct: float
    coord_pct: float
    total_pct: float
    agents: tuple[AgentScore, ...]
    steps: int
    outcome: str = ""
    team_achievements: tuple[str, ...] = ()  # unlocked by any agent
    # The leaderboard's scoring: achievements unlocked by any agent, weighted, over the maxima.
    team_base_pct: float = 0.0
    team_coord_pct: float = 0.0
    team_total_pct: float = 0.0

    def as_dict(self) -> dict:
        return {
            "base_pct": self.base_pct,
            "coord_pct": self.coord_pct,
            "total_pct": self.total_pct,
            "team_base_pct": self.team_base_pct,
            "team_coord_pct": self.team_coord_pct,
            "team_total_pct": self.team_total_pct,
            "steps": self.steps,
            "outcome": self.outcome,
            "team_achievements": list(self.team_achievements),
            "agents": [a.__dict__ | {"achievements": list(a.achievements)} for a in self.agents],
        }


def normaliser_values(normalisers: str = "paper") -> tuple[float, float, float]:
    """(base, coord, total) maxima: ``paper`` 217/159/376, ``overworld`` 38/159/197."""
    if normalisers == "paper":
        return float(BASE_MAX), float(COORD_MAX), float(TOTAL_MAX)
    if normalisers == "overworld":
        w = _WEIGHTS * _OVERWORLD
        return float(w[~_IS_COORD].sum()), float(w[_IS_COORD].sum()), float(w.sum())
    raise ValueError(f"unknown normalisers {normalisers!r}; use 'paper' or 'overworld'")


def score_episode(
    achievements: Sequence[Sequence[bool]] | np.ndarray,
    steps_survived: Sequence[int],
    steps: int,
    outcome: str = "",
    overworld: bool = False,
    normalisers: str = "paper",
    death_causes: Sequence[str | None] | None = None,
    revivals: Sequence[int] | None = None,
) -> EpisodeScore:
    """Score one episode from the (n_agents, 93) achievement matrix at its end.

    Both scorings (module docstring): agent mean (``base_pct``...) and team (``team_base_pct``...).
    ``overworld`` restricts counting to achievements the one-level variant can unlock;
    ``death_causes`` (per agent, ``None`` = survived) and ``revivals`` (per agent, times revived)
    are carried into each :class:`AgentScore`.
    Percentages are in percent (0-100).
    """
    ach = np.asarray(achievements, dtype=bool)
    if ach.ndim != 2 or ach.shape[1] != N_ACH:
        raise ValueError(f"achievements must be (n_agents, {N_ACH}), got {ach.shape}")
    if overworld:
        ach = ach & _OVERWORLD
    b_max, c_max, t_max = normaliser_values(normalisers)
    agents = []
    for i, row in enumerate(ach):
        base = float((_WEIGHTS * row * ~_IS_COORD).sum())
        coord = float((_WEIGHTS * row * _IS_COORD).sum())
        agents.append(
            AgentScore(
                agent_id=i,
                base_reward=base,
                coord_reward=coord,
                base_pct=100 * base / b_max,
                coord_pct=100 * coord / c_max,
                total_pct=100 * (base + coord) / t_max,
                achievements=tuple(ACHIEVEMENTS[k] for k in np.nonzero(row)[0]),
                steps_survived=int(steps_survived[i]),
                death_cause=death_causes[i] if death_causes is not None else None,
                revivals=int(revivals[i]) if revivals is not None else 0,
            )
        )
    union = ach.any(axis=0)
    team = tuple(ACHIEVEMENTS[k] for k in np.nonzero(union)[0])
    tb_max, tc_max, tt_max = normaliser_values("overworld" if overworld else "paper")
    team_base = float((_WEIGHTS * union * ~_IS_COORD).sum())
    team_coord = float((_WEIGHTS * union * _IS_COORD).sum())
    return EpisodeScore(
        base_pct=float(np.mean([a.base_pct for a in agents])),
        coord_pct=float(np.mean([a.coord_pct for a in agents])),
        total_pct=float(np.mean([a.total_pct for a in agents])),
        agents=tuple(agents),
        steps=int(steps),
        outcome=outcome,
        team_achievements=team,
        team_base_pct=100 * team_base / tb_max,
        team_coord_pct=100 * team_coord / tc_max,
        team_total_pct=100 * (team_base + team_coord) / tt_max,
    )


@dataclass
class EpisodeTracker:
    """Follows an episode step by step (from ``StepResult.info``) and scores it at the end."""

    n_agents: int = 3
    overworld: bool = False
    normalisers: str = "paper"
    steps: int = 0
    death_step: list[int | None] = field(default_factory=list)
    death_cause: list[str | None] = field(default_factory=list)
    revivals: list[int] = field(default_factory=list)
    achievements: np.ndarray | None = None
    outcome: str = "running"

    def __post_init__(self) -> None:
        self.death_step = [None] * self.n_agents
        self.death_cause = [None] * self.n_agents
        self.revivals = [0] * self.n_agents

    def update(self, info: dict, outcome: str = "running") -> None:
        """Record one step's ``info`` (keys ``alive``, ``achievements``, ``timestep``; ``deaths``,
        ``revived``).

        An agent's first death counts: its survival ends there and its cause is that death's. A
        teammate may revive it (alem's revive); the revivals are counted, and a later death of
        the revived agent changes neither its survival nor its cause.
        """
        self.steps = int(info.get("timestep", self.steps + 1))
        deaths = info.get("deaths") or [None] * self.n_agents
        for i, back in enumerate(info.get("revived") or ()):
            self.revivals[i] += bool(back)
        for i, alive in enumerate(info["alive"]):
            if not alive and self.death_step[i] is None:
                self.death_step[i] = self.steps
                self.death_cause[i] = deaths[i] or "unknown"
        self.achievements = np.asarray(info["achievements"], dtype=bool)
        self.outcome = outcome

    def score(self) -> EpisodeScore:
        """The episode's :class:`EpisodeScore` so far."""
        ach = self.achievements if self.achievements is not None else np.zeros((self.n_agents, N_ACH), bool)
        survived = [self.steps if d is None else d for d in self.death_step]
        causes = [
            c if d is not None else None for c, d in zip(self.death_cause, self.death_step, strict=True)
        ]
        return score_episode(
            ach,
            survived,
            self.steps,
            self.outcome,
            self.overworld,
            self.normalisers,
            death_causes=causes,
            revivals=self.revivals,
        )


def bootstrap_ci(
    values: Iterable[float], n: int = 10000, alpha: float = 0.05, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap ``(1 - alpha)`` confidence interval of the mean of ``values``."""
    _, lo, hi = bootstrap_mean_ci(list(values), n, alpha, seed)
    return lo, hi


SCORE_KEYS = ("base_pct", "coord_pct", "total_pct", "team_base_pct", "team_coord_pct", "team_total_pct")


def summarise(episodes: Sequence[EpisodeScore], n: int = 10000, alpha: float = 0.05, seed: int = 0) -> dict:
    """Means over episodes with bootstrap CIs: both scorings' Base%, Coord.%, Total%, steps survived,
    achievements, causes of death (first deaths), revivals."""
    if not episodes:
        return {"episodes": 0}
    out: dict = {"episodes": len(episodes)}
    for key in SCORE_KEYS:
        vals = [getattr(e, key) for e in episodes]
        lo, hi = bootstrap_ci(vals, n, alpha, seed)
        out[key] = {"mean": float(np.mean(vals)), "ci95": [lo, hi]}
    survived = [float(np.mean([a.steps_survived for a in e.agents])) for e in episodes]
    lo, hi = bootstrap_ci(survived, n, alpha, seed)
    out["steps_survived"] = {"mean": float(np.mean(survived)), "ci95": [lo, hi]}
    # Per agent, pooled over episodes (issue 23's survival target is a median per agent).
    out["steps_survived_median_per_agent"] = float(
        np.median([a.steps_survived for e in episodes for a in e.agents])
    )
    out["steps"] = float(np.mean([e.steps for e in episodes]))
    counts = [float(np.mean([len(a.achievements) for a in e.agents])) for e in episodes]
    out["achievements_per_agent"] = float(np.mean(counts))
    freq: dict[str, int] = {}
    for e in episodes:
        for a in e.agents:
            for name in a.achievements:
                freq[name] = freq.get(name, 0) + 1
    total_agents = sum(len(e.agents) for e in episodes)
    out["achievement_rates"] = {k: v / total_agents for k, v in sorted(freq.items(), key=lambda kv: -kv[1])}
    out["death_causes"] = death_cause_counts(episodes)
    out["revivals"] = sum(a.revivals for e in episodes for a in e.agents)
    return out


def death_cause_counts(episodes: Sequence[EpisodeScore]) -> dict[str, int]:
    """How many agents ended their survival to each cause (``survived`` = alive at the end), most first.

    An agent counts once, by its first death, even if a teammate revived it and it died again."""
    counts: dict[str, int] = {}
    for e in episodes:
        for a in e.agents:
            key = a.death_cause or "survived"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class AlemScorer:
    """The ALEM paper's metrics (Base%, Coord.%, Total%, achievements, survival) for a run's episodes."""

    def __init__(self, env: Any) -> None:
        self.overworld = getattr(env, "scenario", "") == "overworld"
        self.n_agents = env.n_agents
        self.scores: list[EpisodeScore] = []
        self.tracker: EpisodeTracker | None = None

    def start(self) -> None:
        self.tracker = EpisodeTracker(n_agents=self.n_agents, overworld=self.overworld)

    def on_step(self, episode: int, t: int, res: Any) -> None:
        self.tracker.update(res.info, res.outcome)

    def finish(self) -> dict:
        score = self.tracker.score()
        self.scores.append(score)
        return score.as_dict()

    def summary(self) -> dict:
        return summarise(self.scores)

    def describe_episode(self, metrics: dict) -> str:
        deaths = [
            f"{a['agent_id']}: {a['death_cause']} @ {a['steps_survived']}"
            + (f" (revived {a['revivals']}x)" if a.get("revivals") else "")
            for a in metrics.get("agents", [])
            if a.get("death_cause")
        ]
        return (
            f"Base {metrics['base_pct']:.1f}% Coord {metrics['coord_pct']:.1f}% "
            f"Total {metrics['total_pct']:.1f}% (team {metrics.get('team_total_pct', 0.0):.1f}%)"
            + (f"  deaths {', '.join(deaths)}" if deaths else "")
        )

    def headline(self, summary: dict) -> str:
        line = "  ".join(
            f"{name} {summary[key]['mean']:.1f}% [{summary[key]['ci95'][0]:.1f}, {summary[key]['ci95'][1]:.1f}]"
            for name, key in (("Base", "base_pct"), ("Coord.", "coord_pct"), ("Total", "total_pct"))
        )
        team = summary.get("team_total_pct")
        if team:  # the leaderboard's scoring (any agent's unlocks count for the team)
            line += f"  team Total {team['mean']:.1f}% [{team['ci95'][0]:.1f}, {team['ci95'][1]:.1f}]"
        causes = summary.get("death_causes")
        if causes:
            line += "  deaths: " + ", ".join(f"{k} {v}" for k, v in causes.items())
        if summary.get("revivals"):
            line += f"  revivals {summary['revivals']}"
        return line
