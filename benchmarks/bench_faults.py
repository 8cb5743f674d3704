"""Nothing lost under faults: reply-parser time on adversarial replies, episodes under model faults.

1. **Parsing.** Adversarial replies (the shapes that used to backtrack or go quadratic: a line of
   spaces after ``##``, runs of newlines, backticks, fence lines, ...) at 10 kB, 100 kB and 1 MB (linear: the 1 MB / 100 kB ratio is ~10):
   the scanners every module parser runs (``parse_sections`` + ``code_block`` + ``has_def``)
   without the size cap, and the module parsers themselves (which refuse a 100 kB reply at the
   cap). Side by side, the former header regex and fenced-block regex on the inputs from the
   issue (a 250-space line; 5,000 backticks).
2. **Episodes under faults.** Whole SMAX episodes with the VLM planner against the local
   fault-injecting server (tests/fakes/fake_vlm_server.py), through the real ``openai`` and
   ``anthropic`` SDKs, at a 0 % and a 30 % fault rate (429/500/503, timeouts, hang-ups, truncated
   or bad JSON, HTML 200, null/empty answers, wrong shapes): episodes completed, faults served,
   retries, calls failed for good, decision errors, wall time.

    python benchmarks/bench_faults.py [--episodes 2] [--max-steps 16] [--parts parse,episodes]

Writes ``benchmarks/results/bench_faults.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.planner import parsing  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)

SHAPES = {
    "spaces_after_header": "##" + " " * 250 + "\n",
    "newlines": "\n",
    "backticks": "`",
    "fence_lines": "```\n",
    "unclosed_fence": "```python\nx\n",
    "headers": "**Game situation**: x\n",
    "bold_spaces": "** " + " " * 60 + "game" + " " * 60 + "situation\n",
    "def_spaces": "def" + " " * 200 + "x" * 200 + "\n",
}


def adversarial(shape: str, size: int) -> str:
    unit = SHAPES[shape]
    return (unit * (size // len(unit) + 1))[:size]


def best_ms(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


PARSERS = {
    "perception": parsing.parse_perception,
    "reflection": parsing.parse_reflection,
    "task_reasoning": parsing.parse_task,
    "skill_synthesis": parsing.parse_synthesis,
    "skill_repair": parsing.parse_repair,
    "actor": lambda text: parsing.parse_actor(text, ["focus_fire", "regroup"]),
}


def slowest_parser_ms(text: str, repeat: int = 3) -> tuple[float, str]:
    """The slowest module parser on ``text`` (best of ``repeat`` each): what one reply costs."""
    return max((best_ms(lambda f=f: f(text), repeat), name) for name, f in PARSERS.items())


# The former implementations (compass before this change), for the side-by-side figures.
def _old_header_regex(names: tuple[str, ...]) -> re.Pattern[str]:
    def name_pattern(name: str) -> str:
        return r"[\s_-]*".join(re.escape(part) for part in name.split("_"))

    alternatives = "|".join(f"(?P<s{i}>{name_pattern(n)})" for i, n in enumerate(names))
    return re.compile(
        r"^[ \t>]*(?:\d{1,2}[.)][ \t]*)?(?P<pre>(?:#{1,6}|\*{1,2}|_{2})?)[ \t]*(?:#{1,2})?[ \t]*(?:\*\*)?[ \t]*"
        rf"(?:{alternatives})(?![A-Za-z0-9])"
        r"[ \t]*(?P<post>(?:#{1,6})?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*(?:#{1,6})?)"
        r"[ \t]*(?P<rest>.*)$",
        re.IGNORECASE,
    )


_OLD_BLOCK = re.compile(r"(`{3,}|~{3,})[ \t]*([\w+-]*)[ \t]*\n(.*?)(?:\n[ \t]*\1|\Z)", re.DOTALL)


def bench_parse() -> dict:
    rows = []
    cap = parsing.MAX_REPLY_CHARS
    print("\n1. Parse time of one reply: the slowest of the six module parsers, best of 3 (ms).")
    print(f"   'uncapped': size cap lifted to measure the parsers; 'as shipped': over {cap:,} characters")
    print("   a reply is refused before any parsing.\n")
    print(f"{'shape':<22}" + "".join(f"{f'{s // 1000} kB':>10}" for s in SIZES), end="")
    print(f"{'ratio 1M/100k':>14}{'slowest at 100 kB':>20}{'as shipped, 100 kB':>20}")
    for shape in SHAPES:
        parsing.MAX_REPLY_CHARS = 10**9
        try:
            timed = {
                size: slowest_parser_ms(adversarial(shape, size), 3 if size < 10**6 else 2) for size in SIZES
            }
        finally:
            parsing.MAX_REPLY_CHARS = cap
        shipped = slowest_parser_ms(adversarial(shape, 100_000))[0]
        ms = {size: t for size, (t, _) in timed.items()}
        ratio = ms[SIZES[-1]] / ms[100_000] if ms[100_000] else float("nan")
        rows.append(
            {
                "shape": shape,
                "uncapped_ms": {str(k): round(v, 3) for k, v in ms.items()},
                "slowest_parser_100k": timed[100_000][1],
                "ratio_1m_over_100k": round(ratio, 2),
                "as_shipped_100k_ms": round(shipped, 4),
            }
        )
        print(
            f"{shape:<22}"
            + "".join(f"{ms[s]:>9.2f}" for s in SIZES)
            + f"{ratio:>14.1f}{timed[100_000][1]:>20}{shipped:>20.3f}"
        )
    names = parsing.SECTIONS["perception"]
    line = "##" + " " * 250
    old_header = best_ms(lambda: _old_header_regex(names).match(line), repeat=1)
    new_header = best_ms(lambda: parsing.parse_sections(line, names))
    ticks = "`" * 5_000
    old_block = best_ms(lambda: list(_OLD_BLOCK.finditer(ticks)), repeat=1)
    new_block = best_ms(lambda: parsing.code_block(ticks))
    side = {
        "header_line_250_spaces": {"old_ms": round(old_header, 3), "new_ms": round(new_header, 4)},
        "backticks_5000": {"old_ms": round(old_block, 3), "new_ms": round(new_block, 4)},
    }
    print("\nSide by side with the former regexes (one run each for the old ones):")
    for name, r in side.items():
        print(
            f"  {name:<24} old {r['old_ms']:>10.1f} ms   new {r['new_ms']:>8.3f} ms   {r['old_ms'] / r['new_ms']:>9.0f}x"
        )
    return {"rows": rows, "side_by_side": side, "max_reply_chars": parsing.MAX_REPLY_CHARS}


def run_episodes(api: str, rate: float, episodes: int, max_steps: int, seed: int) -> dict:
    from compass.comm import CommProtocol
    from compass.config import RunConfig
    from compass.core.family import get_family
    from compass.episode.runner import EpisodeRunner
    from compass.episode.trace import RunWriter, read_trace
    from compass.games.combat.smax import SmaxEnv
    from compass.planner.vlm_planner import VLMPlanner
    from compass.skills.library import SkillLibrary
    from compass.vlm import VLMClient, VLMConfig
    from compass.vlm import tokens as vlm_tokens
    from tests.fakes.fake_vlm_server import FakeVLMServer, FaultInjector
    from tests.planner.scripted import ScriptedVLM

    vlm_tokens._encoding = lambda name: None  # no BPE downloads
    env = SmaxEnv("protoss_5_vs_5")
    env.max_steps = max_steps
    script = ScriptedVLM(synth_agent=0, fail_after=2)
    injector = FaultInjector(lambda request: script(request.text), rate=rate, seed=seed, slow_s=3.0)
    config = VLMConfig(max_retries=3, timeout_s=1.0, backoff_base_s=0.02, backoff_max_s=0.2)
    out: dict = {"api": api, "fault_rate": rate, "episodes": [], "completed": 0}
    with tempfile.TemporaryDirectory() as tmp, FakeVLMServer(responder=injector) as server:
        root = Path(tmp) / "lib"
        shutil.copytree(get_family("combat").seed_skills_dir, root / "combat")
        lib = SkillLibrary(root, "combat")
        planner = VLMPlanner(lib, VLMClient.from_spec(server.spec(api, "bench"), config))
        cfg = RunConfig(planner="vlm", vlm=server.spec(api), decision_interval=4)
        start = time.perf_counter()
        for ep in range(episodes):
            writer = RunWriter(Path(tmp) / f"run{ep}")
            comm = CommProtocol("multihop", seed=ep)
            comm.reset(ep)
            t0 = time.perf_counter()

            async def play(ep=ep, writer=writer, comm=comm):
                try:
                    return await EpisodeRunner(env, planner, cfg, writer, comm=comm).run_episode(ep, ep)
                finally:
                    await planner.aclose()  # its connections belong to this event loop

            try:
                result = asyncio.run(play())
            except Exception as exc:  # counted: an episode that does not complete is the failure measured
                out["episodes"].append({"episode": ep, "error": f"{type(exc).__name__}: {exc}"})
                writer.close()
                continue
            writer.close()
            trace = read_trace(Path(tmp) / f"run{ep}")
            usage = planner.usage_for_episode(ep)
            records = [rec for r in trace if r["kind"] == "decision" for rec in r["records"]]
            out["completed"] += 1
            out["episodes"].append(
                {
                    "episode": ep,
                    "steps": result.steps,
                    "decisions": result.decisions,
                    "decision_errors": result.decision_errors + usage["events"].get("decision_errors", 0),
                    "calls": usage["calls"],
                    "retries": usage["retries"],
                    "failed_calls": usage["errors"],
                    "failed_calls_in_trace": sum(rec.get("kind") == "vlm_error" for rec in records),
                    "empty_answers_taken": sum(
                        rec.get("kind") == "vlm" and not rec["response"].strip() for rec in records
                    ),
                    "seconds": round(time.perf_counter() - t0, 2),
                }
            )
        out["seconds"] = round(time.perf_counter() - start, 2)
        out["requests"] = len(server.requests)
        out["faults_served"] = dict(sorted(injector.counts.items()))
        out["answered"] = injector.answered
    return out


def bench_episodes(episodes: int, max_steps: int) -> list[dict]:
    print(f"\n2. Episodes under model faults (SMAX protoss 5v5, {max_steps} steps, decision interval 4)\n")
    header = f"{'api':<10}{'fault rate':>11}{'completed':>11}{'requests':>10}{'faults':>8}{'calls':>7}"
    header += f"{'retried':>9}{'failed':>8}{'dec. errors':>12}{'empty taken':>13}{'s/episode':>11}"
    print(header)
    rows = []
    for api in ("openai", "anthropic"):
        for rate in (0.0, 0.3):
            r = run_episodes(api, rate, episodes, max_steps, seed=11)
            eps = [e for e in r["episodes"] if "error" not in e]
            total = Counter()
            for e in eps:
                total.update(
                    {
                        k: e[k]
                        for k in (
                            "calls",
                            "retries",
                            "failed_calls",
                            "decision_errors",
                            "empty_answers_taken",
                        )
                    }
                )
            per_ep = statistics.mean(e["seconds"] for e in eps) if eps else float("nan")
            print(
                f"{api:<10}{rate:>11.0%}{r['completed']:>6}/{episodes:<4}{r['requests']:>10}"
                f"{sum(r['faults_served'].values()):>8}{total['calls']:>7}{total['retries']:>9}"
                f"{total['failed_calls']:>8}{total['decision_errors']:>12}{total['empty_answers_taken']:>13}{per_ep:>11.1f}"
            )
            rows.append(r)
    kinds = Counter()
    for r in rows:
        kinds.update(r["faults_served"])
    print("\nfaults served, by kind:", dict(sorted(kinds.items())))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--episodes", type=int, default=2, help="episodes per API and fault rate")
    p.add_argument("--max-steps", type=int, default=16)
    p.add_argument("--parts", default="parse,episodes")
    add_results_arguments(p)
    args = p.parse_args()
    preflight(args.allow_dirty, [])
    parts = set(args.parts.split(","))
    # Only what this run measured is written (a part kept from an earlier run would cite this
    # run's commit): run every part you want to quote in one command.
    results: dict = {}
    if "parse" in parts:
        results["parse"] = bench_parse()
    if "episodes" in parts:
        results["episodes"] = bench_episodes(args.episodes, args.max_steps)
    write_results(
        "bench_faults", results, seeds="fault schedules seeded per episode", allow_dirty=args.allow_dirty
    )


if __name__ == "__main__":
    main()
