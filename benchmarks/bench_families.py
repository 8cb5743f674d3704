"""Per game family: what the prompts' rendered API sections cost, and what ``skills check`` costs.

Part 1 - prompt size: the synthesis and repair templates of each family, with the sections rendered
from code (``<<<skill_api>>>``: exported names, signatures, first doc lines and observation fields;
``<<<sandbox_rules>>>``: builtins, modules, budget) measured against the rest of the template
(tokens as characters / 4, the vlm package's offline counter).

Part 2 - ``compass skills check``: recorded observations rebuilt as views from their text
(``GameFamily.view_from_text``), then every seed skill run on each through ``check_library``'s
default executor (pooled isolated worker); the ratio is the text-to-view parse against one
sandboxed skill call (batched), side by side in one run.

    python benchmarks/bench_families.py [--repeat 3]

Results: ``benchmarks/results/bench_families.json`` (``benchmarks/_results.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.core.family import families, get_family  # noqa: E402
from compass.planner.prompts import load_templates, static_values  # noqa: E402
from compass.skills.check import check_library, load_observations  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def prompt_sizes(name: str) -> dict[str, dict[str, int]]:
    """Tokens of each edited-code template: whole (static slots filled) and the rendered sections."""
    static = static_values(name)
    out = {}
    for module, template in load_templates(name).items():
        rendered = sum(_tokens(v) for k, v in static.items() if v in template.text)
        if rendered:
            whole = _tokens(template.text)
            out[module] = {
                "template_tokens": whole,
                "rendered_tokens": rendered,
                "rendered_share": round(rendered / whole, 3),
            }
    return out


def check_cost(name: str, repeat: int) -> dict[str, float]:
    """Best-of-``repeat`` seconds to rebuild the views from text and to run the whole check."""
    fam = get_family(name)
    texts = load_observations(fam.observations_path)
    lib = SkillLibrary(None, name)
    parse, check = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        for text in texts:
            fam.view_from_text(text)
        parse.append(time.perf_counter() - t)
        t = time.perf_counter()
        rows = check_library(lib, texts)
        check.append(time.perf_counter() - t)
    calls = sum(r.runs for r in rows)
    errors = sum(len(r.errors) for r in rows)
    parse_ms = 1000 * min(parse) / len(texts)
    call_ms = 1000 * (min(check) - min(parse)) / calls  # check_library parses the texts too
    return {
        "observations": len(texts),
        "skills": len(rows),
        "errors": errors,
        "check_s": round(min(check), 3),
        "parse_ms_per_observation": round(parse_ms, 3),
        "skill_call_ms": round(call_ms, 3),
        "parse_over_call": round(parse_ms / call_ms, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    add_results_arguments(ap)
    args = ap.parse_args()
    inputs = [
        path
        for name in sorted(families())
        for path in (
            get_family(name).observations_path,
            get_family(name).prompts_dir,
            get_family(name).seed_skills_dir,
        )
    ]
    preflight(args.allow_dirty, inputs)
    results = {}
    print("| family | template | tokens | rendered from code | share |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name in sorted(families()):
        sizes = prompt_sizes(name)
        for module, s in sizes.items():
            share = s["rendered_share"]
            print(f"| {name} | {module} | {s['template_tokens']} | {s['rendered_tokens']} | {share:.0%} |")
        results[name] = {"prompts": sizes}
    print()
    print("| family | observations | skills | errors | check s | parse ms/obs | skill call ms | parse/call |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in sorted(families()):
        c = check_cost(name, args.repeat)
        results[name]["check"] = c
        print(
            f"| {name} | {c['observations']} | {c['skills']} | {c['errors']} | {c['check_s']} | "
            f"{c['parse_ms_per_observation']} | {c['skill_call_ms']} | {c['parse_over_call']} |"
        )
    write_results(
        "bench_families",
        results,
        notes=f"timings best of {args.repeat}; the shared machine's load is in machine.load_average_at_write",
        inputs=inputs,
        allow_dirty=args.allow_dirty,
    )


if __name__ == "__main__":
    main()
