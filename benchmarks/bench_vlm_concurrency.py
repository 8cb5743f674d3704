"""How much concurrent VLM calls save in one decision round.

A fake OpenAI-compatible server (tests/fakes/fake_vlm_server.py) answers every call after a fixed
latency (200 ms by default); calls go through VLMClient and the real ``openai`` SDK. One decision
round is N agents x M module calls (5 x 5), run three ways:

* sequential      - every call awaited one after another;
* agents parallel - agents concurrently (asyncio.gather), each agent's modules in order, as when a
                    module's prompt needs the previous module's answer;
* all parallel    - all N x M calls gathered at once (bounded by the client's concurrency limit).

    python benchmarks/bench_vlm_concurrency.py [--latency 0.2] [--agents 5] [--modules 5] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.vlm import VLMClient, VLMConfig, VLMRequest  # noqa: E402
from tests.fakes.fake_vlm_server import FakeVLMServer, Reply  # noqa: E402

MODULES = ("perceive", "communicate", "plan", "select_skill", "reflect")


def request(round_no: int, agent: int, module: int) -> VLMRequest:
    return VLMRequest(
        prompt=f"round {round_no} agent {agent} module {module}", tag=MODULES[module % len(MODULES)]
    )


async def sequential(client: VLMClient, round_no: int, agents: int, modules: int) -> None:
    for agent in range(agents):
        for module in range(modules):
            await client.complete(request(round_no, agent, module))


async def agents_parallel(client: VLMClient, round_no: int, agents: int, modules: int) -> None:
    async def one_agent(agent: int) -> None:
        for module in range(modules):
            await client.complete(request(round_no, agent, module))

    await asyncio.gather(*(one_agent(agent) for agent in range(agents)))


async def all_parallel(client: VLMClient, round_no: int, agents: int, modules: int) -> None:
    await asyncio.gather(
        *(
            client.complete(request(round_no, agent, module))
            for agent in range(agents)
            for module in range(modules)
        )
    )


Mode = Callable[[VLMClient, int, int, int], Awaitable[None]]


async def time_mode(mode: Mode, spec: str, concurrency: int, args: argparse.Namespace) -> float:
    """Median wall time of one round over ``args.rounds`` rounds (fresh prompts each round)."""
    client = VLMClient.from_spec(spec, VLMConfig(concurrency=concurrency, timeout_s=30))
    await client.complete(VLMRequest(prompt="warm-up"))  # SDK import and first connection
    times = []
    for round_no in range(args.rounds):
        start = time.perf_counter()
        await mode(client, round_no, args.agents, args.modules)
        times.append(time.perf_counter() - start)
    await client.aclose()
    return statistics.median(times)


async def main(args: argparse.Namespace) -> None:
    calls = args.agents * args.modules
    with FakeVLMServer(responder=lambda req: Reply.slow(args.latency, "ok")) as server:
        spec = server.spec("openai", "gpt-4o-mini")
        rows = [
            ("sequential", sequential, 1),
            ("agents parallel", agents_parallel, 8),
            ("all parallel (limit 8)", all_parallel, 8),
            (f"all parallel (limit {calls})", all_parallel, calls),
        ]
        results = [(name, await time_mode(mode, spec, limit, args)) for name, mode, limit in rows]
        peak = server.max_in_flight
    base = results[0][1]
    ideal = args.latency * calls
    print(
        f"{args.agents} agents x {args.modules} module calls = {calls} calls per round, "
        f"{args.latency * 1000:.0f} ms per call, median of {args.rounds} rounds (real openai SDK -> fake server)"
    )
    print(f"{'mode':<26}{'wall s':>9}{'vs sequential':>15}{'calls/s':>10}")
    for name, seconds in results:
        print(f"{name:<26}{seconds:>9.3f}{base / seconds:>14.1f}x{calls / seconds:>10.1f}")
    print(f"(sequential lower bound {ideal:.2f} s; server saw at most {peak} requests in flight)")
    keys = ("sequential", "agents_parallel", "all_parallel_limit8", "all_parallel_unlimited")
    write_results(
        "bench_vlm_concurrency",
        {
            "calls_per_round": calls,
            "latency_s": args.latency,
            **{
                k: {"wall_s": seconds, "speedup": base / seconds}
                for k, (_, seconds) in zip(keys, results, strict=True)
            },
            "peak_in_flight": peak,
        },
        notes=f"median of {args.rounds} rounds; fake server answers after the latency",
        allow_dirty=args.allow_dirty,
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2, help="server seconds per call")
    parser.add_argument("--agents", type=int, default=5)
    parser.add_argument("--modules", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    add_results_arguments(parser)
    args = parser.parse_args()
    preflight(args.allow_dirty)
    return args


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
