"""``round(x, ndigits)`` with exactly Python's results, about twice as fast for everyday floats.

``round(x, 3)`` costs ~0.26 us: it writes the exact decimal value of ``x`` and parses it back. The
combat skills' ``parse_obs`` data rounds five fields of every unit an agent sees, ~150 calls a
step for a 5-agent team, as much as the rest of building that data.

Why the results are the same floats: ``round(x, n)`` is the double nearest to ``K / 10**n``, ``K``
the integer nearest to the exact value ``x * 10**n`` (ties to even; a zero keeps the sign of
``x``). ``y = x * 10**n`` in floating point is off from the exact product by at most
``|y| * 2**-53`` (below 1.2e-10 while ``|y| < 1e6``), so when ``y`` is further than that from a
half-integer, ``round(y)`` is that same ``K``, and ``K / 10**n`` (an exact integer by an exact
power of ten, one IEEE division) is the double nearest to ``K / 10**n``. Anything else (not a
float, within ``1e-4`` of a half-integer, ``|y| >= 1e6``, infinities, NaN) goes to ``round``.
"""

from __future__ import annotations

import math
from collections.abc import Callable


def rounder(ndigits: int) -> Callable[[float], float]:
    """A function that returns ``round(x, ndigits)`` (``ndigits`` 0 to 15), the same object type and value."""
    if not 0 <= ndigits <= 15:
        raise ValueError(f"ndigits must be 0 to 15, got {ndigits}")
    scale = float(10**ndigits)  # exact

    def fast_round(x, _round=round, _sign=math.copysign, _float=float):
        if type(x) is _float:
            y = x * scale
            if -1e6 < y < 1e6:
                k = _round(y)
                if -0.4999 < y - k < 0.4999:
                    return k / scale if k else _sign(0.0, x)
        return _round(x, ndigits)

    fast_round.__name__ = f"round{ndigits}"
    fast_round.__doc__ = f"``round(x, {ndigits})``, exactly (see :mod:`compass.util.rounding`)."
    return fast_round


round1, round2, round3 = rounder(1), rounder(2), rounder(3)
