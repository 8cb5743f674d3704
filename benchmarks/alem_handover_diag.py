"""Play an ALEM skill file as the whole team on Hard tuning seeds and trace the mining handover
(docs/alem.md "The mining handover, every episode").

Per episode it records the first step any living agent sees a mining handover site (a tree or ore
tile whose coordination value is a window, not a construction site), the first step one is in view
of an agent with a teammate within 4 tiles, agent-steps with one in view in the coordination window
(``step % 200 < 130``) and how often ``coordination_target`` picked one there (and with a teammate
within 7 tiles, the library's condition to walk to it), each handover started (first seen, the
initiator, the distance of the nearest other agent to its tile then, whether it was completed) and
the step the team first unlocked HANDOVER_COMPLETE; also the same for the mining sync sites
(COORD_MINE_STONE_*). It also scores every episode. Episodes run batched, as ``bench_alem.py``
plays them; tuning seeds only.

    python benchmarks/alem_handover_diag.py compass/games/alem/skills/alem_role_policy.py \\
        --seeds 0-47 --steps 3000 --out /tmp/handover.json
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, summary, write_out  # noqa: E402

WINDOW = 130  # the library's coordination window: steps 0-129 of every 200


def mining_handover_sites(d) -> list:
    """The mining handover sites in ``d``'s view (a block to act on, not a construction site)."""
    from compass.games.alem.names import WALKABLE_BLOCKS

    return [
        s
        for s in d.coord_sites
        if s.kind == "handover" and not s.construction and s.name not in WALKABLE_BLOCKS
    ]


def trace_step(ep: dict, ds: list) -> None:
    """Add one step's handover observations (``ds``: the agents' observations) to episode ``ep``."""
    from compass.games.alem.skill_api import coordination_target, distance, team_alive

    alive = [d for d in ds if d.alive]
    if not alive:
        return
    step = alive[0].step
    for d in alive:
        sites = mining_handover_sites(d)
        mates = team_alive(d)
        if sites:
            ep.setdefault("first_site_seen", step)
            ep["agent_steps_site_in_view"] += 1
            if any(distance((t.x, t.y), d.position) <= 4 for t in mates):
                ep.setdefault("first_site_with_mate", step)
            if step % 200 < WINDOW:
                ep["agent_steps_site_in_window"] += 1
                pick = coordination_target(d)
                if pick is not None and pick.kind == "handover" and not pick.construction:
                    ep["picked_handover"] += 1
                    if any(distance((t.x, t.y), (pick.x, pick.y)) <= 7 for t in mates):
                        ep["picked_handover_mate_near"] += 1
                elif pick is not None:
                    ep["picked_other_site"] += 1
                else:
                    ep["picked_none"] += 1
        sync_mine = [
            s
            for s in d.coord_sites
            if s.kind == "sync" and not s.construction and s.name in ("stone", "coal")
        ]
        if sync_mine:
            ep.setdefault("first_mine_sync_seen", step)
        for h in d.handovers:
            if h.building != "mining":
                continue
            key = f"{h.x},{h.y}"
            if key not in ep["setups"]:
                others = [a.position for a in alive if a.agent_id != h.initiator]
                ep["setups"][key] = {
                    "step": step,
                    "initiator": h.initiator,
                    "nearest_other": min((distance(p, (h.x, h.y)) for p in others), default=None),
                }
        if "HANDOVER_COMPLETE" in d.achievements:
            ep.setdefault("first_complete", step)
        for a in d.achievements:
            if a.startswith("COORD_MINE_") and a != "COORD_MINE_HANDOVER":
                ep["mine_sync"].setdefault(a, step)


def main(argv: list[str] | None = None) -> int:
    """Trace the handover on the given seeds and print one line per episode and a summary."""
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    p = dev_parser(__doc__, seeds="0-47", variants=False)
    p.add_argument("--preset", default="rl")
    a = parse_dev_args(p, argv)
    seeds = a.seeds
    eps = [
        {
            "seed": s,
            "agent_steps_site_in_view": 0,
            "agent_steps_site_in_window": 0,
            "picked_handover": 0,
            "picked_handover_mate_near": 0,
            "picked_other_site": 0,
            "picked_none": 0,
            "setups": {},
            "mine_sync": {},
        }
        for s in seeds
    ]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        trace_step(eps[i], [obs_data_from_view(v) for v in views])

    t0 = time.process_time()
    trackers = play(
        [(load_policy(a.skill_file), s) for s in seeds], a.steps, preset=a.preset, on_step=on_step
    )
    rows = [tr.score().as_dict() for tr in trackers]
    for ep, row in zip(eps, rows, strict=True):
        ep["team_total_pct"] = row["team_total_pct"]
        ep["handover"] = "HANDOVER_COMPLETE" in row["team_achievements"]
        ep["died"] = sorted(x["steps_survived"] for x in row["agents"])
        print(
            f"seed {ep['seed']}: total {row['team_total_pct']:.2f} handover {ep.get('first_complete')} "
            f"seen {ep.get('first_site_seen')} with_mate {ep.get('first_site_with_mate')} "
            f"in_window {ep['agent_steps_site_in_window']} picked {ep['picked_handover']}"
            f"/{ep['picked_handover_mate_near']} other {ep['picked_other_site']} none {ep['picked_none']} "
            f"setups {len(ep['setups'])} {list(ep['setups'].values())[:3]} mine_sync {ep['mine_sync']} "
            f"survived {ep['died']}"
        )
    done = [e for e in eps if e["handover"]]
    missed = [e for e in eps if not e["handover"]]
    out = {
        "skill": a.skill_file,
        "seeds": seeds,
        "steps": a.steps,
        "summary": summary(rows),
        "handover_episodes": len(done),
        "median_first_complete": statistics.median([e["first_complete"] for e in done]) if done else None,
        "missed": {
            "n": len(missed),
            "never_seen": sum("first_site_seen" not in e for e in missed),
            "never_seen_with_mate": sum("first_site_with_mate" not in e for e in missed),
            "never_picked": sum(e["picked_handover"] == 0 for e in missed),
            "picked_never_mate_near": sum(
                e["picked_handover"] > 0 and e["picked_handover_mate_near"] == 0 for e in missed
            ),
            "setups_not_completed": sum(len(e["setups"]) for e in missed),
        },
        "cpu_s": round(time.process_time() - t0, 1),
        "episodes": eps,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "episodes"}, indent=1))
    write_out(a.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
