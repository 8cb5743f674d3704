"""Record combat observations for ``compass skills check`` (``compass/games/combat/observations.jsonl``).

Run: ``python benchmarks/record_observations.py [--per-config 22] [--seed 0] [--out PATH]``

Plays one SMAX episode per configuration (protoss/terran/zerg, 5v5 and 5v6, and 5v5 under
extended partial observability with multi-hop communication) with the shipped library's default
skill, and keeps evenly spaced agent views as the text each agent's skill received: relayed
entities included, dead units included (late in an episode some agents are dead). The result is
deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from compass.comm import CommProtocol
from compass.core.types import AgentView
from compass.games.combat.smax import SmaxEnv
from compass.sandbox import SkillExecutor
from compass.skills.check import observations_path
from compass.skills.library import SkillLibrary

CONFIGS = [
    (f"{race}_{size}", epo)
    for race in ("protoss", "terran", "zerg")
    for size, epo in (("5_vs_5", False), ("5_vs_6", False), ("5_vs_5", True))
]


def play_and_collect(
    scenario: str, epo: bool, seed: int, skill_name: str = "race_adaptive_combat"
) -> list[AgentView]:
    """Every agent's perceived view (own sight plus relayed reports) at every step of one episode."""
    lib = SkillLibrary(None, "combat")
    skill = lib.compiled[skill_name]
    env = SmaxEnv(scenario, epo=epo)
    comm = CommProtocol("multihop", seed=seed)
    executor = SkillExecutor("compass.games.combat.skill_api", seed=seed)
    views = env.reset(seed)
    seen: list[AgentView] = []
    for t in range(env.max_steps):
        comm.exchange(t, views)
        perceived = []
        for v in views:
            relayed = comm.relayed_for(v.agent_id, v) if v.alive else ()
            perceived.append(v.with_entities(v.entities + tuple(relayed)) if relayed else v)
        seen.extend(perceived)
        res = env.step([executor.run(skill, v).action if v.alive else 0 for v in perceived])
        views = res.views
        if res.done:
            seen.extend(views)  # the final step: the losing side's units are dead
            break
    return seen


def select(views: list[AgentView], n: int, dead: int = 2) -> list[AgentView]:
    """``n`` views: evenly spaced live ones (always one with relayed entities, if any) plus ``dead`` dead ones."""
    live = [v for v in views if v.alive]
    idx = set(np.linspace(0, len(live) - 1, num=min(n - dead, len(live))).round().astype(int).tolist())
    if not any(any(not e.visible for e in live[i].entities) for i in idx):
        hit = next((i for i, v in enumerate(live) if any(not e.visible for e in v.entities)), None)
        if hit is not None:
            idx.add(hit)
    gone = [v for v in views if not v.alive]
    picked = [live[i] for i in sorted(idx)]
    return picked + [gone[i] for i in sorted({0, len(gone) - 1})][:dead] if gone else picked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-config", type=int, default=22, help="observations kept per configuration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=observations_path("combat"))
    args = ap.parse_args()
    records = []
    for k, (scenario, epo) in enumerate(CONFIGS):
        seed = args.seed + k
        chosen = select(play_and_collect(scenario, epo, seed), args.per_config)
        for v in chosen:
            records.append(
                {
                    "scenario": f"smax:{scenario}",
                    "epo": epo,
                    "comm": "multihop",
                    "seed": seed,
                    "step": v.step,
                    "agent": v.agent_id,
                    "alive": v.alive,
                    "relayed": sum(not e.visible for e in v.entities),
                    "text": v.text,
                }
            )
        dead = sum(not v.alive for v in chosen)
        relayed = sum(any(not e.visible for e in v.entities) for v in chosen)
        print(
            f"{scenario:<16} epo={epo!s:<5} seed={seed}: {len(chosen)} views ({dead} dead, {relayed} with relayed)"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print(f"wrote {len(records)} observations to {args.out}")


if __name__ == "__main__":
    main()
