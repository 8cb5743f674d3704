"""The ALEM seed protocol: evaluation seeds stay out of every tuning context in the repository.

The scan reads every tracked text file (docs, README, tests, benchmark scripts and READMEs,
examples, demos, compass's own code and prompts; not ``benchmarks/results/``, which cite what each
published run played). It finds seed mentions (a seed word followed by numbers, ``reset(N)``,
``--seed N``) and any evaluation base written anywhere, and flags an evaluation seed unless:

- it sits in ``compass/games/alem/protocol.py`` (where the split is defined), or
- it is in a Markdown paragraph that calls it an evaluation seed, and is not on a ``--seed``
  command line (the benchmark command takes evaluation seeds from ``--eval-base``, never from a
  seed option).

So a tuning command, a test, a docs example or a code constant that plays an evaluation seed
fails here. The scan must also find the evaluation seeds where they belong (the protocol module
and docs/alem.md's protocol section), so it cannot pass by seeing nothing.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from compass.games.alem.protocol import (
    EVAL_BASES,
    EVAL_SPAN,
    FRESH_EVAL_SEED,
    JUDGING_SEEDS,
    LEADERBOARD_EVAL_SEED,
    TUNING_SEEDS,
    check_tuning_seeds,
    episode_seeds,
    evaluation_seeds,
    is_evaluation_seed,
    is_tuning_seed,
    parse_tuning_seeds,
)

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = "compass/games/alem/protocol.py"
THIS = "tests/alem/test_alem_protocol.py"
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".sh", ".cfg", ".ini", ".jsonl", ".json"}

NUM = r"\d{1,3}(?:[,_]\d{3})+|\d+"  # 9999, 10,006, 7_100_000
SEP = r"\s*(?:,\s|\band\b|\bor\b|\bto\b|-|–|\.\.\.?)\s*"  # between listed seeds or a range's ends
SEED_LIST = re.compile(rf"seeds?\b[^\d\n]{{0,30}}?((?:{NUM})(?:{SEP}(?:{NUM}))*)", re.IGNORECASE)
RESET = re.compile(rf"reset\(\s*(?:seed\s*=\s*)?({NUM})")
SEED_OPTION = re.compile(rf"--seed(?:-base)?[ =]({NUM})")
BASE_WORDS = re.compile(r"\b(9999|7[,_]?100[,_]?000)\b")  # the evaluation bases, in any context


def _int(tok: str) -> int:
    return int(tok.replace(",", "").replace("_", ""))


def _seeds_in(group: str) -> set[int]:
    """The seeds a matched list names; a range (``a-b``, ``a..b``, ``a to b``) names every seed in it."""
    nums = [_int(t) for t in re.findall(NUM, group)]
    seps = re.findall(SEP, group)
    out = set(nums)
    for (a, b), sep in zip(zip(nums, nums[1:], strict=False), seps, strict=False):
        if sep.strip() in {"-", "–", "..", "...", "to"} and a < b <= a + 10_000:
            out.update(range(a, b + 1))
    return out


def _paragraph(text: str, pos: int) -> str:
    start = text.rfind("\n\n", 0, pos)
    end = text.find("\n\n", pos)
    return text[start + 1 if start >= 0 else 0 : end if end >= 0 else len(text)]


def _line(text: str, pos: int) -> str:
    return text[text.rfind("\n", 0, pos) + 1 : (text.find("\n", pos) + 1 or len(text) + 1) - 1]


def scan(path: str, text: str) -> tuple[list[str], list[str]]:
    """(violations, allowed mentions) of evaluation seeds in one file's text."""
    bad, ok = [], []
    hits: list[tuple[int, set[int]]] = []
    for rx in (SEED_LIST, RESET, SEED_OPTION):
        hits += [(m.start(), _seeds_in(m.group(1))) for m in rx.finditer(text)]
    hits += [(m.start(), {_int(m.group(1))}) for m in BASE_WORDS.finditer(text)]
    for pos, seeds in hits:
        evals = sorted(s for s in seeds if is_evaluation_seed(s))
        if not evals:
            continue
        where = f"{path}:{text.count(chr(10), 0, pos) + 1}: {evals[:4]} in {_line(text, pos).strip()[:100]!r}"
        if path == PROTOCOL:
            ok.append(where)
        elif (
            path.endswith(".md")
            and "evaluation seed" in " ".join(_paragraph(text, pos).split()).lower()
            and not SEED_OPTION.search(_line(text, pos))
        ):
            ok.append(where)
        else:
            bad.append(where)
    return bad, ok


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        files = out.splitlines()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file under the root
        files = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [
        f
        for f in files
        if Path(f).suffix in TEXT_SUFFIXES and not f.startswith("benchmarks/results/") and f != THIS
    ]


