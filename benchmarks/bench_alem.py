"""ALEM benchmark: a library-only team beside a random-legal-action team, Base%/Coord.%/Total%.

Teams (``--teams``): ``library`` = every agent runs the NAMED skill ``--skill`` (default the
generalist ``alem_role_policy``; no retrieval) through the compass sandbox; ``retrieval`` = every
agent runs the skill that retrieval picks for the family's neutral default task (what
``compass run --env alem:...`` does without ``--skill``); ``random`` picks a uniformly random legal
action. Episodes are full length by
default (10,000 steps, ending early when all agents die), seeds 9999+i as in alem's evaluation.

    python benchmarks/bench_alem.py                                  # easy, medium, hard x 5 seeds
    python benchmarks/bench_alem.py --difficulties hard --seeds 2 --steps 2000   # quick look
    python benchmarks/bench_alem.py --out runs/bench_alem.json

Results print beside the ALEM paper's Table 1 (best zero-shot LLM, MARL 1B, LLM average), with
95 % bootstrap CIs over episodes, episode length and the cause of every agent's death
(:mod:`compass.games.alem.deaths`), and go to ``benchmarks/results/bench_alem.json``, or, with
``--out PATH``, to PATH only (per-episode detail included), so iteration runs leave the published
file alone.

Env config: the paper's benchmark config (``EnvParams(max_timesteps=10000, shared_reward=False,
**get_coordination_params(difficulty))``, alem's own defaults for everything else, so
``non_specialist_efficiency`` = 0.5; see docs/alem.md "Which config the scores use").
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._results import add_results_arguments, command, preflight, write_results  # noqa: E402
from compass.core.family import get_family  # noqa: E402
from compass.games.alem.env import AlemEnv, StepTimes, make_alem  # noqa: E402
from compass.games.alem.metrics import PAPER_TABLE1, EpisodeScore, EpisodeTracker, summarise  # noqa: E402
from compass.sandbox import CompiledSkill, SkillExecutor, compile_skill  # noqa: E402
from compass.skills.library import header_length  # noqa: E402
from compass.skills.skill import parse_skill_source  # noqa: E402
from compass.util.atomic import atomic_write_json  # noqa: E402

LIBRARY = get_family("alem").seed_skills_dir


def load_skill(name: str) -> CompiledSkill:
    """Compile ``compass/games/alem/skills/<name>.py`` under the sandbox policy."""
    path = LIBRARY / f"{name}.py"
    text = path.read_text()
    skill = parse_skill_source(text, "alem", path)
    return compile_skill(skill.code, skill.name, "alem", filename=str(path), line_offset=header_length(text))


@dataclass
class EpisodeResult:
    """One episode's score plus where the time went."""

    team: str
    difficulty: str
    seed: int
    score: EpisodeScore
    seconds: float
    skill_seconds: float
    skill_errors: int
    adapter_ms: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "team": self.team,
            "difficulty": self.difficulty,
            "seed": self.seed,
            "seconds": self.seconds,
            "skill_ms_per_agent_step": 1000 * self.skill_seconds / max(1, 3 * self.score.steps),
            "skill_errors": self.skill_errors,
            "adapter_ms_per_step": self.adapter_ms,
            **self.score.as_dict(),
        }


def run_episode(env: AlemEnv, team: str, seed: int, policy: CompiledSkill | None = None) -> EpisodeResult:
    """Play one episode with ``team`` = ``library`` (skills in the sandbox) or ``random``."""
    executor = SkillExecutor("compass.games.alem.skill_api", seed=seed) if policy is not None else None
    rng = random.Random(seed)
    tracker = EpisodeTracker(overworld=env.scenario == "overworld")
    env.times = StepTimes()  # per-episode timings
    start = time.perf_counter()
    skill_s, errors = 0.0, 0
    views = env.reset(seed)
    while True:
        if executor is not None:
            results = [executor.run(policy, v) for v in views]
            actions = [r.action for r in results]
            skill_s += sum(r.seconds for r in results)
            errors += sum(r.error is not None for r in results)
        else:
            actions = [rng.choice(v.avail_actions) for v in views]
        res = env.step(actions)
        tracker.update(res.info, res.outcome)
        views = res.views
        if res.done:
            break
    return EpisodeResult(
        team,
        env.scenario,
        seed,
        tracker.score(),
        time.perf_counter() - start,
        skill_s,
        errors,
        env.times.per_step_ms(),
    )


