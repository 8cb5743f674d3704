"""Follow every 2-agent (and 3-agent soft) mining sync site an ALEM team sees, on Hard tuning seeds,
and say why it stays unmined (docs/alem.md "Pair harvest").

Plays a skill file as the whole team (batched, as ``bench_alem.py`` plays it). Per episode and per
sync site (stone, coal, tree, ...) needing 2 agents, or 3 if soft: the first step and agent that
saw it, the agent-steps it was in some view, steps with two pickaxe holders both next to it, steps
with two agents facing it, steps where two or more agents Did on it together, and the step an
agent next to it no longer saw it listed (mined). For each agent-step with such a site in its own
view it also records, per kind (2-agent or 3-agent soft), the first reason (in the order
``alem_role_policy`` tests them) the library's coordination branch did not take it: below the
overworld, a creature within 6, night (the library's shelter hours or dark), thirst/hunger,
outside the ``step % 200 < 130`` window, no pickaxe (``can_mine``), nothing new to unlock
(``new_only``), ``coordination_target`` picked another site, no teammate within 7 tiles, or
"taken" (the branch goes for it).

    python benchmarks/alem_pairs_diag.py /tmp/pairs/main/alem_role_policy.py --seeds 0-11 \\
        --steps 3000 --out /tmp/pairs/diag.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, load_policy, parse_dev_args, play, summary, write_out  # noqa: E402

PAIR_ACHIEVEMENTS = (
    "COORD_2_AGENTS_HARD",
    "COORD_2_AGENTS_SOFT",
    "COORD_MINE_STONE_HARD",
    "COORD_MINE_STONE_SOFT",
    "COORD_MINE_COAL_HARD",
    "COORD_MINE_COAL_SOFT",
    "COORD_3_AGENTS_HARD",
    "COORD_3_AGENTS_SOFT",
)


def pair_site(s) -> bool:
    """A mining sync site that two agents can complete (2 required, or 3 soft)."""
    return s.kind == "sync" and not s.construction and (s.required == 2 or (s.required == 3 and s.soft))


def why_not(d, s) -> str:
    """The first reason the library's coordination branch does not act on site ``s`` for ``d``."""
    from compass.games.alem.skill_api import (
        can_mine,
        coordination_rewards,
        coordination_target,
        distance,
        hostile_mobs,
        shelter_time,
        team_alive,
    )

    if d.level >= 1:
        return "below"
    if hostile_mobs(d, 6):
        return "creature within 6"
    if shelter_time(d, 120, 265) or d.light < 0.35:
        return "night"
    if d.drink <= 4 or d.food <= 4:
        return "thirst/hunger"
    if d.step % 200 >= 130:
        return "outside window"
    if not can_mine(d, s.name):
        return "cannot mine (no pickaxe)"
    if d.achievements and all(a in d.achievements for a in coordination_rewards(s)):
        return "nothing new (new_only)"
    t = coordination_target(d)
    if t is None or (t.x, t.y) != (s.x, s.y):
        return "target: another site" + (" (3-agent)" if t is not None and t.required == 3 else "")
    if not any(distance((m.x, m.y), (s.x, s.y)) <= 7 for m in team_alive(d)):
        return "no teammate within 7"
    return "taken"


def main(argv: list[str] | None = None) -> int:
    a = parse_dev_args(dev_parser(__doc__, variants=False), argv)
    seeds = a.seeds

    from compass.games.alem.skill_api import DO, distance
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    sites: list[dict] = [{} for _ in seeds]
    reasons = [Counter() for _ in seeds]

    def on_step(i: int, views: list, actions: list[int]) -> None:
        ds = [obs_data_from_view(v) for v in views]
        live = [(d, act) for d, act in zip(ds, actions, strict=True) if d.alive]
        in_view: dict = {}
        for d, _ in live:
            for s in d.coord_sites:
                if pair_site(s):
                    in_view.setdefault((s.x, s.y), s)
                    rec = sites[i].setdefault(
                        (s.x, s.y),
                        {
                            "name": s.name,
                            "required": s.required,
                            "soft": s.soft,
                            "first_step": d.step,
                            "first_agent": d.agent_id,
                            "seen_by": [],
                            "view_agent_steps": 0,
                            "two_picks_adjacent": 0,
                            "two_facing": 0,
                            "two_did": 0,
                            "gone_step": None,
                        },
                    )
                    rec["view_agent_steps"] += 1
                    if d.agent_id not in rec["seen_by"]:
                        rec["seen_by"].append(d.agent_id)
                    kind = "2-agent" if s.required == 2 else "3-agent soft"
                    reasons[i][f"{kind}: {why_not(d, s)}"] += 1
        for xy in in_view:
            rec = sites[i][xy]
            adj = [(d, act) for d, act in live if distance(d.position, xy) == 1]
            rec["two_picks_adjacent"] += sum(d.inventory["pickaxe"] >= 1 for d, _ in adj) >= 2
            facing = [(d, act) for d, act in adj if tuple(d.facing_xy) == xy]
            rec["two_facing"] += len(facing) >= 2
            rec["two_did"] += sum(act == DO for _, act in facing) >= 2
        # A remembered site no longer listed by an agent whose view covers it was mined.
        for d, _ in live:
            for xy, rec in sites[i].items():
                if (
                    rec["gone_step"] is None
                    and xy not in in_view
                    and abs(d.position[0] - xy[0]) <= 3
                    and abs(d.position[1] - xy[1]) <= 3
                    and d.level == 0
                ):
                    rec["gone_step"] = d.step

    policy = load_policy(a.skill_file)
    trackers = play([(policy, s) for s in seeds], a.steps, on_step=on_step)
    rows = []
    for seed, tr, st, rs in zip(seeds, trackers, sites, reasons, strict=True):
        score = tr.score().as_dict()
        row = score | {
            "seed": seed,
            "sites": [{"x": x, "y": y} | r for (x, y), r in st.items()],
            "reasons": dict(rs.most_common()),
        }
        rows.append(row)
        kinds = Counter(f"{r['name']}{r['required']}{'s' if r['soft'] else 'h'}" for r in st.values())
        print(
            f"seed {seed}: team {score['team_total_pct']:.2f} sites {dict(kinds)} "
            f"2-picks-adjacent {sum(r['two_picks_adjacent'] > 0 for r in st.values())} "
            f"2-did {sum(r['two_did'] > 0 for r in st.values())} reasons {dict(rs.most_common(5))} "
            f"team got {[x for x in PAIR_ACHIEVEMENTS if x in score['team_achievements']]}",
            flush=True,
        )
    total = sum(reasons, Counter())
    print(json.dumps({"reasons": dict(total.most_common())} | summary(rows)))
    write_out(a.out, {"seeds": seeds, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
