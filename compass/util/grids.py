"""Two numpy operations on small 2-D grids (map memories, views) without their generic setup.

``np.pad`` and ``np.isin`` spend most of their time on argument handling when the grid is 48x48:
~15 and ~30 us a call, against ~2 and ~5 us here. Skills and the ALEM views call them several
times an agent a step.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import numpy as np


def pad2d(a: np.ndarray, width: int, value: Any = 0) -> np.ndarray:
    """``np.pad(a, width, constant_values=value)`` for a 2-D array (same dtype, same values)."""
    out = np.full((a.shape[0] + 2 * width, a.shape[1] + 2 * width), value, dtype=a.dtype)
    out[width : width + a.shape[0], width : width + a.shape[1]] = a
    return out


def isin_ids(a: np.ndarray, ids: Iterable[int]) -> np.ndarray:
    """``np.isin(a, ids)`` for an integer array and small non-negative ``ids`` (a lookup table).

    Any other value of ``a`` (negative, say "never seen", or beyond the largest id) is False.
    """
    return np.take(_table(tuple(sorted(set(ids)))), a + 1, mode="clip")


@lru_cache(maxsize=256)
def _table(ids: tuple[int, ...]) -> np.ndarray:
    """``table[v + 1]`` is whether ``v`` is in ``ids``; the first and last entries are False, so
    clipped indices (values below 0 or above the largest id) read False."""
    table = np.zeros((ids[-1] if ids else 0) + 3, dtype=bool)
    if ids:
        table[np.asarray(ids) + 1] = True
    return table
