"""Per game family: what the prompts' rendered API sections cost, and what ``skills check`` costs.

Part 1 - prompt size: the synthesis and repair templates of each family, with the sections rendered
from code (``<<<skill_api>>>``: exported names, signatures, first doc lines and observation fields;
``<<<sandbox_rules>>>``: builtins, modules, budget) measured against the rest of the template
(tokens as characters / 4, the vlm package's offline counter).

Part 2 - ``compass skills check``: recorded observations rebuilt as views from their text
(``GameFamily.view_from_text``), then every seed skill run on each through ``check_library``'s
default executor (pooled isolated worker); the ratio is the text-to-view parse against one
sandboxed skill call (batched), side by side in one run.

    python benchmarks/bench_families.py [--repeat 3] [--out runs/bench_families.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

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
            out[module] = {"template_tokens": _tokens(template.text), "rendered_tokens": rendered}
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
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = ap.parse_args()
    results = {}
    print("| family | template | tokens | rendered from code | share |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name in sorted(families()):
        sizes = prompt_sizes(name)
        for module, s in sizes.items():
            share = s["rendered_tokens"] / s["template_tokens"]
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
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        tmp.replace(args.out)
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
