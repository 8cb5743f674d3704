"""LocalMemory: bounded per-kind history."""

import numpy as np
import pytest

from compass.planner.local_memory import LocalMemory


def test_recent_is_bounded_and_oldest_first():
    mem = LocalMemory(capacity=3)
    for step in range(5):
        mem.add_observation(step, f"obs {step}")
    assert mem.recent("observation", 2) == ["obs 3", "obs 4"]
    assert mem.recent("observation", 10) == ["obs 2", "obs 3", "obs 4"]
    assert mem.recent("observation", 0) == []
    assert [e.step for e in mem.entries("observation")] == [2, 3, 4]
    assert mem.latest("observation") == "obs 4"


def test_kinds_are_separate_and_frames_have_their_own_capacity():
    mem = LocalMemory(capacity=4, frame_capacity=2, capacities={"reflection": 1})
    for step in range(3):
        mem.add_frame(step, np.zeros((2, 2, 3), np.uint8) + step)
        mem.add_action(step, step + 6)
        mem.add_reflection(step, f"r{step}")
    mem.add_subtask(0, "scout")
    assert [int(f[0, 0, 0]) for f in mem.recent("frame", 5)] == [1, 2]
    assert mem.recent("action", 5) == [6, 7, 8]
    assert mem.recent("reflection", 5) == ["r2"]
    assert mem.latest("subtask") == "scout" and mem.latest("reward", 0.0) == 0.0
    assert len(mem) == 2 + 3 + 1 + 1
    mem.clear()
    assert len(mem) == 0


def test_cumulative_reward():
    mem = LocalMemory()
    for step, r in enumerate([1.0, 0.5, 2.0]):
        mem.add_reward(step, r)
    assert mem.cumulative_reward() == 3.5
    assert mem.cumulative_reward(since_step=1) == 2.5


def test_unknown_kind_and_bad_capacity():
    mem = LocalMemory()
    with pytest.raises(ValueError, match="valid kinds: observation, frame"):
        mem.recent("observations", 1)
    with pytest.raises(ValueError, match="capacity"):
        LocalMemory(capacity=0)
