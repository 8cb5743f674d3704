"""Followable ALEM frames for videos: the map with labelled agents, a HUD per agent, their ego views.

The map (numpy renderer, 16 px tiles, shown at half size) carries each agent's id and role beside
its sprite; the panel lists per agent its role, health/food/drink/energy bars, level and current
skill; the agents' egocentric pixel views sit under the panel; a step counter is in the title and
the last frame carries the outcome banner.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from compass.core.video import FrameInfo
from compass.games.alem.names import role_of
from compass.games.alem.render import AGENT_COLOURS

BG = (24, 26, 30)
TEXT = (225, 225, 225)
DIM = (150, 150, 150)
TOP = 30
PANEL = 420
BARS = (
    ("health", (220, 70, 70)),
    ("food", (230, 160, 60)),
    ("drink", (70, 150, 230)),
    ("energy", (230, 220, 80)),
)
BANNER = {"win": (40, 150, 70), "loss": (170, 45, 45), "timeout": (170, 140, 40)}


@cache
def _font(size: int):
    try:
        return ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


def _text(d, xy, s, fill=TEXT, size=12, box=None) -> None:
    f = _font(size)
    if box is not None:
        left, t, r, b = d.textbbox((0, 0), s, font=f)
        xy = (
            min(max(xy[0], box[0] + 1), box[2] - (r - left) - 1),
            min(max(xy[1], box[1] + 1), box[3] - (b - t) - 3),
        )
    d.text(xy, s, fill=fill, font=f)


def _label(d, xy, s: str, fill, box, placed: list) -> None:
    """Text on a dark plate (readable over any tile), kept inside ``box``, below labels it would overlap."""
    f = _font(11)
    left, t, r, b = d.textbbox((0, 0), s, font=f)
    x = min(max(xy[0], box[0] + 1), box[2] - (r - left) - 3)
    y = min(max(xy[1], box[1] + 1), box[3] - (b - t) - 5)
    w, h = r - left + 4, b - t + 5
    while any(x < px + pw and px < x + w and y < py + ph and py < y + h for px, py, pw, ph in placed):
        y += h
    placed.append((x - 2, y - 1, w, h))
    d.rectangle([x - 2, y - 1, x + (r - left) + 2, y + (b - t) + 4], fill=(15, 15, 15))
    d.text((x, y), s, fill=fill, font=f)


def render_video_frame(
    s, map_rgb: np.ndarray, egos: list[np.ndarray], info: FrameInfo, scenario: str = ""
) -> np.ndarray:
    """One frame from numpy state ``s``, the full-map picture and the agents' ego views."""
    small = map_rgb[::2, ::2]
    mh, mw = small.shape[:2]
    ego_h = max((e.shape[0] for e in egos), default=0)
    ego_w = max((e.shape[1] for e in egos), default=0)
    scale = 1 if ego_w * len(egos) <= PANEL else 0
    if not scale and egos:  # halve ego views that would not fit side by side
        egos = [e[::2, ::2] for e in egos]
        ego_h, ego_w = egos[0].shape[:2]
    W = mw + PANEL + 24
    H = max(TOP + mh + 8, TOP + 8 + 4 * 62 + ego_h + 40)
    W += W % 2
    H += H % 2
    img = Image.new("RGB", (W, H), BG)
    img.paste(Image.fromarray(np.ascontiguousarray(small)), (8, TOP))
    d = ImageDraw.Draw(img)
    map_box = (8, TOP, 8 + mw, TOP + mh)
    n = len(s.player_position)
    placed: list = []
    for i in range(n):
        r, c = (int(v) for v in np.asarray(s.player_position)[i])
        x, y = 8 + c * 8, TOP + r * 8
        col = tuple(int(v) for v in AGENT_COLOURS[i % 3])
        alive = bool(s.player_alive[i])
        label = f"A{i} {role_of(i)}" + ("" if alive else " (dead)")
        d.rectangle([x - 1, y - 1, x + 9, y + 9], outline=col if alive else (120, 120, 120), width=2)
        _label(d, (x + 11, y - 3), label, col if alive else (150, 150, 150), map_box, placed)
    level = int(s.player_level)
    _text(d, (8, 6), f"{scenario}   step {info.step}   level {level}", size=15)
    x0 = mw + 20
    box = (x0, 0, W, H)
    y = TOP
    for i in range(n):
        col = tuple(int(v) for v in AGENT_COLOURS[i % 3])
        alive = bool(s.player_alive[i])
        _text(d, (x0, y), f"A{i} {role_of(i)}" + ("" if alive else "  dead"), fill=col, size=13, box=box)
        skill = info.skills[i] if i < len(info.skills) else None
        if skill and alive:
            _text(d, (x0 + 150, y + 1), f"skill: {skill}", fill=(180, 210, 255), size=10, box=box)
        y += 18
        for k, (name, bc) in enumerate(BARS):
            v = float(getattr(s, f"player_{name}")[i])
            bx = x0 + k * 100
            _text(d, (bx, y), f"{name} {v:.0f}", fill=DIM, size=10, box=box)
            d.rectangle([bx, y + 14, bx + 90, y + 19], fill=(60, 60, 60))
            d.rectangle([bx, y + 14, bx + 90 * max(0.0, min(1.0, v / 9.0)), y + 19], fill=bc)
        y += 44
    for i, ego in enumerate(egos):
        ex = x0 + i * (ego_w + 6)
        if ex + ego.shape[1] > W:
            break
        img.paste(Image.fromarray(np.ascontiguousarray(ego)), (ex, y + 16))
        _text(d, (ex, y), f"A{i} sees", fill=tuple(int(v) for v in AGENT_COLOURS[i % 3]), size=10, box=box)
    y = H - 18
    legend = "frame colour: A0 warrior red, A1 forager green, A2 miner blue; tile border: yellow sync, magenta handover"
    _text(d, (8, y), legend, fill=DIM, size=10, box=(0, 0, W, H))
    if info.outcome:
        text = {
            "win": "VICTORY: the final boss is beaten",
            "loss": "DEFEAT: all agents died",
            "timeout": "TIME LIMIT reached",
        }.get(info.outcome, info.outcome.upper())
        overlay = Image.new("RGBA", (mw, 50), (*BANNER.get(info.outcome, (90, 90, 90)), 215))
        img.paste(overlay, (8, TOP + 4), overlay)
        d = ImageDraw.Draw(img)
        _text(d, (20, TOP + 17), text, fill=(255, 255, 255), size=18, box=map_box)
    return np.asarray(img)
