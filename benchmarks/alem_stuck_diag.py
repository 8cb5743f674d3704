"""Count the agent-steps ALEM agents spend stuck, and which line of the policy chose them
(docs/alem.md "Walking that does not get stuck").

An agent is *oscillating* while it keeps to the same 2-3 tiles for ``--window`` (20) steps or
more, moving between them at least 4 times, with no change in its inventory, achievements,
health or level, awake. Each such step is attributed to the skill-API call that produced the
action and to the line of the skill file it was called from (the API's functions are wrapped
in this process only; the game and the actions are unchanged). Several variants play the same
tuning seeds one after the other, as in ``alem_variants.py``.

    python benchmarks/alem_stuck_diag.py main=/tmp/path/main/alem_role_policy.py \\
        --seeds 0-11 --steps 3000 --out /tmp/path/stuck.json
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

# Calls that never produce the action (queries); the rest are credited when their result is it.
QUERIES = {"parse_obs", "legal", "action", "action_name"}


class CallTracer:
    """Wraps ``skill_api.make_api`` so every call a skill makes is recorded with its line, per view."""

    def __init__(self, skill_file: str) -> None:
        self.skill_file = skill_file
        self.calls: dict[int, list[tuple[str, int, object]]] = {}

    def api(self, original, view, rng) -> dict:
        calls = self.calls.setdefault(id(view), [])
        return {k: self._wrap(k, v, calls) for k, v in original(view, rng).items()}

    def _wrap(self, name: str, fn, calls: list):
        if not callable(fn) or isinstance(fn, type) or name in QUERIES:
            return fn
        skill_file = self.skill_file

        def traced(*args, **kwargs):
            out = fn(*args, **kwargs)
            f = sys._getframe(1)
            while f is not None and f.f_code.co_filename != skill_file:
                f = f.f_back
            if f is not None:
                calls.append((name, f.f_lineno, out))
            return out

        traced.__name__ = getattr(fn, "__name__", name)
        traced.__doc__ = fn.__doc__
        return traced

    def take(self, view, action: int) -> str:
        """The API call (and skill line) whose result was ``action`` on ``view``; forgets the view."""
        for name, line, out in reversed(self.calls.pop(id(view), [])):
            if out == action:
                return f"{name}@{line}"
        return "inline"


def signature(d) -> tuple:
    """What must stay the same for steps to count as stuck: inventory, achievements, health, level."""
    return (tuple(sorted(d.inventory.items())), len(d.achievements), d.health, d.level)


def stuck_steps(run: list[tuple], window: int) -> bool:
    """Whether a run of ``(tile, label)`` steps is oscillation: long, 2-3 tiles, moving among them."""
    tiles = {p for p, _ in run}
    moves = sum(a[0] != b[0] for a, b in zip(run, run[1:], strict=False))
    return len(run) >= window and 2 <= len(tiles) <= 3 and moves >= 4


def play_variant(path: Path, seeds: list[int], steps: int, window: int) -> list[dict]:
    """One row per seed: the score, stuck agent-steps by API call and skill line, steps per level."""
    import compass.games.alem.skill_api as api
    from compass.games.alem.skill_api.knowledge import obs_data_from_view

    policy = load_policy(path)
    tracer = CallTracer(str(path))
    original = api.make_api
    stuck = [Counter() for _ in seeds]
    levels = [Counter() for _ in seeds]
    first: list[dict[str, int]] = [{} for _ in seeds]
    runs: dict[tuple[int, int], tuple[tuple, list]] = {}

    def close(key: tuple[int, int]) -> None:
        _, run = runs.pop(key, (None, []))
        if stuck_steps(run, window):
            stuck[key[0]]["agent_steps"] += len(run)
            stuck[key[0]]["runs"] += 1
            for _, label in run:
                stuck[key[0]][label] += 1

    def on_step(i: int, views: list, actions: list[int]) -> None:
        for v, a in zip(views, actions, strict=True):
            key = (i, v.agent_id)
            label = tracer.take(v, a)
            d = obs_data_from_view(v)
            if not d.alive or d.sleeping or d.resting:
                close(key)
                continue
            levels[i][f"level_{d.level}"] += 1
            first[i].setdefault(f"level_{d.level}", d.step)
            sig = signature(d)
            cur = runs.get(key)
            if cur is not None and (cur[0] != sig or len({p for p, _ in cur[1]} | {d.position}) > 3):
                close(key)
                cur = None
            if cur is None:
                cur = runs[key] = (sig, [])
            cur[1].append((d.position, label))

    api.make_api = lambda view, rng: tracer.api(original, view, rng)
    try:
        trackers = play([(policy, s) for s in seeds], steps, on_step=on_step)
    finally:
        api.make_api = original
    for key in list(runs):
        close(key)
    return [
        tr.score().as_dict()
        | {"seed": seed, "stuck": dict(c.most_common()), "level_steps": dict(lv), "first_step_on": f}
        for seed, tr, c, lv, f in zip(seeds, trackers, stuck, levels, first, strict=True)
    ]


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__)
    p.add_argument("--window", type=int, default=20, help="steps on 2-3 tiles that count as stuck")
    a = parse_dev_args(p, argv)
    seeds = a.seeds
    report: dict = {"seeds": seeds, "steps": a.steps, "window": a.window, "variants": {}}
    for label, path in a.variants:
        rows = play_variant(path.resolve(), seeds, a.steps, a.window)
        total = sum((Counter(r["stuck"]) for r in rows), Counter())
        s = summary(rows) | {"stuck": dict(total.most_common())}
        report["variants"][label] = {"path": str(path), "rows": rows, "summary": s}
        print(f"[{label}] {json.dumps(s)}", flush=True)
        for r in rows:
            print(f"[{label}]   seed {r['seed']}: {r['team_total_pct']:.2f} stuck {r['stuck']}", flush=True)
        write_out(a.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
