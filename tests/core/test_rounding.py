"""compass.util.rounding: the fast round gives exactly ``round``'s floats, ties and zeros' signs included."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from compass.util.rounding import round1, round2, round3, rounder


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (a != a and b != b)
    return a == b


def _values(ndigits: int) -> list:
    rng = np.random.default_rng(ndigits)
    scale = 10.0**ndigits
    halves = (rng.integers(-50_000, 50_000, 20_000) + 0.5) / scale  # decimal ties, as doubles
    return (
        np.concatenate(
            [
                rng.uniform(-2, 2, 20_000),  # unit positions and distances
                rng.uniform(0, 1, 20_000),  # health fractions
                rng.normal(0, 60, 10_000),
                rng.uniform(-1e-3, 1e-3, 10_000),  # rounds to zero: the sign must stay
                halves,
                np.nextafter(halves, np.inf),
                np.nextafter(halves, -np.inf),
                rng.uniform(-3e6, 3e6, 5_000),  # beyond the fast path's range
            ]
        ).tolist()
        + [0.0, -0.0, 5e-324, -5e-324, 0.0005, -0.0005, 0.125, 2.675, 1e300, -1e300]
        + [float("inf"), float("-inf"), float("nan")]
    )


@pytest.mark.parametrize("ndigits", [0, 1, 2, 3, 6])
def test_same_floats_as_round(ndigits):
    fast = {1: round1, 2: round2, 3: round3}.get(ndigits) or rounder(ndigits)
    bad = [x for x in _values(ndigits) if not _same(fast(x), round(x, ndigits))]
    assert not bad, bad[:5]


def test_other_numbers_are_rounded_by_round():
    # ints (and bools) stay ints, as round(x, n) leaves them
    for x in (0, 7, -3, True, False, 10**40):
        assert _same(round3(x), round(x, 3))
    with pytest.raises(TypeError):
        round2("0.5")


def test_ndigits_out_of_range_is_refused():
    with pytest.raises(ValueError):
        rounder(16)
