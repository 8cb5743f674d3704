"""The observation block shared by one decision's modules: text, minimap text, images, captions.

Built once per decision (frames are rendered and PNG-encoded once) and handed to every module, so
Perception, Synthesis and Repair describe the same moment and the images are never encoded twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from compass.comm.minimap import minimap_text
from compass.core.family import get_family
from compass.core.types import AgentView
from compass.vlm import to_png

log = logging.getLogger(__name__)

MINIMAP_SIZE = 96


@dataclass(frozen=True)
class ObservationBlock:
    """What one agent perceives at a decision point, in the forms the prompts use."""

    step: int
    text: str  # the family's text observation (what skills parse)
    minimap: str  # entities relayed by allies, one per line
    images: tuple[bytes, ...]  # PNGs: ego frame, minimap (empty with --no-image)
    image_names: tuple[str, ...]
    caption: str  # one-line summary (reflection's frame descriptions)
    relayed_in_text: bool = False  # the text already lists the relayed units (marked as relayed)

    @property
    def ego_png(self) -> bytes | None:
        return self.images[0] if self.images else None

    def minimap_for_perception(self) -> str:
        """Perception also reads ``text``: do not pay twice for relayed units listed there already."""
        if self.relayed_in_text:
            return "The units relayed by allies are listed in the description above (marked as relayed)."
        return self.minimap

    def introduction(self) -> str:
        """The prompts' ``<<<image_introduction>>>`` for the current moment."""
        if self.images:
            head = "\n".join(f"Screenshot {i + 1}: {name}." for i, name in enumerate(self.image_names))
        else:
            head = "No screenshot is attached; the text description follows."
        return f"{head}\nDescription (step {self.step}):\n{self.text}"


def build_observation(view: AgentView, minimap: str = "", images: bool = True) -> ObservationBlock:
    """The block for ``view``; ``minimap`` defaults to the relayed entities found in the view."""
    relayed = [e for e in view.entities if not e.visible]
    if not minimap:
        minimap = minimap_text(view, relayed)
    # Both families mark relayed units in their text ("[relayed by Ally #2 ...]", "[relayed by Agent 2 ...]").
    relayed_in_text = bool(relayed) and view.text.count("relayed by") >= len(relayed)
    pngs: list[bytes] = []
    names: list[str] = []
    if images:
        ego = _safe_frame(view)
        if ego is not None:
            pngs.append(to_png(ego))
            names.append(get_family(view.family).frame_legend)
        mini = view.extra.get("minimap_image") if isinstance(view.extra, dict) else None
        mini = mini if mini is not None else render_minimap(view)
        if mini is not None:
            pngs.append(to_png(mini))
            names.append(get_family(view.family).minimap_legend)
    return ObservationBlock(
        view.step, view.text, minimap, tuple(pngs), tuple(names), caption(view), relayed_in_text
    )


def _safe_frame(view: AgentView) -> np.ndarray | None:
    try:
        return view.frame()
    except RuntimeError as exc:  # an env that renders no frames, or not this step's
        log.debug("agent %d: no frame (%s)", view.agent_id, exc)
        return None


def render_minimap(view: AgentView, size: int = MINIMAP_SIZE) -> np.ndarray | None:
    """A small whole-map picture of what this agent knows (its own unit, seen and relayed units).

    North is up: the family's ``y_axis`` says whether its map ``y`` grows north or south.
    """
    own = view.own
    if not own.map_width or not own.map_height:
        return None
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (size, size), (24, 26, 32))
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, size - 1, size - 1], outline=(160, 160, 60))
    sx, sy = size / own.map_width, size / own.map_height
    # Image rows grow down: flip a map whose y grows north; grid rows (y grows south) map directly.
    south = get_family(view.family).y_axis == "south"

    def dot(x: float, y: float, color: tuple[int, int, int], r: float = 2.5) -> None:
        cx, cy = x * sx, (y * sy if south else size - y * sy)
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=color)

    for e in view.entities:
        color = ((220, 60, 60) if e.team == "enemy" else (70, 130, 230)) if e.visible else (240, 150, 40)
        dot(e.x, e.y, color)
    if view.alive:
        dot(own.x, own.y, (255, 255, 255), 3.5)
    return np.asarray(img)


def caption(view: AgentView) -> str:
    """One line: own health, and the enemies and allies known at this step."""
    if not view.alive:
        return f"step {view.step}: your unit is dead"
    enemies = [e for e in view.entities if e.team == "enemy"]
    allies = [e for e in view.entities if e.team == "ally"]
    seen = [e for e in enemies if e.visible]
    parts = [f"step {view.step}: own health {view.own.health:.2f}"]
    shield = getattr(view.obs, "shield", 0.0)  # families whose units have shields (combat)
    if shield:
        parts[0] += f", shield {shield:.2f}"
    if enemies:
        parts.append(
            f"{len(seen)} enemies in sight, {len(enemies) - len(seen)} relayed, "
            f"enemy health total {sum(e.health for e in enemies):.2f}, "
            f"nearest {min(e.distance for e in enemies):.2f} sight ranges away"
        )
    else:
        parts.append("no enemy known")
    parts.append(f"{len(allies)} allies known (health total {sum(a.health for a in allies):.2f})")
    return "; ".join(parts)
