"""Tokens and wall time of the VLM planner on protoss 5v5, against a scripted fake server.

Part 1 - tokens: full episodes (default length, decision every 8 steps) through the real ``openai``
SDK to tests/fakes/fake_vlm_server.py, answered by tests/planner/scripted.py at a real model's
length (its reflections call an execution a success iff it earned reward; the "failing refl." row
calls every one a failure, so every interval decision re-plans). Prompt tokens are counted on the prompt text the server received, with tiktoken if its
encodings load offline, else the vlm package's counter (chars/4); each image adds a fixed
``--image-tokens`` (85: OpenAI's low-detail price). Rows: the default settings (token economy),
the same without images, and ``PlannerSettings.paper()`` (every module at every decision).

Part 2 - wall time: one episode with every call answered after ``--latency`` (200 ms), agents
deciding concurrently (as the runner does) vs one agent at a time.

    python benchmarks/bench_planner_tokens.py [--episodes 2] [--latency 0.2] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from compass.comm import CommProtocol  # noqa: E402
from compass.config import RunConfig  # noqa: E402
from compass.core.family import get_family
from compass.games.combat.smax import SmaxEnv  # noqa: E402
from compass.planner.base import Decision, DecisionContext  # noqa: E402
from compass.planner.vlm_planner import PlannerSettings, VLMPlanner  # noqa: E402
from compass.runner import EpisodeRunner  # noqa: E402
from compass.skills.library import SkillLibrary  # noqa: E402
from compass.trace import RunWriter  # noqa: E402
from compass.vlm import VLMClient, VLMConfig  # noqa: E402
from compass.vlm.tokens import count_tokens, counting_method  # noqa: E402
from tests.fakes.fake_vlm_server import FakeVLMServer, RecordedRequest, Reply  # noqa: E402
from tests.planner.scripted import ScriptedVLM, detect_module  # noqa: E402

MODEL = "gpt-4o-mini"


@dataclass
class Tally:
    """Tokens of the requests one configuration sent."""

    image_tokens: int
    decisions: int = 0
    episodes: int = 0
    steps: int = 0
    prompt: int = 0
    completion: int = 0
    images: int = 0
    by_module: dict[str, list[int]] = field(default_factory=dict)  # module -> [calls, prompt tokens]

    def add(self, req: RecordedRequest, reply: str) -> None:
        module = detect_module(req.text)
        tokens = count_tokens(req.text, MODEL) + self.image_tokens * len(req.images)
        self.prompt += tokens
        self.completion += count_tokens(reply, MODEL)
        self.images += len(req.images)
        row = self.by_module.setdefault(module, [0, 0])
        row[0] += 1
        row[1] += tokens

    @property
    def total(self) -> int:
        return self.prompt + self.completion


class Sequential:
    """The planner with one decision at a time (the baseline for concurrent agents)."""

    def __init__(self, planner: VLMPlanner) -> None:
        self.planner = planner
        self.library = planner.library
        self.observe_step = planner.observe_step
        self.usage_for_episode = planner.usage_for_episode
        self.usage_summary = planner.usage_summary
        self.aclose = planner.aclose
        self._lock: asyncio.Lock | None = None

    async def decide(self, ctx: DecisionContext) -> Decision:
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            return await self.planner.decide(ctx)


def fresh_library(tmp: Path) -> SkillLibrary:
    root = tmp / f"lib{time.perf_counter_ns()}"
    shutil.copytree(
        get_family("combat").seed_skills_dir, root / "combat", ignore=shutil.ignore_patterns("_stats.json")
    )
    return SkillLibrary(root, "combat")


async def play(env: SmaxEnv, planner: Any, cfg: RunConfig, out: Path, episode: int, seed: int) -> Any:
    writer = RunWriter(out)
    comm = CommProtocol(cfg.comm, seed=seed)
    comm.reset(seed)
    try:
        return await EpisodeRunner(env, planner, cfg, writer, comm=comm).run_episode(episode, seed)
    finally:
        writer.close()
        # Each episode here has its own event loop: release the HTTP pool while that loop lives.
        await getattr(planner, "planner", planner).aclose()


def tokens(
    env: SmaxEnv,
    tmp: Path,
    args: argparse.Namespace,
    settings: PlannerSettings,
    images: bool,
    always_fail: bool = False,
) -> Tally:
    tally = Tally(args.image_tokens)
    script = ScriptedVLM(synth_agent=0, verbose=True, always_fail=always_fail)

    def respond(req: RecordedRequest) -> str:
        reply = script(req.text)
        tally.add(req, reply)
        return reply

    cfg = RunConfig(planner="vlm", vlm="openai", image=images, seed=args.seed)
    with FakeVLMServer(responder=respond) as server:
        client = VLMClient.from_spec(server.spec("openai", MODEL), VLMConfig(max_retries=0))
        planner = VLMPlanner(fresh_library(tmp), client, images=images, settings=settings)
        for ep in range(args.episodes):
            result = asyncio.run(play(env, planner, cfg, tmp / f"tok{ep}", ep, args.seed + ep))
            tally.steps += result.steps
            tally.decisions += result.decisions
            tally.episodes += 1
    return tally


def wall_time(
    env: SmaxEnv, tmp: Path, args: argparse.Namespace, sequential: bool
) -> tuple[float, int, int, list[dict]]:
    script = ScriptedVLM(synth_agent=0, verbose=True)
    cfg = RunConfig(planner="vlm", vlm="openai", seed=args.seed)
    with FakeVLMServer(responder=lambda req: Reply.slow(args.latency, script(req.text))) as server:
        client = VLMClient.from_spec(server.spec("openai", MODEL), VLMConfig(max_retries=0, concurrency=16))
        planner: Any = VLMPlanner(fresh_library(tmp), client)
        if sequential:
            planner = Sequential(planner)
        out = tmp / ("seq" if sequential else "con")
        start = time.perf_counter()
        result = asyncio.run(play(env, planner, cfg, out, 0, args.seed))
        seconds = time.perf_counter() - start
        rounds = [json.loads(line) for line in (out / "timings.jsonl").read_text().splitlines()]
        return (
            seconds,
            len(server.requests),
            result.steps,
            [r for r in rounds if r["kind"] == "decision_round"],
        )


def main(args: argparse.Namespace) -> None:
    env = SmaxEnv("protoss_5_vs_5")
    env.reset(args.seed)  # compile outside the timings
    counting_method(MODEL)  # try tiktoken once, here, rather than in the server's threads
    tmp = Path(tempfile.mkdtemp(prefix="bench_planner_"))
    try:
        rows = [
            ("default settings", PlannerSettings(), True, False),
            ("default, --no-image", PlannerSettings(), False, False),
            ("default, failing refl.", PlannerSettings(), True, True),
            ("paper (every module)", PlannerSettings.paper(), True, False),
        ]
        tallies = [
            (name, tokens(env, tmp, args, settings, images, fail)) for name, settings, images, fail in rows
        ]
        print(
            f"protoss 5v5, {args.episodes} episode(s) from seed {args.seed}, decision_interval 8; tokens counted "
            f"with {counting_method(MODEL)}, images at {args.image_tokens} tokens each"
        )
        print(
            f"{'settings':<24}{'steps':>7}{'decisions':>10}{'calls':>7}{'prompt/dec':>11}{'prompt/ep':>11}"
            f"{'total/ep':>10}{'images/ep':>10}"
        )
        for name, t in tallies:
            calls = sum(c for c, _ in t.by_module.values())
            print(
                f"{name:<24}{t.steps / t.episodes:>7.0f}{t.decisions / t.episodes:>10.1f}{calls / t.episodes:>7.1f}"
                f"{t.prompt / max(t.decisions, 1):>11.0f}{t.prompt / t.episodes:>11.0f}"
                f"{t.total / t.episodes:>10.0f}{t.images / t.episodes:>10.1f}"
            )
        print("per module (calls/ep, prompt tokens per call):")
        for name, t in tallies:
            parts = [f"{m} {c / t.episodes:.1f}x{p / c:.0f}" for m, (c, p) in sorted(t.by_module.items())]
            print(f"  {name:<24}" + ", ".join(parts))

        con, con_calls, steps, con_rounds = wall_time(env, tmp, args, sequential=False)
        seq, seq_calls, _, seq_rounds = wall_time(env, tmp, args, sequential=True)
        print(
            f"\nwall time of one episode ({steps} steps), every call answered after {args.latency * 1000:.0f} ms:"
        )
        print(f"{'agents':<14}{'episode s':>10}{'deciding s':>11}{'5-agent rounds s':>17}{'calls':>7}")
        rows = {}
        for name, seconds, calls, rounds in (
            ("concurrent", con, con_calls, con_rounds),
            ("sequential", seq, seq_calls, seq_rounds),
        ):
            deciding = sum(r["seconds"] for r in rounds)
            full = sum(r["seconds"] for r in rounds if r["agents"] == 5)
            rows[name] = (seconds, deciding, full)
            print(f"{name:<14}{seconds:>10.2f}{deciding:>11.2f}{full:>17.2f}{calls:>7}")
        ratios = [rows["concurrent"][i] / rows["sequential"][i] for i in range(3)]
        print(f"{'ratio':<14}{ratios[0]:>10.2f}{ratios[1]:>11.2f}{ratios[2]:>17.2f}   (target <= 0.25)")
        singles = sum(1 for r in con_rounds if r["agents"] == 1)
        print(
            f"({len(con_rounds)} decision rounds, {singles} with a single agent deciding: those cannot overlap)"
        )
        stats = [t.total / t.episodes for _, t in tallies[:1]]
        print(f"default settings: {statistics.mean(stats) / 1e6:.3f}M tokens per episode (target <= 0.1M)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--latency", type=float, default=0.2, help="server seconds per call in the wall-time part"
    )
    parser.add_argument("--image-tokens", type=int, default=85)
    return parser.parse_args()


if __name__ == "__main__":
    main(parse_args())
