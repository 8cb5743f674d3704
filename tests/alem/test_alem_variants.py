"""benchmarks/alem_variants.py's paired verdict: what a helper reads to keep or drop a variant."""

from __future__ import annotations

from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def paired_line(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its sibling alem_dev
    from alem_variants import paired_line

    return paired_line


def _rows(scores):
    return [{"team_total_pct": s} for s in scores]


def test_a_variant_up_on_every_seed_is_better(paired_line):
    ref = [8.0, 10.0, 12.0, 9.0, 11.0, 7.5]
    line = paired_line(_rows(ref), _rows([s + 1.0 + 0.1 * i for i, s in enumerate(ref)]))
    assert "6 up / 0 down" in line
    assert line.endswith(": better")


def test_per_seed_swings_that_cancel_are_a_tie(paired_line):
    # The shape of this session's variants: a few seeds up and down by several points.
    ref = [12.0, 9.0, 15.0, 6.0, 11.0, 13.0, 8.0, 10.0]
    var = [15.5, 5.0, 15.0, 10.0, 7.5, 13.0, 11.0, 8.0]
    line = paired_line(_rows(ref), _rows(var))
    assert "3 up / 3 down" in line
    assert line.endswith(": tie")
