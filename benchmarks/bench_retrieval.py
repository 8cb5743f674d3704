"""Skill retrieval measured on labelled sub-task queries: recall@1, recall@5 and MRR per family.

Run: ``PYTHONPATH=. python benchmarks/bench_retrieval.py``

``benchmarks/data/retrieval_queries.yaml`` holds sub-tasks phrased as a player or the planner's
Task Reasoning module would phrase them (not copied from any docstring), each with the seed skills
that should answer it. Each query goes through ``SkillLibrary.retrieve`` on the shipped seed
library of its family (the embedding model ``compass run`` uses), ranking every skill. A query
counts as found at k when one of its relevant skills is in the top k; its reciprocal rank is 1 over
the rank of the first relevant skill. Also reported: which skill each family's default task
retrieves (what ``compass run`` plays without ``--skill``). Results:
``benchmarks/results/bench_retrieval.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.core.family import get_family  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402

QUERIES = ROOT / "benchmarks" / "data" / "retrieval_queries.yaml"


def load_queries(path: Path = QUERIES) -> dict[str, list[dict]]:
    """``{family: [{"query": str, "relevant": [skill, ...]}, ...]}`` from the labelled file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for family, rows in data.items():
        for i, row in enumerate(rows):
            if not isinstance(row.get("query"), str) or not row.get("relevant"):
                raise ValueError(
                    f"{path.name}: {family}[{i}] needs a 'query' and a non-empty 'relevant' list"
                )
    return data


def first_relevant_rank(ranking: list[str], relevant: list[str]) -> int | None:
    """1-based rank of the first relevant skill in ``ranking``, or None when none is ranked."""
    return next((i + 1 for i, name in enumerate(ranking) if name in relevant), None)


def scores(ranks: list[int | None]) -> dict[str, float]:
    """recall@1, recall@5 and mean reciprocal rank of the first relevant skill, over queries."""
    n = len(ranks)
    return {
        "queries": n,
        "recall_at_1": round(sum(r is not None and r <= 1 for r in ranks) / n, 3),
        "recall_at_5": round(sum(r is not None and r <= 5 for r in ranks) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r is not None) / n, 3),
    }


def evaluate(family: str, rows: list[dict]) -> dict:
    lib = SkillLibrary(None, family)
    unknown = sorted({s for row in rows for s in row["relevant"]} - set(lib.names()))
    if unknown:
        raise ValueError(f"{family}: labelled skills not in the seed library: {', '.join(unknown)}")
    per_query, ranks = [], []
    for row in rows:
        ranking = [r.skill.name for r in lib.retrieve(row["query"], k=len(lib))]
        rank = first_relevant_rank(ranking, row["relevant"])
        ranks.append(rank)
        per_query.append(
            {"query": row["query"], "relevant": row["relevant"], "rank": rank, "top": ranking[:3]}
        )
    task = get_family(family).default_task
    top = lib.retrieve(task, k=3)
    return {
        **scores(ranks),
        "skills": len(lib),
        "default_task": task,
        "default_task_retrieves": top[0].skill.name,
        "default_task_top3": {r.skill.name: round(r.score, 3) for r in top},
        "per_query": per_query,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="combat,alem")
    add_results_arguments(ap)
    args = ap.parse_args()
    families = [f for f in args.families.split(",") if f]
    inputs = [QUERIES, *(get_family(f).seed_skills_dir for f in families)]
    preflight(args.allow_dirty, inputs)
    queries = load_queries()
    results = {}
    print(f"{'family':8s} {'queries':>7s} {'skills':>6s} {'recall@1':>8s} {'recall@5':>8s} {'MRR':>6s}")
    for family in families:
        r = results[family] = evaluate(family, queries[family])
        print(
            f"{family:8s} {r['queries']:7d} {r['skills']:6d} {r['recall_at_1']:8.3f} {r['recall_at_5']:8.3f} "
            f"{r['mrr']:6.3f}   default task -> {r['default_task_retrieves']}"
        )
        for q in r["per_query"]:
            if q["rank"] != 1:
                print(
                    f"    rank {q['rank']}: {q['query']!r} (want {', '.join(q['relevant'])}; got {q['top'][0]})"
                )
    write_results(
        "bench_retrieval",
        results,
        notes="deterministic (no seeds): the embedding model and the labelled queries fix the ranking",
        inputs=inputs,
        allow_dirty=args.allow_dirty,
    )


if __name__ == "__main__":
    main()
