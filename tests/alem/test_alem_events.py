"""ALEM kill events: a rise of the level's kill counter is a kill; a DEFEAT_ achievement names the killer."""

from __future__ import annotations

import numpy as np

from compass.games.alem.events import kill_events


def test_first_kill_of_a_kind_names_the_agent_and_the_mob():
    before, after = np.zeros(9, dtype=np.int32), np.zeros(9, dtype=np.int32)
    after[0] = 1
    ev = kill_events(before, after, [[], ["DEFEAT_ZOMBIE", "COLLECT_WOOD"], []])
    assert ev == [
        {"kind": "kill", "agent": 1, "level": 0, "mob": "zombie", "text": "agent 1 killed a zombie (level 0)"}
    ]


def test_later_kills_count_but_name_no_agent_and_nothing_happens_without_a_rise():
    before = np.array([3, 0, 0])
    ev = kill_events(before, np.array([3, 2, 0]), [[], [], []])
    assert [e["kind"] for e in ev] == ["kill", "kill"] and all(e["agent"] is None for e in ev)
    assert all(e["level"] == 1 for e in ev)
    # An achievement with no counter rise (or no previous counters: the first step) is no kill.
    assert kill_events(before, before.copy(), [["DEFEAT_ZOMBIE"], [], []]) == []
    assert kill_events(None, before, [[], [], []]) == []
    # ALEM's own spelling of the orc soldier achievement reads correctly.
    (e,) = kill_events(np.array([0]), np.array([1]), [[], [], ["DEFEAT_ORC_SOLIDER"]])
    assert e["agent"] == 2 and e["mob"] == "orc soldier"
