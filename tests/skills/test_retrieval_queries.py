"""The labelled retrieval set (benchmarks/data/retrieval_queries.yaml) and the scoring of
benchmarks/bench_retrieval.py: a renamed skill or a query copied from a docstring breaks them."""

from __future__ import annotations

import pytest

from benchmarks.bench_retrieval import first_relevant_rank, load_queries, scores
from compass.core.family import get_family
from compass.skills.skill import parse_skill_source

QUERIES = load_queries()


def _summaries(family: str) -> dict[str, str]:
    out = {}
    for path in sorted(get_family(family).seed_skills_dir.glob("*.py")):
        skill = parse_skill_source(path.read_text(encoding="utf-8"), family, path)
        out[skill.name] = " ".join(skill.description.split())  # one line, as retrieval sees it
    return out


@pytest.mark.parametrize("family", sorted(QUERIES))
def test_every_labelled_skill_is_a_seed_skill_and_no_query_is_copied_from_a_docstring(family):
    docs = _summaries(family)
    assert len(QUERIES[family]) >= 15
    for row in QUERIES[family]:
        assert set(row["relevant"]) <= set(docs), f"{row['query']!r}: unknown skill in {row['relevant']}"
        for name, doc in docs.items():
            assert row["query"].lower().rstrip(".") not in doc.lower(), (
                f"{row['query']!r} is copied from {name}"
            )


@pytest.mark.parametrize("family", ["combat", "alem"])
def test_default_task_is_in_no_docstring(family):
    """Retrieval from the default task is measured, not built in (issue 27)."""
    task = get_family(family).default_task.lower()
    assert not [name for name, doc in _summaries(family).items() if task in doc.lower()]


def test_scores():
    assert first_relevant_rank(["a", "b", "c"], ["c", "b"]) == 2
    assert first_relevant_rank(["a"], ["z"]) is None
    got = scores([1, 2, 6, None])
    assert got == {
        "queries": 4,
        "recall_at_1": 0.25,
        "recall_at_5": 0.5,
        "mrr": round((1 + 0.5 + 1 / 6) / 4, 3),
    }
