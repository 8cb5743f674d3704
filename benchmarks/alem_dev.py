"""What the ALEM development scripts share (``alem_variants.py``, ``alem_nights_diag.py``,
``alem_coord_diag.py``, ``alem_revive_diag.py``): tuning seeds, a skill file compiled as a
policy, and the lockstep loop that plays many episodes at once as ``bench_alem.run_episodes``
does (one sandbox batch for every running episode's agents, one lane each, and one vmapped env
step), with hooks for what each script records per step. Tuning seeds only (docs/alem.md "Seed protocol").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from compass.games.alem.protocol import TUNING_TEXT, parse_tuning_seeds


def tuning_seeds(text: str) -> list[int]:
    """``"0-23"``, ``"0,3,5"`` or ``"0-3,7"`` -> seeds; refuses (one line, no traceback) any outside
    the tuning ranges and text that is not a seed list."""
    try:
        return parse_tuning_seeds(text)
    except ValueError as e:
        raise SystemExit(str(e)) from None


def dev_parser(doc: str | None, seeds: str = "0-11", variants: bool = True) -> argparse.ArgumentParser:
    """The command line every development script shares: ``LABEL=PATH`` variants (or one skill
    file), ``--seeds`` (tuning seeds only, settled by :func:`parse_dev_args`), ``--steps``,
    ``--out``; each script adds its own options."""
    p = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    if variants:
        p.add_argument("variants", nargs="+", help="LABEL=PATH (a skill file named as its function)")
    else:
        p.add_argument("skill_file", help="a skill file named as its function")
    p.add_argument("--seeds", default=seeds, help=f"tuning seeds ({TUNING_TEXT}): {seeds} or a comma list")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--out", required=True)
    return p


def parse_dev_args(p: argparse.ArgumentParser, argv: list[str] | None = None) -> argparse.Namespace:
    """``p``'s arguments, with ``seeds`` as a list of tuning seeds and ``variants`` (where the
    parser has them) as ``(label, path)`` pairs."""
    a = p.parse_args(argv)
    a.seeds = tuning_seeds(a.seeds)
    if hasattr(a, "variants"):
        pairs = []
        for spec in a.variants:
            label, eq, path = spec.partition("=")
            if not eq or not label or not path:
                p.error(f"variant {spec!r}: expected LABEL=PATH")
            pairs.append((label, Path(path)))
        a.variants = pairs
    return a


def write_out(path: str | Path, report: Any) -> None:
    """Write a script's ``--out`` report as JSON atomically (a temporary file, then a rename): a run
    killed mid-write leaves the previous file or none, never a truncated one read later as a result."""
    from compass.util.atomic import atomic_write_text

    atomic_write_text(path, json.dumps(report, indent=1, default=str))


def load_policy(path: str | Path):
    """The skill file at ``path`` compiled (its file name must match its function's name)."""
    from compass.sandbox import compile_skill
    from compass.skills.library import header_length
    from compass.skills.skill import parse_skill_source

    path = Path(path)
    if not path.is_file():
        raise SystemExit(f"no skill file at {path}")
    text = path.read_text()
    skill = parse_skill_source(text, "alem", path)
    return compile_skill(skill.code, skill.name, "alem", filename=str(path), line_offset=header_length(text))


#: Jobs played at once by :func:`play`: a 192-episode batch took 13 GB and was killed beside other
#: runs on the 24 GiB machine; 96 at once stay near 6.5 GB. Episodes do not depend on their batch.
PLAY_CHUNK = 96


def play(
    jobs: Sequence[tuple[Any, int]],
    steps: int,
    difficulty: str = "hard",
    preset: str = "rl",
    on_step: Callable[[int, list, list[int]], None] | None = None,
    on_result: Callable[[int, Any], None] | None = None,
    chunk: int = PLAY_CHUNK,
    on_reset: Callable[[int, Any], None] | None = None,
) -> list:
    """Play every ``(policy, seed)`` job (the policy as the whole team) to its end, ``chunk`` at once.

    ``on_step(i, views, actions)`` sees job ``i``'s views and the actions chosen from them before
    the env steps; ``on_result(i, result)`` sees the env's ``StepResult`` after; ``on_reset(i, env)``
    sees job ``i``'s env once it is reset, before any agent acts (a diagnosis may change what the
    agents remember). Returns one ``EpisodeTracker`` per job."""
    trackers: list = []
    for start in range(0, len(jobs), chunk):
        part = jobs[start : start + chunk]
        step_hook = None if on_step is None else (lambda i, v, a, o=start: on_step(o + i, v, a))
        result_hook = None if on_result is None else (lambda i, r, o=start: on_result(o + i, r))
        reset_hook = None if on_reset is None else (lambda i, e, o=start: on_reset(o + i, e))
        trackers += _play_together(part, steps, difficulty, preset, step_hook, result_hook, reset_hook)
    return trackers


def _play_together(jobs, steps, difficulty, preset, on_step, on_result, on_reset=None) -> list:
    """:func:`play` for one chunk: every job stepped in one batch until all have ended."""
    from compass.games.alem.env import make_alem
    from compass.games.alem.metrics import EpisodeTracker
    from compass.sandbox import SkillExecutor

    envs = [make_alem(difficulty, max_steps=steps, text=False, preset=preset) for _ in jobs]
    executor = SkillExecutor("compass.games.alem.skill_api", seed=[s for _, s in jobs])
    trackers = [EpisodeTracker() for _ in envs]
    # A skill that raises plays NOOP for that agent: count it, so a broken variant is not read as a weak one.
    errors = [0] * len(envs)
    first_error: list = [None] * len(envs)
    n = envs[0].n_agents
    views = [e.reset(s) for e, (_, s) in zip(envs, jobs, strict=True)]
    if on_reset is not None:
        for i, e in enumerate(envs):
            on_reset(i, e)
    running = list(range(len(envs)))
    while running:
        results = executor.run_batch(
            [(jobs[i][0], v) for i in running for v in views[i]], [i for i in running for _ in range(n)]
        )
        inputs = [e.step_idle() for e in envs]
        for k, i in enumerate(running):
            actions = [r.action for r in results[n * k : n * (k + 1)]]
            for r in results[n * k : n * (k + 1)]:
                if r.error is not None:
                    errors[i] += 1
                    first_error[i] = first_error[i] or r.error
            inputs[i] = envs[i].step_begin(actions)
            if on_step is not None:
                on_step(i, views[i], actions)
        outs = envs[0].step_batch(inputs)
        still = []
        for i in running:
            res = envs[i].step_end(outs[i])
            trackers[i].update(res.info, res.outcome)
            if on_result is not None:
                on_result(i, res)
            views[i] = res.views
            if not res.done:
                still.append(i)
        running = still
    for (_, seed), count, first in zip(jobs, errors, first_error, strict=True):
        if count:
            print(
                f"warning: seed {seed}: the skill raised on {count} agent-steps; the first: {first}",
                file=sys.stderr,
            )
    return trackers


def summary(rows: list[dict]) -> dict:
    """Means over score rows (``EpisodeScore.as_dict()``): team and agent-mean Total %, survival
    per agent, causes of death."""
    survived = [a["steps_survived"] for r in rows for a in r["agents"]]
    return {
        "team_total_pct": statistics.mean(r["team_total_pct"] for r in rows),
        "agent_mean_total_pct": statistics.mean(r["total_pct"] for r in rows),
        "survival_median": statistics.median(survived),
        "survival_mean": statistics.mean(survived),
        "death_causes": dict(
            Counter(a["death_cause"] or "alive" for r in rows for a in r["agents"]).most_common()
        ),
    }
