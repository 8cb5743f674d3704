"""compass.util.grids: the cheap np.pad / np.isin give exactly numpy's answers."""

from __future__ import annotations

import numpy as np
import pytest

from compass.util.grids import isin_ids, pad2d


@pytest.mark.parametrize(
    ("dtype", "value"), [(np.int32, 1), (np.int8, -1), (np.float32, 0.0), (bool, True), (bool, False)]
)
@pytest.mark.parametrize("width", [1, 3, 13])
def test_pad2d_is_np_pad(dtype, value, width):
    a = (np.random.default_rng(width).random((48, 40)) * 7 - 2).astype(dtype)
    want = np.pad(a, width, constant_values=value)
    got = pad2d(a, width, value)
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("ids", [[], [0], [3, 5, 9], {2, 4, 41}, frozenset(range(0, 42, 3))])
def test_isin_ids_is_np_isin_also_for_unseen_and_large_values(ids):
    # -1 marks a tile never seen; values above the largest id must read False too.
    a = np.random.default_rng(0).integers(-3, 60, (48, 48)).astype(np.int16)
    got = isin_ids(a, ids)
    assert got.dtype == bool and np.array_equal(got, np.isin(a, list(ids)))
    got[:] = True  # a fresh array each call: the lookup table behind it is not changed
    assert np.array_equal(isin_ids(a, ids), np.isin(a, list(ids)))
