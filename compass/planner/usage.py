"""Per-episode accounting of the planner's VLM calls (tokens, cost, latency) and outcomes.

Latency lives here and in ``summary.json`` only: the trace must not contain wall-clock values.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from compass.vlm import Completion, UsageStats


class PlannerUsage:
    """Calls per episode and module, plus counts of planner events (syntheses, repairs, ...)."""

    def __init__(self) -> None:
        self._calls: dict[int, UsageStats] = defaultdict(UsageStats)
        self._by_module: dict[int, dict[str, UsageStats]] = defaultdict(lambda: defaultdict(UsageStats))
        self._events: dict[int, Counter[str]] = defaultdict(Counter)
        self._decisions: Counter[int] = Counter()
        self._answers: dict[int, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))

    def call(self, episode: int, module: str, completion: Completion) -> None:
        self._calls[episode].add(completion)
        self._by_module[episode][module].add(completion)

    def failed_call(self, episode: int, module: str) -> None:
        self._calls[episode].add_error(1)
        self._by_module[episode][module].add_error(1)

    def answer(self, episode: int, module: str, usable: bool) -> None:
        """Count one answer the planner could (``usable``) or could not use."""
        self._answers[episode][module]["usable" if usable else "unusable"] += 1

    def event(self, episode: int, name: str) -> None:
        """Count a planner outcome (``synthesized``, ``repaired``, ``no_answer``, ``kept``...)."""
        self._events[episode][name] += 1

    def decision(self, episode: int) -> None:
        self._decisions[episode] += 1

    def episode(self, episode: int) -> dict[str, Any]:
        """``usage_for_episode``: totals, per-module totals, decisions and planner events."""
        total = self._calls[episode].as_dict()
        decisions = self._decisions[episode]
        return {
            **_short(total),
            "decisions": decisions,
            "tokens_per_decision": round(total["total_tokens"] / decisions, 1) if decisions else 0.0,
            "by_module": {
                m: {**_short(s.as_dict()), **_answers(self._answers[episode][m])}
                for m, s in sorted(self._by_module[episode].items())
            },
            "events": dict(sorted(self._events[episode].items())),
        }

    def summary(self) -> dict[str, Any]:
        """All episodes together (``usage_summary``)."""
        total = UsageStats()
        modules: dict[str, UsageStats] = defaultdict(UsageStats)
        events: Counter[str] = Counter()
        answers: dict[str, Counter[str]] = defaultdict(Counter)
        for ep, stats in self._calls.items():
            _merge(total, stats)
            for m, s in self._by_module[ep].items():
                _merge(modules[m], s)
                answers[m].update(self._answers[ep][m])
        for counter in self._events.values():
            events.update(counter)
        out = total.as_dict()
        episodes = len(set(self._calls) | set(self._decisions))
        decisions = sum(self._decisions.values())
        return {
            **_short(out),
            "episodes": episodes,
            "decisions": decisions,
            "tokens_per_episode": round(out["total_tokens"] / episodes, 1) if episodes else 0.0,
            "tokens_per_decision": round(out["total_tokens"] / decisions, 1) if decisions else 0.0,
            "by_module": {
                m: {**_short(s.as_dict()), **_answers(answers[m])} for m, s in sorted(modules.items())
            },
            "events": dict(sorted(events.items())),
        }


def _answers(counts: Counter[str]) -> dict[str, Any]:
    usable, unusable = counts.get("usable", 0), counts.get("unusable", 0)
    answered = usable + unusable
    return {
        "usable": usable,
        "unusable": unusable,
        "usable_rate": round(usable / answered, 4) if answered else None,
    }


def _merge(into: UsageStats, other: UsageStats) -> None:
    into.calls += other.calls
    into.cached += other.cached
    into.errors += other.errors
    into.retries += other.retries
    into.prompt_tokens += other.prompt_tokens
    into.completion_tokens += other.completion_tokens
    into.cost_usd += other.cost_usd
    into.latency_s_total += other.latency_s_total
    into.latency_s_max = max(into.latency_s_max, other.latency_s_max)
    into.estimated_calls += other.estimated_calls


def _short(stats: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "calls",
        "cached",
        "errors",
        "retries",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "cost_usd",
        "latency_s_total",
        "latency_s_mean",
        "latency_s_max",
    )
    out = {k: stats[k] for k in keys}
    # Whether the token figures are the backend's own or estimated here (tiktoken/chars, image rules).
    estimated = stats.get("estimated_calls", 0)
    out["tokens"] = "reported" if estimated == 0 else f"estimated for {estimated} of {stats['calls']} calls"
    for k in ("latency_s_total", "latency_s_mean", "latency_s_max"):
        out[k] = round(out[k], 4)
    return out
