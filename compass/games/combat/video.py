"""Followable combat frames for videos: whole map plus a side panel people can read.

The map shows unit ids and type letters, health bars, attack lines (who shoots whom this step),
dead units as grey crosses where they fell, ally attack ranges; the panel shows team and race
labels, each agent's unit, health and current skill, and a legend; the last frame carries the
outcome banner. Every label is kept inside the canvas (a margin around the map and clamped text).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from compass.core.video import FrameInfo
from compass.games.combat.render import ALLY, BG, ENEMY, GRID, SHORT

MAP_PX = 448
MARGIN = 28
TOP = 30
PANEL = 300
W = MARGIN * 2 + MAP_PX + PANEL
H = TOP + MARGIN * 2 + MAP_PX
DEAD = (120, 120, 120)
ALLY_SHOT = (120, 200, 255)
ENEMY_SHOT = (255, 140, 90)
TEXT = (225, 225, 225)
DIM = (150, 150, 150)
BANNER = {"win": (40, 150, 70), "loss": (170, 45, 45), "timeout": (170, 140, 40)}


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for path in ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",):
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            pass
    return ImageFont.load_default(size=size)


def _text(d: ImageDraw.ImageDraw, xy, s: str, fill=TEXT, size: int = 12, box=(0, 0, W, H)) -> None:
    """Draw ``s`` at ``xy`` moved inside ``box`` so it is never clipped."""
    f = _font(size)
    left, t, r, b = d.textbbox((0, 0), s, font=f)
    x = min(max(xy[0], box[0] + 1), box[2] - (r - left) - 1)
    y = min(max(xy[1], box[1] + 1), box[3] - (b - t) - 3)
    d.text((x, y), s, fill=fill, font=f)


def _bar(d, x, y, w, frac, fill=(80, 220, 90), h=4) -> None:
    d.rectangle([x, y, x + w, y + h], fill=(60, 60, 60))
    d.rectangle([x, y, x + w * max(0.0, min(1.0, float(frac))), y + h], fill=fill)


def attack_pairs(snap) -> list[tuple[int, int]]:
    """(attacker, target) unit indices of this step's attack orders between live units."""
    tgt = getattr(snap, "attack_target", None)
    if tgt is None:
        return []
    return [(u, int(t)) for u, t in enumerate(tgt) if t >= 0 and snap.alive[u]]


