"""Record observations for ``compass skills check`` (the family's ``observations.jsonl``).

Run: ``python benchmarks/record_observations.py [--family combat|alem] [--per-config N] [--seed 0] [--out PATH]``

combat: plays one SMAX episode per configuration (protoss/terran/zerg, 5v5 and 5v6, and 5v5 under
extended partial observability) with the shipped library's default skill. alem: plays overworld
episodes (one per seed) with the generalist ``alem_role_policy``. Both communicate multi-hop and
keep evenly spaced agent views as the text each agent's skill received: relayed entities
included, dead units included when there are any. The result is deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from compass.comm import CommProtocol
from compass.core.family import get_family, make_env
from compass.core.types import AgentView, MultiAgentEnv
from compass.sandbox import SkillExecutor
from compass.skills.check import observations_path
from compass.skills.library import SkillLibrary

#: Per family: (env spec, epo) configurations, the skill that plays, episode length cap, views kept each.
CONFIGS: dict[str, list[tuple[str, bool]]] = {
    "combat": [
        (f"smax:{race}_{size}", epo)
        for race in ("protoss", "terran", "zerg")
        for size, epo in (("5_vs_5", False), ("5_vs_6", False), ("5_vs_5", True))
    ],
    "alem": [("alem:overworld", False)] * 4,
}
PLAYER = {"combat": "race_adaptive_combat", "alem": "alem_role_policy"}
MAX_STEPS = {"combat": None, "alem": 400}
PER_CONFIG = {"combat": 22, "alem": 15}


def play_and_collect(
    env: MultiAgentEnv, family: str, seed: int, skill_name: str, max_steps: int
) -> list[AgentView]:
    """Every agent's perceived view (own sight plus relayed reports) at every step of one episode."""
    lib = SkillLibrary(None, family)
    skill = lib.compiled[skill_name]
    comm = CommProtocol("multihop", seed=seed)
    executor = SkillExecutor(get_family(family).skill_api, seed=seed)
    views = env.reset(seed)
    seen: list[AgentView] = []
    for t in range(max_steps):
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
    ap.add_argument("--family", choices=sorted(CONFIGS), default="combat")
    ap.add_argument("--per-config", type=int, default=None, help="observations kept per configuration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="default: the family's observations.jsonl")
    args = ap.parse_args()
    family = args.family
    per_config = args.per_config or PER_CONFIG[family]
    out = args.out or observations_path(family)
    records = []
    for k, (scenario, epo) in enumerate(CONFIGS[family]):
        seed = args.seed + k
        env = make_env(scenario, epo=epo, max_steps=MAX_STEPS[family])
        steps = MAX_STEPS[family] or env.max_steps
        chosen = select(play_and_collect(env, family, seed, PLAYER[family], steps), per_config)
        for v in chosen:
            records.append(
                {
                    "scenario": scenario,
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
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")  # atomic: a failed run leaves the old file
    with open(tmp, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    tmp.replace(out)
    print(f"wrote {len(records)} observations ({out.stat().st_size / 1e6:.2f} MB) to {out}")


if __name__ == "__main__":
    main()
