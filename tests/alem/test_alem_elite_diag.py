"""benchmarks/alem_elite_diag.py's per-creature records: how long an elite stays in view, how far it
wanders, where the team is when it is first seen (docs/alem.md "Hunting together, second pass")."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from alem_testlib import add_team
from test_alem_api import _obs

from compass.games.alem.names import DO, NOOP
from compass.games.alem.obs import Mob

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _team(positions, zombie, step):
    ds = []
    for i, pos in positions.items():
        d = _obs(["." * 30 for _ in range(12)], agent_id=i, step=step)
        d.position = pos
        add_team(d, positions)
        dx, dy = zombie[0] - pos[0], zombie[1] - pos[1]
        d.mobs.append(Mob(201, "zombie", "melee", *zombie, dx, dy, abs(dx) + abs(dy), 5.0, 2, 3))
        ds.append(d)
    return ds


def test_a_slot_records_its_time_in_view_its_wandering_and_the_team_at_first_sight(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    from alem_elite_diag import count_step

    rec = {"counts": Counter(), "mobs": {}}
    far = {0: (5, 5), 1: (15, 5), 2: (25, 5)}
    count_step(rec, _team(far, (6, 5), step=10), [NOOP, NOOP, NOOP])
    near = {0: (5, 5), 1: (8, 6), 2: (8, 4)}  # all three within 4 tiles of it, none next to it
    count_step(rec, _team(near, (6, 6), step=11), [DO, NOOP, NOOP])
    m = rec["mobs"]["0:201"]
    assert m["seen_steps"] == 2 and m["day_steps"] == 2
    assert m["box"] == [6, 5, 6, 6]  # it moved one tile south
    assert m["first_team"] == [1, 9, 19] and m["first_hour"] == 10 and m["first_alive"] == 3
    assert m["min_day_need_dist"] == 4  # the third agent's distance on the second step
    assert (
        m["met"] and m["max_adjacent"] == 1 and m["max_hits"] == 0
    )  # next to it on step 10; a Do from 2 tiles on 11
