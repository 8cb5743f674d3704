"""Play an ALEM skill file as the whole team on Hard tuning seeds and count how the team agrees on
coordination sites (docs/alem.md "One choice for the team").

Per step in the coordination window (``step % 200 < 130``) it applies a site rule of the skill API
(``--target``: ``coordination_target``, ``team_site`` or ``shared_site``) to each living agent's
observation and counts: steps where two or more agents have a pick and all picks are one site;
picks that need two agents with a teammate within 7 tiles; agents with a teammate within 7 tiles;
and, for the leader's (lowest living id) pick, steps where enough agents stand next to it and face
it. It also scores every episode (team and agent-mean Total %, survival, causes of death).
Episodes run batched, as ``bench_alem.py`` plays them; the skill file may live anywhere (a variant
under test), but its file name must match its function name.

    python benchmarks/alem_coord_diag.py /tmp/v1/alem_role_policy.py --target team_site \\
        --seeds 0,1,2,3,4,5 --steps 3000 --out /tmp/v1.json
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, summary, write_out  # noqa: E402

WINDOW = 130  # the library's coordination window: steps 0-129 of every 200


def count_step(c: Counter, ds: list, pick) -> None:
    """Add one step's agreement counts for the living agents' observations ``ds`` to ``c``."""
    from compass.games.alem.skill_api import distance, team_alive

    picks = {}
    for d in ds:
        s = pick(d)
        if s is None:
            continue
        picks[d.agent_id] = s
        near = any(distance((t.x, t.y), (s.x, s.y)) <= 7 for t in team_alive(d))
        need = s.required if s.kind == "sync" else 2
        c["picks"] += 1
        c["picks_mate_within7"] += near
        if need == 2:
            c["picks2"] += 1
            c["picks2_mate_within7"] += near
    if len(picks) >= 2:
        c["steps_2plus_picks"] += 1
        c["steps_2plus_same"] += len({(s.x, s.y) for s in picks.values()}) == 1
    for d in ds:
        if team_alive(d):
            c["agent_steps_with_mate"] += 1
            c["agent_steps_mate_within7"] += any(distance((t.x, t.y), d.position) <= 7 for t in team_alive(d))
    lead = min(ds, key=lambda d: d.agent_id)
    site = picks.get(lead.agent_id)
    if site is not None:
        xy = (site.x, site.y)
        need = site.required if site.kind == "sync" else 2
        adjacent = [d for d in ds if distance(d.position, xy) == 1]
        c["leader_picks"] += 1
        c[f"leader_picks_need{need}"] += 1
        c["leader_pick_enough_adjacent"] += len(adjacent) >= need
        c["leader_pick_enough_facing"] += sum(tuple(d.facing_xy) == xy for d in adjacent) >= need


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__, seeds="0-5", variants=False)
    p.add_argument("--difficulty", default="hard")
    p.add_argument("--target", default="coordination_target", help="the skill API's site rule to count")
    a = parse_dev_args(p, argv)
    seeds = a.seeds

    import compass.games.alem.skill_api as api
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    pick = getattr(api, a.target)
    policy = load_policy(a.skill_file)
    counts = [Counter() for _ in seeds]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        ds = [d for d in (obs_data_from_view(v) for v in views) if d.alive]
        if ds and ds[0].step % 200 < WINDOW:
            count_step(counts[i], ds, pick)

    cpu = time.process_time()
    trackers = play([(policy, s) for s in seeds], a.steps, a.difficulty, on_step=on_step)

    rows = []
    for seed, tracker, c in zip(seeds, trackers, counts, strict=True):
        row = tracker.score().as_dict() | {"seed": seed, "diag": dict(c)}
        rows.append(row)
        print(
            f"seed {seed}: team Total {row['team_total_pct']:.2f} (agent mean {row['total_pct']:.2f}) "
            f"survived {[x['steps_survived'] for x in row['agents']]} deaths {[x['death_cause'] for x in row['agents']]}",
            flush=True,
        )
    total = sum(counts, Counter())
    report = summary(rows) | {"diag": dict(total), "cpu_seconds": time.process_time() - cpu}
    print(json.dumps(report))
    write_out(a.out, {"seeds": seeds, "target": a.target, "rows": rows, "summary": report})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
