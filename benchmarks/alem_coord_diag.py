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

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compass.games.alem.protocol import TUNING_SEEDS  # noqa: E402

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
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("skill_file")
    p.add_argument("--seeds", default="0,1,2,3,4,5", help="comma list of tuning seeds (0-999)")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--difficulty", default="hard")
    p.add_argument("--target", default="coordination_target", help="the skill API's site rule to count")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    if any(s not in TUNING_SEEDS for s in seeds):
        raise SystemExit("--seeds: tuning seeds must lie in 0-999 (docs/alem.md 'Seed protocol')")

    import compass.games.alem.skill_api as api
    from compass.games.alem.env import make_alem
    from compass.games.alem.metrics import EpisodeTracker
    from compass.games.alem.skill_api.knowledge import obs_data_from_view
    from compass.sandbox import SkillExecutor, compile_skill
    from compass.skills.library import header_length
    from compass.skills.skill import parse_skill_source

    pick = getattr(api, a.target)
    path = Path(a.skill_file)
    text = path.read_text()
    skill = parse_skill_source(text, "alem", path)
    policy = compile_skill(
        skill.code, skill.name, "alem", filename=str(path), line_offset=header_length(text)
    )
    envs = [make_alem(a.difficulty, max_steps=a.steps, text=False, preset="rl") for _ in seeds]
    executor = SkillExecutor("compass.games.alem.skill_api", seed=list(seeds))
    trackers = [EpisodeTracker() for _ in envs]
    counts = [Counter() for _ in seeds]
    views = [e.reset(s) for e, s in zip(envs, seeds, strict=True)]
    running = list(range(len(envs)))
    cpu = time.process_time()
    while running:
        n = envs[0].n_agents
        results = executor.run_batch(
            [(policy, v) for i in running for v in views[i]], [i for i in running for _ in range(n)]
        )
        inputs = [e.step_idle() for e in envs]
        for k, i in enumerate(running):
            inputs[i] = envs[i].step_begin([r.action for r in results[n * k : n * (k + 1)]])
            ds = [d for d in (obs_data_from_view(v) for v in views[i]) if d.alive]
            if ds and ds[0].step % 200 < WINDOW:
                count_step(counts[i], ds, pick)
        outs = envs[0].step_batch(inputs)
        still = []
        for i in running:
            res = envs[i].step_end(outs[i])
            trackers[i].update(res.info, res.outcome)
            views[i] = res.views
            if not res.done:
                still.append(i)
        running = still

    rows = []
    for seed, tracker, c in zip(seeds, trackers, counts, strict=True):
        row = tracker.score().as_dict() | {"seed": seed, "diag": dict(c)}
        rows.append(row)
        print(
            f"seed {seed}: team Total {row['team_total_pct']:.2f} (agent mean {row['total_pct']:.2f}) "
            f"survived {[x['steps_survived'] for x in row['agents']]} deaths {[x['death_cause'] for x in row['agents']]}",
            flush=True,
        )
    survived = [x["steps_survived"] for r in rows for x in r["agents"]]
    total = sum(counts, Counter())
    summary = {
        "team_total_pct": statistics.mean(r["team_total_pct"] for r in rows),
        "agent_mean_total_pct": statistics.mean(r["total_pct"] for r in rows),
        "survival_median": statistics.median(survived),
        "death_causes": dict(Counter(x["death_cause"] or "alive" for r in rows for x in r["agents"])),
        "diag": dict(total),
        "cpu_seconds": time.process_time() - cpu,
    }
    print(json.dumps(summary))
    Path(a.out).write_text(
        json.dumps({"seeds": seeds, "target": a.target, "rows": rows, "summary": summary}, indent=1)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
