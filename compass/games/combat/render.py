"""Fast combat renderers (Pillow): the whole map and one agent's ego view.

SMAX's own visualiser takes ~2 s a frame (and SMACv2 draws nothing without the game's window); these
take a few milliseconds, so frames can be made for every VLM decision and every video frame.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from PIL import Image, ImageDraw

from compass.core.types import AgentView
from compass.games.combat.text import CombatObs


class Snapshot(Protocol):
    """What the renderers read from an adapter's step copy (SMAX's and SMACv2's snapshots).

    A snapshot may also carry ``shield`` (fraction per unit); units with shields get a second bar.
    """

    pos: np.ndarray
    alive: np.ndarray
    health: np.ndarray
    n_allies: int
    attack: np.ndarray
    map_size: tuple[float, float]

    def type_name(self, u: int) -> str: ...


ALLY = (60, 130, 255)
ENEMY = (235, 70, 60)
RELAYED = (255, 170, 60)
BG = (28, 32, 36)
GRID = (44, 50, 56)
SHORT = {
    "marine": "m",
    "marauder": "M",
    "stalker": "S",
    "zealot": "Z",
    "zergling": "z",
    "hydralisk": "H",
    "colossus": "C",
    "medivac": "V",
    "baneling": "B",
}


def _health_bar(
    d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, frac: float, fill=(80, 220, 90), lift: float = 0.0
) -> None:
    w = 2 * r
    top = cy - r - 6 - lift
    d.rectangle([cx - r, top, cx + r, top + 3], fill=(60, 60, 60))
    d.rectangle([cx - r, top, cx - r + w * max(0.0, min(1.0, frac)), top + 3], fill=fill)


def _unit(
    d: ImageDraw.ImageDraw,
    cx: float,
    cy: float,
    r: float,
    color,
    label: str,
    kind: str,
    health: float,
    outline=None,
    shield: float = 0.0,
) -> None:
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=color, outline=outline, width=2)
    d.text((cx - 3, cy - 6), SHORT.get(kind, "?"), fill=(255, 255, 255))
    d.text((cx + r + 1, cy - r), label, fill=(230, 230, 230))
    _health_bar(d, cx, cy, r, health)
    if shield > 0:  # protoss shields (SMACv2); SMAX units have none
        _health_bar(d, cx, cy, r, shield, fill=(90, 200, 255), lift=4)


#: Pixels around the map in the global frame: a unit on the edge keeps its circle, bars and label.
EDGE = 18


def render_global(snap: Snapshot, step: int = 0, size: int = 384) -> np.ndarray:
    """The whole map: allies blue (A<i>), enemies red (E<j>), health bars, sight/attack rings.

    ``size`` is the frame's width; the map sits ``EDGE`` pixels inside it, so units at the top
    edge (whose health bars are drawn above them) are not cut off."""
    w, h = snap.map_size
    scale = (size - 2 * EDGE) / w
    img = Image.new("RGB", (size, int(h * scale) + 2 * EDGE), BG)
    d = ImageDraw.Draw(img)
    for g in range(0, int(w) + 1, 4):
        d.line([EDGE + g * scale, EDGE, EDGE + g * scale, EDGE + h * scale], fill=GRID)
    for g in range(0, int(h) + 1, 4):
        d.line([EDGE, EDGE + g * scale, EDGE + w * scale, EDGE + g * scale], fill=GRID)

    def px(p):  # world (y up) -> image (y down)
        return EDGE + p[0] * scale, EDGE + (h - p[1]) * scale

    shields = getattr(snap, "shield", None)
    for u in range(len(snap.alive)):
        if not snap.alive[u]:
            continue
        is_enemy = u >= snap.n_allies
        cx, cy = px(snap.pos[u])
        if not is_enemy:
            r = snap.attack[u] * scale
            d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=(70, 90, 140))
        label = f"E{u - snap.n_allies}" if is_enemy else f"A{u}"
        _unit(
            d,
            cx,
            cy,
            0.55 * scale,
            ENEMY if is_enemy else ALLY,
            label,
            snap.type_name(u),
            snap.health[u],
            shield=float(shields[u]) if shields is not None else 0.0,
        )
    d.text((4, 4), f"step {step}", fill=(220, 220, 220))
    return np.asarray(img)


def render_ego(snap: Snapshot, view: AgentView, size: int = 256) -> np.ndarray:
    """Agent-centred view of radius = sight range: what it sees, plus relayed entities (orange ring)."""
    img = Image.new("RGB", (size, size), BG)
    d = ImageDraw.Draw(img)
    half = size / 2
    scale = half / 1.15  # 1.0 = sight range; leave a margin for relayed units just outside
    d.ellipse([half - scale, half - scale, half + scale, half + scale], outline=(90, 90, 110))
    sr = view.own.attack_range / view.own.sight_range * scale
    d.ellipse([half - sr, half - sr, half + sr, half + sr], outline=(70, 90, 140))
    # Map edges inside the view, so the VLM sees where walls are.
    w, h = view.own.map_width, view.own.map_height
    sx, sy = view.own.x, view.own.y
    k = scale / view.own.sight_range
    d.rectangle(
        [half + (0 - sx) * k, half - (h - sy) * k, half + (w - sx) * k, half - (0 - sy) * k],
        outline=(160, 160, 60),
    )
    if view.alive:
        _unit(
            d,
            half,
            half,
            10,
            ALLY,
            f"A{view.agent_id} (you)",
            view.own.unit_type,
            view.own.health,
            outline=(255, 255, 255),
            shield=view.obs.shield if isinstance(view.obs, CombatObs) else 0.0,
        )
    for e in view.entities:
        rx, ry = np.clip(e.rel_x, -1.12, 1.12), np.clip(e.rel_y, -1.12, 1.12)
        cx, cy = half + rx * scale, half - ry * scale
        color = (ENEMY if e.team == "enemy" else ALLY) if e.visible else RELAYED
        label = f"{'E' if e.team == 'enemy' else 'A'}{e.id}"
        _unit(d, cx, cy, 8, color, label, e.unit_type, e.health, shield=e.shield)
    d.text((4, 4), f"step {view.step}  agent {view.agent_id}", fill=(220, 220, 220))
    return np.asarray(img)