def test_no_evaluation_seed_in_a_tuning_context():
    files = _tracked_files()
    assert {"README.md", "docs/alem.md", "benchmarks/bench_alem.py", PROTOCOL} <= set(files)
    assert sum(f.startswith("tests/") for f in files) > 20  # the scan reaches the tests too
    bad, ok = [], []
    for f in files:
        path = ROOT / f
        if not path.is_file():
            continue
        b, o = scan(f, path.read_text(encoding="utf-8", errors="replace"))
        bad += b
        ok += o
    assert not bad, "evaluation seeds in a tuning context (use tuning seeds 0-999):\n" + "\n".join(bad)
    # Not vacuous: the scan sees the evaluation seeds where they belong.
    assert any(o.startswith(PROTOCOL) for o in ok)
    docs = [o for o in ok if o.startswith("docs/alem.md")]
    assert any(f"{LEADERBOARD_EVAL_SEED}" in o for o in docs), ok
    assert any(f"{FRESH_EVAL_SEED}" in o for o in docs), ok


@pytest.mark.parametrize(
    "snippet",
    [
        "python benchmarks/bench_alem.py --seed-base 9999 --episodes 3",
        "compass run --env alem:hard --seed 10003",
        "views = env.reset(seed=10005)",
        "env.reset(10010)",
        "starved in its sleep on Easy seeds 10001 and 10004 (steps 354 and 361)",
        "tried on the same Hard seeds 9999-10006",
        "HELD_OUT = 9999  # held-out seeds",
        "the fresh runs use seeds 7,100,000..7,100,019",
        "FRESH = 7_100_000",
    ],
)
def test_scan_flags_evaluation_seeds_in_tuning_text(snippet):
    for path in ("docs/x.md", "tests/x.py", "benchmarks/x.py"):
        bad, _ = scan(path, f"Some text.\n\n{snippet}\n")
        assert bad, (path, snippet)


@pytest.mark.parametrize(
    "snippet",
    [
        "def summarise(episodes, n: int = 10000, alpha: float = 0.05, seed: int = 0):",
        "make_alem('hard', max_steps=10000)  # seed 3",
        "full length (10,000 steps) on tuning seeds 0-7",
        "python benchmarks/bench_alem.py --seed-base 0 --episodes 8",
        "views = env.reset(seed=3)",
    ],
)
def test_scan_leaves_tuning_text_alone(snippet):
    bad, ok = scan("docs/x.md", f"{snippet}\n")
    assert not bad and not ok, snippet


def test_labelled_markdown_paragraphs_may_cite_evaluation_seeds_but_not_as_options():
    text = "The published run played the evaluation seeds 9999-10006.\n"
    bad, ok = scan("docs/x.md", text)
    assert not bad and len(ok) >= 1
    assert scan("tests/x.py", text)[0]  # code may not, labelled or not
    cmd = "Evaluation seeds:\n\n    python benchmarks/bench_alem.py --seed-base 9999  # evaluation seed\n"
    assert scan("docs/x.md", cmd)[0]


def test_split_is_disjoint_and_derived_as_alem_derives_it():
    evals = evaluation_seeds()
    assert not evals & set(TUNING_SEEDS) and not evals & set(JUDGING_SEEDS)
    assert all(is_tuning_seed(s) for s in (0, 999, 100_000, 199_999))
    assert not any(is_tuning_seed(s) for s in (-1, 1000, 9999, 99_999, 200_000, FRESH_EVAL_SEED))
    assert LEADERBOARD_EVAL_SEED == 9999 and set(EVAL_BASES.values()) == {9999, FRESH_EVAL_SEED}
    assert episode_seeds(LEADERBOARD_EVAL_SEED, 20) == list(range(9999, 10019))  # EVAL_SEED + i
    assert all(is_evaluation_seed(s) for s in episode_seeds(FRESH_EVAL_SEED, EVAL_SPAN))
    assert not is_evaluation_seed(FRESH_EVAL_SEED + EVAL_SPAN) and not is_evaluation_seed(999)
    check_tuning_seeds(range(1000))
    with pytest.raises(ValueError, match="seed 10003 is an evaluation seed"):
        check_tuning_seeds([5, 10003], "--seed-base")
    with pytest.raises(ValueError):
        episode_seeds(0, 0)


def test_seed_lists_are_read_and_refused_in_one_line():
    assert parse_tuning_seeds("0-2,7,100000-100001") == [0, 1, 2, 7, 100_000, 100_001]
    with pytest.raises(ValueError, match=r"--seeds 'a': expected seeds like 0-23"):
        parse_tuning_seeds("a")
    with pytest.raises(ValueError, match="--seeds '0-x'"):
        parse_tuning_seeds("0-x")
    with pytest.raises(ValueError, match=r"must lie in 0-999 or 100,000-199,999, got 1000 and 1 more"):
        parse_tuning_seeds("998-1001", "--seeds")
    with pytest.raises(ValueError, match="got none"):
        parse_tuning_seeds("5-3")


def test_docs_state_the_split():
    doc = (ROOT / "docs/alem.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Seed protocol") :]
    section = section[: section.index("\n## ", 1)]
    assert "0-999" in section and "100,000-199,999" in section
    assert "9999" in section and "7,100,000" in section
    assert "benchmarks/bench_alem.py --leaderboard" in section