def env_config_of(env: AlemEnv) -> dict:
    """The alem ``EnvParams`` fields that decide how hard an episode is (recorded with the results)."""
    p = env.text_params
    keys = (
        "shared_reward",
        "non_specialist_efficiency",
        "soft_solo_fail_prob",
        "soft_specialization",
        "coordination_probability",
        "handover_window_min",
        "handover_window_max",
        "construction_enabled",
    )
    out = {k: getattr(p, k) for k in keys if hasattr(p, k)}
    return {k: v.item() if hasattr(v, "item") else v for k, v in out.items()} | {
        "max_timesteps": env.max_steps
    }


def _fmt(summary: dict, key: str) -> str:
    m = summary[key]
    return f"{m['mean']:5.1f} [{m['ci95'][0]:4.1f},{m['ci95'][1]:4.1f}]"


def report(results: list[EpisodeResult]) -> dict:
    """Print the table (ours beside the paper's), episode lengths and death causes; return the summaries."""
    out: dict = {}
    print(
        f"\n{'difficulty':10} {'team':10} {'n':>2}  {'Base%':17} {'Coord.%':17} {'Total%':17} "
        f"{'survived':>8} {'length':>7}"
    )
    for diff in dict.fromkeys(r.difficulty for r in results):
        for team in dict.fromkeys(r.team for r in results):
            eps = [r.score for r in results if r.difficulty == diff and r.team == team]
            if not eps:
                continue
            s = summarise(eps)
            out[f"{diff}/{team}"] = s
            print(
                f"{diff:10} {team:10} {len(eps):2}  {_fmt(s, 'base_pct')} {_fmt(s, 'coord_pct')} "
                f"{_fmt(s, 'total_pct')} {s['steps_survived']['mean']:8.0f} {s['steps']:7.0f}"
            )
        for name, (b, c, t) in PAPER_TABLE1.get(diff, {}).items():
            print(f"{diff:10} {'paper: ' + name:28}  {b:5.1f}{'':12} {c:5.1f}{'':12} {t:5.1f}")
    print("\ncauses of death (agents; 'survived' = alive at the end):")
    for key, s in out.items():
        print(f"  {key:18} " + ", ".join(f"{k} {v}" for k, v in s["death_causes"].items()))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--difficulties", default="easy,medium,hard", help="comma list of easy,medium,hard,overworld"
    )
    p.add_argument("--seeds", type=int, default=5, help="episodes per difficulty and team")
    p.add_argument("--seed-base", type=int, default=9999, help="episode i uses seed seed_base + i")
    p.add_argument("--steps", type=int, default=10000, help="max steps per episode")
    p.add_argument("--teams", default="library,retrieval,random")
    p.add_argument("--notes", default="", help="stored with the results, e.g. why seeds were reduced")
    p.add_argument("--skill", default="alem_role_policy", help="library skill every agent runs")
    p.add_argument(
        "--no-text", action="store_true", help="skip the harness text (skills use parse_obs' fast path)"
    )
    p.add_argument("--out", default="", help="write per-episode results and summaries as JSON here")
    add_results_arguments(p)
    args = p.parse_args(argv)
    preflight(args.allow_dirty, [LIBRARY])

    from compass.skills.library import SkillLibrary

    family = get_family("alem")
    retrieved = SkillLibrary(None, "alem").retrieve(family.default_task, k=1)[0].skill.name
    policies = {"library": load_skill(args.skill), "retrieval": load_skill(retrieved), "random": None}
    print(f"named skill: {args.skill}; retrieval for {family.default_task!r}: {retrieved}")
    results: list[EpisodeResult] = []
    env_config: dict = {}
    for diff in args.difficulties.split(","):
        t = time.perf_counter()
        env = make_alem(diff, max_steps=args.steps, text=not args.no_text)
        env_config[diff] = env_config_of(env)
        print(
            f"[{diff}] env ready in {time.perf_counter() - t:.1f}s (compile {env.compile_seconds})",
            flush=True,
        )
        for team in args.teams.split(","):
            for i in range(args.seeds):
                r = run_episode(env, team, args.seed_base + i, policies[team])
                results.append(r)
                s = r.score
                print(
                    f"[{diff}] {team:8} seed {r.seed}: Base {s.base_pct:5.2f}  Coord {s.coord_pct:5.2f}  "
                    f"Total {s.total_pct:5.2f}  steps {s.steps:5d} ({s.outcome})  "
                    f"survived {[a.steps_survived for a in s.agents]}  "
                    f"deaths {[a.death_cause for a in s.agents]}  {r.seconds:6.1f}s  "
                    f"adapter {r.adapter_ms}  skill ms/agent-step "
                    f"{1000 * r.skill_seconds / max(1, 3 * s.steps):.2f}  errors {r.skill_errors}",
                    flush=True,
                )
                if args.out:
                    _write(args.out, results, None)
    summaries = report(results)
    by_difficulty: dict = {}
    for key, s in summaries.items():
        diff, team = key.split("/")
        by_difficulty.setdefault(diff, {})[team] = s
    for diff, teams in by_difficulty.items():
        for team in teams:
            eps = [r for r in results if r.difficulty == diff and r.team == team]
            teams[team]["ms_per_step"] = {
                k: sum(r.adapter_ms.get(k, 0.0) for r in eps) / len(eps)
                for k in (eps[0].adapter_ms if eps else {})
            }
            teams[team]["skill_ms_per_agent_step"] = sum(
                1000 * r.skill_seconds / max(1, 3 * r.score.steps) for r in eps
            ) / len(eps)
    data = {
        "named_skill": args.skill,
        "retrieved_skill": retrieved,
        "task": family.default_task,
        "max_steps": args.steps,
        # Quoted from the ALEM paper's Table 1 (not measured): Total % per difficulty.
        "paper_total_pct": {
            d: {
                "best_llm": rows["gemini-3.1-pro-high"][2],
                "marl_1b": rows["MARL 1B"][2],
                "llm_average": rows["LLM average"][2],
            }
            for d, rows in PAPER_TABLE1.items()
        },
        # The alem EnvParams the scores were measured under (the paper's benchmark config).
        "env_config": env_config,
        **by_difficulty,
    }
    seeds = [args.seed_base + i for i in range(args.seeds)]
    if args.out:
        _write(args.out, results, data, seeds, args.notes)
        print(f"results written to {args.out} (benchmarks/results/bench_alem.json untouched)")
    else:
        write_results(
            "bench_alem", data, seeds=seeds, notes=args.notes, inputs=[LIBRARY], allow_dirty=args.allow_dirty
        )
    return 0


def _write(
    path: str,
    results: list[EpisodeResult],
    summaries: dict | None,
    seeds: list[int] | None = None,
    notes: str = "",
) -> None:
    """Per-episode results (and, at the end, the summaries) to ``path``, atomically."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    record = {
        "command": command(),
        "seeds": seeds,
        "notes": notes,
        "episodes": [r.as_dict() for r in results],
        "results": summaries,
    }
    atomic_write_json(Path(path), json.loads(json.dumps(record, default=float)))


if __name__ == "__main__":
    raise SystemExit(main())
