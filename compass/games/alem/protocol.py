"""The ALEM seed protocol: seeds developers look at, and seeds only the benchmark command plays.

A figure cannot flatter when the episodes it is measured on were never looked at while the
library was being written or tuned. So ALEM seeds come in two disjoint sets:

- **tuning seeds** ``0-999`` and ``100,000-199,999``: every experiment a developer looks at
  (iteration runs of ``benchmarks/bench_alem.py``, ``compass run``/``compass eval`` while developing,
  tests, the keep gate, offline fitting, docs examples). The second range was added when the
  selection and confirmation blocks that judge library changes (docs/alem.md "Judging a variant")
  had used up most of the first; it lies away from the gate's seeds (1000..) and both evaluation
  bases;
- **evaluation seeds**: run only by ``python benchmarks/bench_alem.py --leaderboard``. Two bases,
  each followed by up to :data:`EVAL_SPAN` episode seeds:

  - ``leaderboard``: alem's ``EVAL_SEED`` 9999 (episode ``i`` plays seed ``9999 + i``, 20 per
    difficulty), the seeds every leaderboard row was measured on. compass's library was tuned on
    9999-10006 before this split existed, so these figures are comparable with the leaderboard
    but not free of tuning;
  - ``fresh``: 7,100,000, a base no compass run had used when the split was made (2026-11-25),
    so the figures from it are the held-out ones.

The seed of episode ``i`` is ``base + i`` (alem's ``EVAL_SEED + episode_idx``), and the world key
is derived from it as alem's LLM harness does (:meth:`compass.games.alem.env.AlemEnv.reset`).
"""

from __future__ import annotations

from collections.abc import Iterable

TUNING_SEEDS = range(0, 1000)
JUDGING_SEEDS = range(100_000, 200_000)  # tuning seeds too: room for fresh judging blocks
TUNING_TEXT = "0-999 or 100,000-199,999"
LEADERBOARD_EVAL_SEED = 9999  # alem-env's EVAL_SEED (baselines/llm/config/config.yaml, EVALUATION.md)
FRESH_EVAL_SEED = 7_100_000  # unused by any compass run before the split
EVAL_BASES = {"leaderboard": LEADERBOARD_EVAL_SEED, "fresh": FRESH_EVAL_SEED}
LEADERBOARD_EPISODES = 20  # per difficulty (EVALUATION.md; SUBMISSION.md for open-weight models)
EVAL_SPAN = 100  # seeds reserved after each evaluation base (20 are played; room for longer runs)


def episode_seeds(base: int, episodes: int) -> list[int]:
    """The seeds of ``episodes`` episodes from ``base``: ``base + i``, as alem's evaluation derives them."""
    if episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {episodes}")
    return [base + i for i in range(episodes)]


def evaluation_seeds() -> set[int]:
    """Every seed reserved for the benchmark command (both bases, :data:`EVAL_SPAN` each)."""
    return {b + i for b in EVAL_BASES.values() for i in range(EVAL_SPAN)}


def is_tuning_seed(seed: int) -> bool:
    """True when ``seed`` is a tuning seed (:data:`TUNING_SEEDS` or :data:`JUDGING_SEEDS`)."""
    return seed in TUNING_SEEDS or seed in JUDGING_SEEDS


def parse_tuning_seeds(text: str, where: str = "--seeds") -> list[int]:
    """``"0-23"``, ``"0,3,5"`` or ``"0-3,100000-100047"`` -> the seeds, in order.

    Raises ``ValueError`` naming ``where`` for text that is not a seed list and for any seed outside
    the tuning ranges (:func:`is_tuning_seed`), so a development script can refuse it in one line.
    """
    seeds: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi if sep else lo)
        except ValueError:
            raise ValueError(f"{where} {text!r}: expected seeds like 0-23 or 0,3,5") from None
        seeds.extend(range(first, last + 1))
    bad = [s for s in seeds if not is_tuning_seed(s)]
    if not seeds or bad:
        got = f"{bad[0]} and {len(bad) - 1} more" if len(bad) > 1 else (bad[0] if bad else "none")
        raise ValueError(
            f"{where}: tuning seeds must lie in {TUNING_TEXT}, got {got} (docs/alem.md 'Seed protocol')"
        )
    return seeds


def is_evaluation_seed(seed: int) -> bool:
    """True when ``seed`` is reserved for the benchmark command."""
    return any(b <= seed < b + EVAL_SPAN for b in EVAL_BASES.values())


def check_tuning_seeds(seeds: Iterable[int], where: str = "seeds") -> None:
    """Refuse evaluation seeds in a tuning run: one line naming the first offending seed."""
    for s in seeds:
        if is_evaluation_seed(s):
            base = next(n for n, b in EVAL_BASES.items() if b <= s < b + EVAL_SPAN)
            raise ValueError(
                f"{where}: seed {s} is an evaluation seed ({base} base); tuning runs use seeds "
                f"{TUNING_TEXT} (compass/games/alem/protocol.py). "
                "Evaluation seeds are played only by `python benchmarks/bench_alem.py --leaderboard`"
            )
