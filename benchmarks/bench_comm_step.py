"""Per-step cost of the communication protocol (no environment needed).

Run: ``PYTHONPATH=. python benchmarks/bench_comm_step.py [--agents 5] [--enemies 10]``

Units random-walk on a 32x32 map with sight 9 (SMACv2-like). One "step" is what the runner does
every env step: ``exchange`` + ``relayed_for`` and ``ally_tasks_for`` for every agent.
"""

from __future__ import annotations

import argparse
import math
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from benchmarks._results import add_results_arguments, preflight, write_results  # noqa: E402
from compass.comm import CommProtocol  # noqa: E402
from compass.comm.entity_memory import GlobalEntityMemory  # noqa: E402
from compass.core.types import AgentView, Entity, OwnUnit  # noqa: E402

SIGHT, SHOOT, SIZE = 9.0, 6.0, 32.0


def make_views(rng: np.random.Generator, n_agents: int, n_enemies: int, steps: int) -> list[list[AgentView]]:
    """Random-walk trajectories turned into per-step views; each agent sees what is within SIGHT."""
    allies = rng.uniform(8, 24, (n_agents, 2))
    enemies = rng.uniform(0, SIZE, (n_enemies, 2))
    out = []
    for step in range(steps):
        allies = np.clip(allies + rng.normal(0, 0.7, allies.shape), 0, SIZE)
        enemies = np.clip(enemies + rng.normal(0, 0.7, enemies.shape), 0, SIZE)
        views = []
        for i, (x, y) in enumerate(allies.tolist()):
            seen = []
            for team, pts in (("enemy", enemies), ("ally", allies)):
                for j, (ex, ey) in enumerate(pts.tolist()):
                    if (team, j) != ("ally", i) and math.hypot(ex - x, ey - y) <= SIGHT:
                        e = Entity(j, team, "stalker", ex, ey, 0.0, 0.0, 0.0, 1.0)
                        seen.append(e.relative_to(x, y, SIGHT, SHOOT))
            own = OwnUnit("stalker", x, y, 1.0, SIGHT, SHOOT, 0, SIZE, SIZE)
            views.append(AgentView(i, "combat", step, True, own, tuple(seen), (), ""))
        out.append(views)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=5)
    ap.add_argument("--enemies", type=int, default=10)
    ap.add_argument("--steps", type=int, default=200)
    add_results_arguments(ap)
    args = ap.parse_args()
    preflight(args.allow_dirty, [])
    trajectory = make_views(np.random.default_rng(0), args.agents, args.enemies, args.steps)
    results: dict = {"agents": args.agents, "enemies": args.enemies, "steps": args.steps, "modes": {}}

    for mode in ("multihop", "onehop", "full", "none", "lossy:0.3", "lossy:0.3:2"):
        proto = CommProtocol(mode, seed=0)
        for a in range(args.agents):
            proto.post_intent(a, 0, f"task of agent {a}", "focus_fire")

        def run(proto: CommProtocol = proto) -> None:
            proto.reset()
            for step, views in enumerate(trajectory):
                proto.exchange(step, views)
                for v in views:
                    proto.relayed_for(v.agent_id, v)
                    proto.ally_tasks_for(v.agent_id)

        best = min(timeit.repeat(run, number=1, repeat=5)) / len(trajectory)
        st = proto.stats()
        results["modes"][mode.replace(":", "_").replace(".", "")] = {
            "us_per_step": best * 1e6,
            "msgs_per_step": st["total_sent"] / len(trajectory),
            "bytes_per_step": st["total_bytes"] / len(trajectory),
        }
        print(
            f"{mode:12s} {best * 1e6:7.0f} µs/step   msgs/step {st['total_sent'] / len(trajectory):6.1f}"
            f"   bytes/step {st['total_bytes'] / len(trajectory):7.0f}"
        )

    mem = GlobalEntityMemory()

    def run_memory() -> None:
        mem.reset()
        for step, views in enumerate(trajectory):
            mem.update(step, views)

    best = min(timeit.repeat(run_memory, number=1, repeat=5)) / len(trajectory)
    print(f"{'memory.update':12s} {best * 1e6:7.0f} µs/step (GlobalEntityMemory alone, no reads)")
    results["memory_update_us_per_step"] = best * 1e6
    name = (
        "bench_comm_step"
        if (args.agents, args.enemies) == (5, 10)
        else f"bench_comm_step_{args.agents}v{args.enemies}"
    )
    write_results(name, results, seeds=[0], notes="timings: best of 5 repeats", allow_dirty=args.allow_dirty)


if __name__ == "__main__":
    main()
