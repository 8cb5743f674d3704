"""Local memory: one agent's bounded history of what it saw, did, planned and earned."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

KINDS = ("observation", "frame", "action", "subtask", "reflection", "reward")


@dataclass(frozen=True, slots=True)
class Entry:
    """One remembered item and the env step it belongs to."""

    step: int
    value: Any


class LocalMemory:
    """Bounded per-kind deques; adding is O(1) and old items fall off the front.

    Frames are kept by reference (no copy) and get a smaller default capacity since they are
    large; pass a copy if you mutate the array afterwards.
    """

    def __init__(
        self,
        capacity: int = 64,
        frame_capacity: int = 8,
        capacities: Mapping[str, int] | None = None,
    ):
        sizes = {kind: capacity for kind in KINDS}
        sizes["frame"] = frame_capacity
        for kind, size in (capacities or {}).items():
            self._check_kind(kind)
            sizes[kind] = size
        for kind, size in sizes.items():
            if size < 1:
                raise ValueError(f"capacity of {kind!r} must be >= 1, got {size}")
        self._items: dict[str, deque[Entry]] = {kind: deque(maxlen=size) for kind, size in sizes.items()}

    @staticmethod
    def _check_kind(kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown memory kind {kind!r}; valid kinds: {', '.join(KINDS)}")

    def add(self, kind: str, step: int, value: Any) -> None:
        """Remember ``value`` under ``kind`` for env step ``step``."""
        self._check_kind(kind)
        self._items[kind].append(Entry(step, value))

    def add_observation(self, step: int, text: str) -> None:
        self.add("observation", step, text)

    def add_frame(self, step: int, frame: np.ndarray) -> None:
        self.add("frame", step, frame)

    def add_action(self, step: int, action: int) -> None:
        self.add("action", step, action)

    def add_subtask(self, step: int, subtask: str) -> None:
        self.add("subtask", step, subtask)

    def add_reflection(self, step: int, text: str) -> None:
        self.add("reflection", step, text)

    def add_reward(self, step: int, reward: float) -> None:
        self.add("reward", step, float(reward))

    def entries(self, kind: str, n: int | None = None) -> list[Entry]:
        """The last ``n`` entries of ``kind`` (all if ``n`` is None), oldest first."""
        self._check_kind(kind)
        items = self._items[kind]
        if n is None or n >= len(items):
            return list(items)
        if n <= 0:
            return []
        return list(islice(items, len(items) - n, None))

    def recent(self, kind: str, n: int) -> list[Any]:
        """The last ``n`` values of ``kind``, oldest first."""
        return [e.value for e in self.entries(kind, n)]

    def latest(self, kind: str, default: Any = None) -> Any:
        """The newest value of ``kind``, or ``default`` when there is none."""
        self._check_kind(kind)
        items = self._items[kind]
        return items[-1].value if items else default

    def cumulative_reward(self, since_step: int | None = None) -> float:
        """Sum of remembered rewards from ``since_step`` on (all remembered if None)."""
        return float(
            sum(e.value for e in self._items["reward"] if since_step is None or e.step >= since_step)
        )

    def __len__(self) -> int:
        return sum(len(items) for items in self._items.values())

    def clear(self) -> None:
        """Forget everything (new episode)."""
        for items in self._items.values():
            items.clear()
