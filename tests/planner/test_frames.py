"""Image legends come from the game family, and the minimap is drawn the way the family's text
describes the map (ALEM: grid rows, y grows south; combat: world coordinates, y grows north)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from compass.core.family import get_family
from compass.planner.observation import build_observation, render_minimap
from compass.skills.check import load_observations
from tests.planner.conftest import make_view

WHITE, BLUE = (255, 255, 255), (70, 130, 230)


def _rows(img: np.ndarray, color: tuple[int, int, int]) -> float:
    """Mean image row of the pixels of ``color`` (a dot)."""
    rows, _ = np.nonzero((img == np.array(color, dtype=img.dtype)).all(axis=-1))
    assert len(rows), f"no {color} pixel"
    return float(rows.mean())


def _alem_views():
    fam = get_family("alem")
    return [fam.view_from_text(t) for t in load_observations(fam.observations_path)]


def test_alem_minimap_matches_the_text_orientation():
    """A teammate the text places south of the agent (larger y) is drawn below it, and north above."""
    south = north = 0
    for view in _alem_views():
        if not view.alive:
            continue
        own_row = None
        for mate in view.allies:
            dy = mate.y - view.own.y
            if abs(dy) < 4 or not mate.visible:
                continue
            img = render_minimap(view.with_entities((mate,)))
            own_row = _rows(img, WHITE)
            mate_row = _rows(img, BLUE)
            if dy > 0:
                assert mate_row > own_row, (view.own.y, mate.y)
                south += 1
            else:
                assert mate_row < own_row, (view.own.y, mate.y)
                north += 1
    assert south and north  # both directions occur in the recorded observations


def test_combat_minimap_keeps_north_up():
    view = make_view()
    ally = replace(view.allies[0], x=view.own.x, y=view.own.y + 8)  # north of the unit (y grows north)
    img = render_minimap(view.with_entities((ally,)))
    assert _rows(img, BLUE) < _rows(img, WHITE)


def test_image_legends_are_the_familys():
    combat = build_observation(make_view())
    assert combat.image_names == (get_family("combat").frame_legend, get_family("combat").minimap_legend)
    assert "shoot range" in combat.image_names[0]

    alem_view = next(v for v in _alem_views() if v.alive)
    alem_view.render = lambda v: np.zeros((16, 16, 3), dtype=np.uint8)
    alem = build_observation(alem_view)
    fam = get_family("alem")
    assert alem.image_names == (fam.frame_legend, fam.minimap_legend)
    for name in alem.image_names:  # ALEM frames have neither shoot-range rings nor "enemies"
        assert "shoot range" not in name and "ring" not in name and "enemies" not in name
    assert "y grows south" in alem.image_names[1]
    assert "Screenshot 1: " + fam.frame_legend in alem.introduction()