def render_video_frame(
    snap, info: FrameInfo, scenario: str = "", race: str = "", prev_alive: np.ndarray | None = None
) -> np.ndarray:
    """One followable frame (``W`` x ``H`` RGB) of the current step."""
    img = Image.new("RGB", (W, H), BG)
    d = ImageDraw.Draw(img)
    mw, mh = snap.map_size
    scale = MAP_PX / mw
    ox, oy = MARGIN, TOP + MARGIN
    map_box = (0, TOP, MARGIN * 2 + MAP_PX, H)

    def px(p):
        return ox + p[0] * scale, oy + (mh - p[1]) * scale

    d.rectangle([ox, oy, ox + MAP_PX, oy + mh * scale], outline=(90, 90, 60))
    for g in range(4, int(mw), 4):
        d.line([ox + g * scale, oy, ox + g * scale, oy + mh * scale], fill=GRID)
        d.line([ox, oy + g * scale, ox + MAP_PX, oy + g * scale], fill=GRID)
    n, na = len(snap.alive), snap.n_allies
    label = [f"A{u}" if u < na else f"E{u - na}" for u in range(n)]
    # dead units first (under the living), as grey crosses where they fell
    for u in range(n):
        if snap.alive[u]:
            continue
        cx, cy = px(snap.pos[u])
        just_died = prev_alive is not None and prev_alive[u]
        col = (255, 230, 80) if just_died else DEAD
        r = 7 if just_died else 5
        d.line([cx - r, cy - r, cx + r, cy + r], fill=col, width=3)
        d.line([cx - r, cy + r, cx + r, cy - r], fill=col, width=3)
        _text(d, (cx + 7, cy - 6), label[u], fill=col, size=10, box=map_box)
    for u in range(na):
        if snap.alive[u]:
            cx, cy = px(snap.pos[u])
            r = snap.attack[u] * scale
            d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=(55, 75, 120))
    for a, t in attack_pairs(snap):
        (x0, y0), (x1, y1) = px(snap.pos[a]), px(snap.pos[t])
        col = ALLY_SHOT if a < na else ENEMY_SHOT
        d.line([x0, y0, x1, y1], fill=col, width=2)
        d.ellipse([x1 - 3, y1 - 3, x1 + 3, y1 + 3], fill=col)
    shields = getattr(snap, "shield", None)
    for u in range(n):
        if not snap.alive[u]:
            continue
        cx, cy = px(snap.pos[u])
        r = 0.6 * scale
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=ENEMY if u >= na else ALLY, outline=(240, 240, 240))
        _text(d, (cx - 4, cy - 7), SHORT.get(snap.type_name(u), "?"), size=11, box=map_box)
        _bar(d, cx - r, cy - r - 7, 2 * r, snap.health[u])
        if shields is not None and shields[u] > 0:
            _bar(d, cx - r, cy - r - 12, 2 * r, shields[u], fill=(90, 200, 255), h=3)
        _text(d, (cx + r + 2, cy - r - 2), label[u], size=11, box=map_box)

    # title bar
    title = f"{scenario}   step {info.step}"
    _text(d, (MARGIN, 6), title, size=15)
    # side panel
    x0 = MARGIN * 2 + MAP_PX + 8
    box = (x0, 0, W, H)
    y = TOP + 6
    race_s = f" ({race})" if race else ""
    _text(d, (x0, y), f"Allies (blue){race_s}", fill=ALLY, size=13, box=box)
    y += 17
    if info.policy:
        _text(d, (x0, y), f"played by {info.policy}", fill=DIM, size=11, box=box)
        y += 15
    for u in range(na):
        hp = f"{snap.health[u] * 100:3.0f}%" if snap.alive[u] else "dead"
        line = f"A{u} {snap.type_name(u):<9} {hp}"
        _text(d, (x0, y), line, fill=TEXT if snap.alive[u] else DEAD, size=11, box=box)
        y += 14
        skill = info.skills[u] if u < len(info.skills) else None
        if skill and snap.alive[u]:
            _text(d, (x0 + 14, y), f"skill: {skill}", fill=(180, 210, 255), size=10, box=box)
            y += 13
    y += 6
    _text(d, (x0, y), f"Enemies (red){race_s}: SMAX heuristic AI", fill=ENEMY, size=13, box=box)
    y += 18
    for u in range(na, n):
        hp = f"{snap.health[u] * 100:3.0f}%" if snap.alive[u] else "dead"
        _text(
            d,
            (x0, y),
            f"E{u - na} {snap.type_name(u):<9} {hp}",
            fill=TEXT if snap.alive[u] else DEAD,
            size=11,
            box=box,
        )
        y += 14
    # legend, bottom of the panel
    y = H - 5 * 15 - 8
    d.line([x0, y - 6, W - 8, y - 6], fill=GRID)
    _text(d, (x0, y), "legend", fill=DIM, size=11, box=box)
    y += 15
    d.line([x0, y + 6, x0 + 22, y + 6], fill=ALLY_SHOT, width=2)
    _text(d, (x0 + 28, y), "ally attacks", size=10, box=box)
    d.line([x0 + 120, y + 6, x0 + 142, y + 6], fill=ENEMY_SHOT, width=2)
    _text(d, (x0 + 148, y), "enemy attacks", size=10, box=box)
    y += 15
    d.line([x0 + 4, y + 1, x0 + 14, y + 11], fill=DEAD, width=3)
    d.line([x0 + 4, y + 11, x0 + 14, y + 1], fill=DEAD, width=3)
    _text(d, (x0 + 28, y), "dead (yellow: died this step)", size=10, box=box)
    y += 15
    _text(d, (x0, y), "ring: ally attack range; bar: health", size=10, box=box)
    y += 15
    letters = ", ".join(f"{v}={k}" for k, v in SHORT.items() if k in _SMAX_TYPES)
    _text(d, (x0, y), letters, fill=DIM, size=9, box=box)

    if info.outcome:
        text = {
            "win": "VICTORY: all enemies destroyed",
            "loss": "DEFEAT: the team was destroyed",
            "timeout": "TIMEOUT: time limit reached",
        }.get(info.outcome, info.outcome.upper())
        overlay = Image.new("RGBA", (MAP_PX, 56), (*BANNER.get(info.outcome, (90, 90, 90)), 215))
        img.paste(overlay, (ox, oy + 6), overlay)
        d = ImageDraw.Draw(img)
        f = _font(20)
        left, t, r, b = d.textbbox((0, 0), text, font=f)
        d.text(
            (ox + (MAP_PX - (r - left)) / 2, oy + 6 + (56 - (b - t)) / 2 - 4),
            text,
            fill=(255, 255, 255),
            font=f,
        )
    return np.asarray(img)


_SMAX_TYPES = ("marine", "marauder", "stalker", "zealot", "zergling", "hydralisk")


def step_events(prev, snap) -> dict:
    """Attacks, damage (fractions of max health) and deaths between two snapshots of one episode."""
    na = snap.n_allies
    name = [f"ally {u}" if u < na else f"enemy {u - na}" for u in range(len(snap.alive))]
    attacks = [{"by": name[a], "target": name[t]} for a, t in attack_pairs(snap)]
    damage, deaths = {}, []
    if prev is not None:
        for u in range(len(snap.alive)):
            loss = float(prev.health[u] - (snap.health[u] if snap.alive[u] else 0.0))
            if prev.alive[u] and loss > 1e-6:
                damage[name[u]] = round(loss, 4)
            if prev.alive[u] and not snap.alive[u]:
                deaths.append(name[u])
    return {"attacks": attacks, "damage_taken": damage, "deaths": deaths}
