"""A full-map ALEM renderer in numpy (alem-env ships only egocentric renderers).

Tiles come from alem's own block textures; mobs are alpha-blended sprites; agents are their
player sprite with a coloured frame (warrior red, forager green, miner blue); coordination tiles
get a border (yellow sync, magenta handover). Night is not shaded: this is an overview.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

AGENT_COLOURS = np.array([[220, 50, 50], [40, 180, 60], [60, 110, 230]], dtype=np.uint8)
SYNC_COLOUR = np.array([250, 220, 40], dtype=np.uint8)
HANDOVER_COLOUR = np.array([230, 60, 220], dtype=np.uint8)


@dataclass(frozen=True)
class TileSet:
    """Textures at one tile size, as uint8/float numpy arrays."""

    size: int
    blocks: np.ndarray  # (n_blocks, s, s, 3) uint8
    items: np.ndarray  # (n_items, s, s, 4) float (rgb, alpha)
    mobs: dict[str, tuple[np.ndarray, np.ndarray]]  # kind -> (textures, alphas) (n, s, s, 3) float
    player: np.ndarray  # (s, s, 3) float
    player_alpha: np.ndarray  # (s, s, 1) float


def load_tileset(size: int = 16) -> TileSet:
    """Textures from alem's texture cache (imports alem; ~13 s the first time in a process)."""
    from alem.alem_coop.constants import TEXTURES

    t = TEXTURES[size]
    blocks = np.asarray(t["block_textures"]).clip(0, 255).astype(np.uint8)
    items = _shrink(np.asarray(t["full_map_item_textures"]).astype(np.float32), size)
    mobs = {
        kind: (
            np.asarray(t[f"{kind}_mob_textures"], dtype=np.float32),
            np.asarray(t[f"{kind}_mob_texture_alphas"], dtype=np.float32),
        )
        for kind in ("melee", "ranged", "passive")
    }
    player_rgba = np.asarray(t["player_textures"], dtype=np.float32)[0]  # (s, s, 4), facing-agnostic sprite
    return TileSet(
        size,
        blocks,
        items,
        mobs,
        player_rgba[..., :3],
        player_rgba[..., 3:4] / 255.0 if player_rgba[..., 3].max() > 1 else player_rgba[..., 3:4],
    )


def _shrink(full: np.ndarray, size: int) -> np.ndarray:
    """alem stores item textures at full-map size; take one tile from the top-left."""
    return full[:, :size, :size, :] if full.shape[1] >= size else full


def render_map(s: Any, tiles: TileSet) -> np.ndarray:
    """RGB (48*size, 48*size, 3) uint8 picture of the current level of numpy state ``s``."""
    lvl = int(s.player_level)
    m = np.asarray(s.map[lvl])
    h, w = m.shape
    k = tiles.size
    # (h, w, k, k, 3) -> (h*k, w*k, 3): one fancy-index, no Python loop over tiles.
    img = tiles.blocks[m].transpose(0, 2, 1, 3, 4).reshape(h * k, w * k, 3).copy()
    items = np.asarray(s.item_map[lvl])
    for r, c in zip(*np.nonzero(items), strict=True):
        tex = tiles.items[int(items[r, c])]
        alpha = (tex[..., 3:4] / 255.0) if tex[..., 3].max() > 1 else tex[..., 3:4]
        _blend(img, r, c, k, tex[..., :3], alpha)
    coord = np.asarray(s.coordination_map[lvl])
    for r, c in zip(*np.nonzero(coord), strict=True):
        _border(img, r, c, k, SYNC_COLOUR if coord[r, c] > 0 else HANDOVER_COLOUR, 1)
    for kind, attr in (("melee", "melee_mobs"), ("ranged", "ranged_mobs"), ("passive", "passive_mobs")):
        mobs = getattr(s, attr)
        tex, alpha = tiles.mobs[kind]
        for j in np.nonzero(np.asarray(mobs.mask[lvl]))[0]:
            r, c = (int(v) for v in mobs.position[lvl][j])
            t = int(mobs.type_id[lvl][j]) % len(tex)
            _blend(img, r, c, k, tex[t], alpha[t])
    for i, (r, c) in enumerate(np.asarray(s.player_position)):
        if not bool(s.player_alive[i]):
            continue
        _blend(img, int(r), int(c), k, tiles.player, tiles.player_alpha)
        _border(img, int(r), int(c), k, AGENT_COLOURS[i % len(AGENT_COLOURS)], max(1, k // 8))
    return img


def _blend(img: np.ndarray, r: int, c: int, k: int, rgb: np.ndarray, alpha: np.ndarray) -> None:
    if not (0 <= r * k < img.shape[0] and 0 <= c * k < img.shape[1]):
        return
    tile = img[r * k : (r + 1) * k, c * k : (c + 1) * k].astype(np.float32)
    a = np.clip(alpha, 0.0, 1.0)
    img[r * k : (r + 1) * k, c * k : (c + 1) * k] = (tile * (1 - a) + rgb * a).clip(0, 255).astype(np.uint8)


def _border(img: np.ndarray, r: int, c: int, k: int, colour: np.ndarray, width: int) -> None:
    y0, x0 = r * k, c * k
    img[y0 : y0 + width, x0 : x0 + k] = colour
    img[y0 + k - width : y0 + k, x0 : x0 + k] = colour
    img[y0 : y0 + k, x0 : x0 + width] = colour
    img[y0 : y0 + k, x0 + k - width : x0 + k] = colour
