"""The global combat frame keeps units on the map's edges whole: a unit at the top edge had its
health bar (drawn above it) and half its circle cut off."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compass.games.combat.render import ALLY, ENEMY, render_global

GREEN = (80, 220, 90)  # a health bar's fill


@dataclass
class _Snap:
    pos: np.ndarray
    alive: np.ndarray
    health: np.ndarray
    n_allies: int
    attack: np.ndarray
    map_size: tuple[float, float]

    def type_name(self, u: int) -> str:
        return "stalker"


def test_units_on_every_edge_are_drawn_whole():
    # one ally on the top edge, one enemy in the top-right corner, one ally at the bottom-left corner
    snap = _Snap(
        pos=np.array([[16.0, 32.0], [32.0, 32.0], [0.0, 0.0]]),
        alive=np.array([True, True, True]),
        health=np.array([1.0, 1.0, 1.0]),
        n_allies=2,
        attack=np.array([2.0, 2.0, 2.0]),
        map_size=(32.0, 32.0),
    )
    frame = render_global(snap, size=384)
    assert frame.shape[1] == 384
    green = np.all(frame == GREEN, axis=-1)
    rows = np.nonzero(green.any(axis=1))[0]
    assert rows.min() > 0  # the top unit's bar is inside the frame, not cut at row 0
    # the two top units' bars share a row: both whole (2 r wide), none cut by a side of the frame
    r = 0.55 * (384 - 36) / 32
    assert int(green[rows.min()].sum()) >= 2 * int(2 * r)
    for colour in (ALLY, ENEMY):
        ys, xs = np.nonzero(np.all(frame == colour, axis=-1))
        assert ys.min() > 0 and xs.min() > 0 and xs.max() < frame.shape[1] - 1
