"""Bootstrapping a skill library from demonstrations (recorded episodes: MP4 + trajectory JSONL).

Two ways, both adding skills with ``provenance: bootstrap`` and what they came from:

- :func:`bootstrap_offline`: measure the demonstrators' tactics from the trajectories (the family's
  ``demo_fit`` module: ``measure`` and ``fit``) and set the seed skills' named parameters to them;
- :func:`bootstrap_vlm`: key frames by events (or by frame differencing for a plain MP4), a
  tactic-analysis prompt, one skill-generation prompt per tactic (both data files in the family's
  ``prompts/``), then each candidate is compiled and run in the sandbox on recorded observations,
  played for a few episodes against the library's current best, and added only if it holds up.

Every input problem (no demonstrations, a bad video, a video without trajectory where one is
needed, a checkpoint trained on another env) raises :class:`DemoError` before anything is written.
"""

from __future__ import annotations

import asyncio
import importlib
import io
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from compass.core.errors import CompassError
from compass.core.family import GameFamily, family_for_env, get_family
from compass.skills.holdup import GATE_SEED, check_on_views, describe_test, evaluate_skill, judge
from compass.skills.library import SkillLibrary
from compass.skills.params import get_params, set_params
from compass.skills.skill import Skill, parse_skill_source

Progress = Callable[[str, int, int], None]  # (stage, done, total)


class DemoError(CompassError, ValueError):
    """Demonstrations that cannot be used (the message says which file and why)."""


# --- loading --------------------------------------------------------------------------------------


@dataclass
class Episode:
    """One demonstration: a trajectory (header + steps) and/or a video."""

    name: str
    header: dict[str, Any] | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    video: Path | None = None
    trajectory: Path | None = None


@dataclass
class Demos:
    root: Path
    episodes: list[Episode]
    env: str | None  # from the trajectories (None: videos only)

    @property
    def with_trajectory(self) -> list[Episode]:
        return [e for e in self.episodes if e.header is not None]


def load_demos(path: str | Path, family: str | None = None, need_trajectories: bool = False) -> Demos:
    """Find episodes under ``path`` (``*.jsonl`` trajectories, ``*.mp4`` videos, checkpoints' meta)."""
    from compass.episode.recording import read_trajectory

    root = Path(path)
    if not root.exists():
        raise DemoError(f"demonstrations {root} do not exist")
    files = (
        [root]
        if root.is_file()
        else sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))
    )
    episodes: dict[str, Episode] = {}
    envs: set[str] = set()
    for p in files:
        key = str(p.with_suffix(""))
        if p.suffix == ".jsonl" and p.name != "metrics.jsonl":
            header, steps = read_trajectory_checked(p, read_trajectory)
            ep = episodes.setdefault(key, Episode(p.stem))
            ep.header, ep.steps, ep.trajectory = header, steps, p
            envs.add(header["env"])
        elif p.suffix == ".mp4":
            episodes.setdefault(key, Episode(p.stem)).video = p
    if not episodes:
        raise DemoError(f"no demonstrations in {root} (expected *.jsonl trajectories and/or *.mp4 videos)")
    if len(envs) > 1:
        raise DemoError(f"demonstrations in {root} mix environments: {', '.join(sorted(envs))}")
    env = next(iter(envs)) if envs else None
    metas = [p for p in files if p.name == "meta.json"]
    for meta in metas:  # checkpoints shipped beside the episodes must be of the same env
        try:
            ckpt_env = json.loads(meta.read_text()).get("env")
        except (OSError, json.JSONDecodeError) as e:
            raise DemoError(f"{meta}: unreadable checkpoint meta ({e})") from None
        if env is not None and ckpt_env and ckpt_env != env:
            raise DemoError(f"checkpoint {meta.parent} was trained on {ckpt_env}, the episodes are {env}")
    if family is not None and env is not None and family_for_env(env).name != family:
        raise DemoError(f"demonstrations in {root} are {env}, not the {family} family")
    eps = sorted(episodes.values(), key=lambda e: e.name)
    if need_trajectories:
        missing = [e.video.name for e in eps if e.header is None and e.video is not None]
        if missing:
            raise DemoError(f"video(s) without a trajectory (.jsonl beside it): {', '.join(missing)}")
    for e in eps:
        if e.video is not None:
            _check_video(e.video)
    return Demos(root, eps, env)


def read_trajectory_checked(p: Path, reader) -> tuple[dict, list[dict]]:
    try:
        return reader(p)
    except (ValueError, KeyError) as e:
        raise DemoError(str(e)) from None


def _check_video(path: Path) -> None:
    import imageio.v2 as imageio

    try:
        with imageio.get_reader(path) as r:
            r.get_data(0)
    except Exception as e:  # imageio/ffmpeg raise several types for a broken file
        raise DemoError(f"bad video {path}: cannot decode its first frame ({type(e).__name__})") from None


# --- offline --------------------------------------------------------------------------------------


def open_output_library(out: str | Path, family: GameFamily) -> SkillLibrary:
    """The library at ``out`` (a root holding ``<family>/``), seeded with the family's skills if new."""
    out = Path(out)
    target = out / family.name
    if not target.exists():
        shutil.copytree(
            family.seed_skills_dir, target, ignore=shutil.ignore_patterns("_stats.json", "__pycache__")
        )
    return SkillLibrary(out, family.name)


def recorded_views(demos: Demos, family: GameFamily, limit: int = 200) -> list:
    """Alive units' observations from the trajectories (spread over the episodes) as views."""
    texts = [u["obs"] for e in demos.with_trajectory for s in e.steps for u in s["units"] if u.get("alive")]
    if not texts:
        return []
    idx = np.linspace(0, len(texts) - 1, min(limit, len(texts))).astype(int)
    return [family.view_from_text(texts[i]) for i in sorted(set(idx.tolist()))]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def bootstrap_offline(
    demos_dir: str | Path, library_out: str | Path, family_name: str | None = None
) -> dict[str, Any]:
    """Fit the seed skills' parameters to the demonstrations; returns measures and changes."""
    demos = load_demos(demos_dir, family_name, need_trajectories=True)
    if not demos.with_trajectory:
        raise DemoError(f"no trajectories in {demos.root}: offline bootstrapping measures tactics from them")
    family = family_for_env(demos.env)  # trajectories name their env (demos.env is set)
    try:
        fitter = importlib.import_module(f"{family.package}.demo_fit")
    except ModuleNotFoundError:
        raise DemoError(
            f"the {family.name} family has no offline fitting (no {family.package}.demo_fit)"
        ) from None
    trajectories = [(e.header, e.steps) for e in demos.with_trajectory]
    measures = fitter.measure(trajectories)
    fitted = fitter.fit(measures)
    lib = open_output_library(library_out, family)
    views = recorded_views(demos, family)
    staged: list[Skill] = []
    changes: dict[str, dict[str, Any]] = {}
    for name, values in sorted(fitted.items()):
        if name not in lib:
            continue
        skill = lib.get(name)
        old = get_params(skill)
        values = {k: v for k, v in values.items() if k in old}
        if not values:
            continue
        new = set_params(skill, values)
        new.meta.update(
            {
                "provenance": "bootstrap",
                "parent": skill.meta.get("parent", "-"),
                "created": _now(),
                "model": "offline fit",
                "demos": f"{demos.root} ({len(trajectories)} trajectories, {demos.env})",
                "fitted": "; ".join(f"{k}={_short(old[k])}->{_short(v)}" for k, v in sorted(values.items())),
            }
        )
        problem = check_on_views(new, family, views, str(lib.dir / f"{name}.py"))
        if problem:
            raise DemoError(f"fitted {name} {problem}")
        staged.append(new)
        changes[name] = {k: {"from": old[k], "to": v} for k, v in sorted(values.items())}
    for s in staged:  # all checked: now write
        lib.add(s, overwrite=True)
    return {
        "demos": str(demos.root),
        "env": demos.env,
        "trajectories": len(trajectories),
        "measures": measures,
        "changes": changes,
        "library": str(lib.dir),
    }


def _short(v: Any) -> str:
    return json.dumps(v, sort_keys=True).replace(" ", "")


# --- key frames -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyFrame:
    episode: str
    video: Path
    index: int  # frame index in the video (frame t shows the state after step t)
    events: tuple[str, ...]


def trajectory_events(family: GameFamily, steps: list[dict[str, Any]]) -> dict[int, list[str]] | None:
    """Events per step of a trajectory, by the family's ``demo_fit.trajectory_events`` (combat:
    first contact, focus fire, kills, deaths, retreats); None when the family has none."""
    try:
        fit = importlib.import_module(f"{family.package}.demo_fit")
    except ModuleNotFoundError:
        return None
    events = getattr(fit, "trajectory_events", None)
    return events(steps) if events is not None else None


_PRIORITY = ("first contact", "kill", "death", "focus fire", "movement")


def key_frames_from_trajectory(ep: Episode, max_frames: int, events: dict[int, list[str]]) -> list[KeyFrame]:
    ranked = sorted(events.items(), key=lambda kv: (min(_rank(e) for e in kv[1]), kv[0]))
    chosen: list[int] = []
    for t, _ in ranked:
        if all(abs(t - c) >= 3 for c in chosen):
            chosen.append(t)
        if len(chosen) >= max_frames:
            break
    return [KeyFrame(ep.name, ep.video, t, tuple(events[t])) for t in sorted(chosen)]


def _rank(event: str) -> int:
    return next((i for i, p in enumerate(_PRIORITY) if event.startswith(p)), len(_PRIORITY))


def key_frames_by_difference(video: Path, max_frames: int, name: str) -> list[KeyFrame]:
    """For a video without trajectory: the frames where the picture changes most (plus the first and last)."""
    import imageio.v2 as imageio

    diffs: list[float] = []
    prev = None
    try:
        with imageio.get_reader(video) as r:
            for frame in r:
                small = frame[::4, ::4].astype(np.float32).mean(-1)
                diffs.append(0.0 if prev is None else float(np.abs(small - prev).mean()))
                prev = small
    except Exception as e:
        raise DemoError(f"bad video {video}: {type(e).__name__} while decoding") from None
    n = len(diffs)
    if n == 0:
        raise DemoError(f"bad video {video}: no frames")
    order = sorted(range(1, n), key=lambda i: -diffs[i])
    chosen = [0, n - 1]
    for i in order:
        if len(chosen) >= max_frames:
            break
        if all(abs(i - c) >= max(2, n // (2 * max_frames)) for c in chosen):
            chosen.append(i)
    return [
        KeyFrame(
            name,
            video,
            i,
            ("start",) if i == 0 else ("end",) if i == n - 1 else (f"large change ({diffs[i]:.1f})",),
        )
        for i in sorted(set(chosen))
    ]


def read_frames(video: Path, indices: list[int]) -> dict[int, np.ndarray]:
    """The frames at ``indices`` (streams through the file; keeps only those)."""
    import imageio.v2 as imageio

    want = set(indices)
    out: dict[int, np.ndarray] = {}
    with imageio.get_reader(video) as r:
        for i, frame in enumerate(r):
            if i in want:
                out[i] = frame
            if len(out) == len(want):
                break
    missing = want - set(out)
    if missing:
        raise DemoError(f"{video} has no frame(s) {sorted(missing)} (trajectory and video disagree)")
    return out


def _png(frame: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(frame).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


# --- VLM ------------------------------------------------------------------------------------------


_SLOT = re.compile(r"<<<([A-Za-z0-9_]+)>>>")


def fill(template: str, values: dict[str, str], name: str) -> str:
    missing = sorted(set(_SLOT.findall(template)) - set(values))
    if missing:
        raise DemoError(f"prompt {name} has slot(s) nobody fills: {', '.join(missing)}")
    return _SLOT.sub(lambda m: str(values[m.group(1)]), template)


def load_prompt(family: GameFamily, name: str) -> str:
    path = family.prompts_dir / f"{name}.txt"
    if not path.is_file():
        raise DemoError(f"the {family.name} family has no {name} prompt ({path})")
    return path.read_text(encoding="utf-8")


class _Tactic(BaseModel):
    name: str = Field(description="lower_snake_case Python identifier", max_length=48)
    description: str = Field(description="one or two sentences, implementable per unit", max_length=400)
    frames: list[int] = Field(description="numbers of the key frames that show it", max_length=8)


class TacticsAnswer(BaseModel):
    """The tactic analysis's answer; its schema constrains models that take one (llama.cpp, ...)."""

    tactics: list[_Tactic] = Field(max_length=8)


def parse_tactics(text: str, max_tactics: int) -> list[dict[str, Any]]:
    """Tactics from the analysis answer (the first JSON object in it); bad entries are dropped."""
    m = re.search(r"\{.*\}", text or "", re.S)
    if not m:
        return []
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError:
        return []
    out = []
    for t in data.get("tactics", []) if isinstance(data, dict) else []:
        if not isinstance(t, dict):
            continue
        name = re.sub(r"[^a-z0-9_]", "_", str(t.get("name", "")).strip().lower()).strip("_")
        desc = str(t.get("description", "")).strip()
        if not name or not desc or not name[0].isalpha():
            continue
        frames = [int(f) for f in t.get("frames", []) if isinstance(f, int | float)]
        out.append({"name": name[:48], "description": desc, "frames": frames})
    return out[:max_tactics]


@dataclass
class Candidate:
    tactic: dict[str, Any]
    name: str
    status: str = "pending"  # added | refused
    reason: str = ""
    evaluation: dict[str, Any] = field(default_factory=dict)


async def bootstrap_vlm(
    demos_dir: str | Path,
    vlm: str,
    library_out: str | Path,
    *,
    family_name: str | None = None,
    max_frames: int = 6,
    max_tactics: int = 4,
    eval_episodes: int = 20,
    eval_seed: int = GATE_SEED,  # gate seeds 1000..: neither tuning seeds (0-999) nor ALEM's evaluation seeds
    eval_max_steps: int | None = None,
    alpha: float = 0.05,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Analyse demonstration key frames with ``vlm``, write a skill per tactic, keep those that hold up."""
    from compass.vlm.client import VLMClient
    from compass.vlm.types import VLMRequest

    demos = load_demos(demos_dir, family_name)
    if demos.env is None and family_name is None:
        raise DemoError(f"{demos.root}: videos without trajectories; say which family with --family")
    family = family_for_env(demos.env) if demos.env else get_family(family_name)
    analysis_t = load_prompt(family, "tactic_analysis")
    skill_t = load_prompt(family, "skill_from_tactic")
    tick = progress or (lambda *_: None)
    # key frames: events where there is a trajectory, frame differencing where there is only video
    frames: list[KeyFrame] = []
    per_episode = max(1, max_frames // max(1, sum(1 for e in demos.episodes if e.video)))
    for ep in demos.episodes:
        if ep.video is None:
            continue
        events = trajectory_events(family, ep.steps) if ep.header is not None else None
        if events is not None:
            frames += key_frames_from_trajectory(ep, per_episode, events)
        else:
            frames += key_frames_by_difference(ep.video, per_episode, ep.name)
    if not frames:
        raise DemoError(f"no videos in {demos.root}: the VLM needs frames to look at")
    frames = frames[:max_frames]
    images: list[bytes] = []
    for video in dict.fromkeys(f.video for f in frames):
        idx = [f.index for f in frames if f.video == video]
        got = read_frames(video, idx)
        images += [_png(got[i]) for i in idx]
    tick("key frames", len(frames), len(frames))
    summary = "\n".join(
        f"- {e.name}: {e.header['outcome']} in {e.header['steps']} steps, played by {e.header.get('policy', '?')}"
        if e.header
        else f"- {e.name}: video only"
        for e in demos.episodes
    )
    frame_list = "\n".join(
        f"{k + 1}. {f.episode}, frame {f.index}: {'; '.join(f.events)}" for k, f in enumerate(frames)
    )
    lib = open_output_library(library_out, family)
    client = VLMClient.from_spec(vlm)
    scenario = demos.env or family.name
    reply = await client.complete(
        VLMRequest(
            fill(
                analysis_t,
                {
                    "scenario_name": scenario,
                    "frame_legend": family.frame_legend,
                    "demo_summary": summary,
                    "frame_list": frame_list,
                    "max_tactics": str(max_tactics),
                },
                "tactic_analysis",
            ),
            # A text-only model reads the frame list (each frame's events) without the pictures.
            images=tuple(images) if client.backend.accepts_images else (),
            schema=TacticsAnswer.model_json_schema() if client.backend.structured else None,
            schema_name="tactics",
            tag="bootstrap_analysis",
        )
    )
    tactics = parse_tactics(reply.text, max_tactics)
    if not tactics:
        raise DemoError(f"the tactic analysis named no usable tactic (answer began: {reply.text[:120]!r})")
    tick("tactics", len(tactics), len(tactics))
    views = recorded_views(demos, family)
    best = lib.retrieve(family.default_task, k=1)[0].skill.name
    example = lib.get(best)
    api_names = (
        ", ".join(getattr(family.api_module(), "EXPORTS", ())) or "parse_obs, attack, move, default_action"
    )
    example_obs = views[0].text if views else "(no recorded observation)"
    candidates: list[Candidate] = []
    staged: list[tuple[Candidate, Skill]] = []
    for k, tactic in enumerate(tactics):
        name = tactic["name"] if tactic["name"] not in lib else f"{tactic['name']}_demo"
        cand = Candidate(tactic, name)
        candidates.append(cand)
        prompt = fill(
            skill_t,
            {
                "scenario_name": scenario,
                "tactic_name": tactic["name"],
                "tactic_description": tactic["description"],
                "skill_name": name,
                "api_names": api_names,
                "example_observation": example_obs,
                "example_skill": example.code.strip(),
            },
            "skill_from_tactic",
        )
        ans = await client.complete(VLMRequest(prompt, tag="bootstrap_skill"))
        from compass.planner.parsing import code_block

        code = code_block(ans.text)
        try:
            skill = parse_skill_source(code, family.name, name=name)
        except (SyntaxError, ValueError) as e:
            cand.status, cand.reason = "refused", f"not a skill: {e}"
            tick("candidates", k + 1, len(tactics))
            continue
        problem = check_on_views(skill, family, views)
        if problem:
            cand.status, cand.reason = "refused", problem
            tick("candidates", k + 1, len(tactics))
            continue
        staged.append((cand, skill))
        tick("candidates", k + 1, len(tactics))
    # evaluation against the current best, on the same seeds
    env_spec = demos.env
    if env_spec is None:
        raise DemoError("cannot evaluate candidates without knowing the env (no trajectory header)")
    seeds = list(range(eval_seed, eval_seed + eval_episodes))
    base = await evaluate_skill(lib, example, env_spec, seeds, eval_max_steps)
    for n, (cand, skill) in enumerate(staged):
        res = await evaluate_skill(lib, skill, env_spec, seeds, eval_max_steps)
        cand.evaluation = {
            "candidate": res,
            "best": {"skill": best, **base},
            "seeds": f"{seeds[0]}-{seeds[-1]}",
        }
        # A new tactic joins the library unless it plays worse than the current best on the same
        # seeds (one-sided paired test at ``alpha``); it is offered by retrieval for its sub-task,
        # it does not replace the best for the task.
        test = judge(res, base, alpha)
        cand.evaluation["test"] = test
        if test["verdict"] == "worse":
            cand.status = "refused"
            cand.reason = (
                f"did not hold up: worse than {best} (win {res['wins']}/{res['episodes']} vs "
                f"{base['wins']}/{base['episodes']}; {describe_test(test)})"
            )
        else:
            cand.status = "added"
        tick("evaluation", n + 1, len(staged))
    added = []
    for cand, skill in staged:
        if cand.status != "added":
            continue
        shown = [frames[i - 1] for i in cand.tactic["frames"] if 1 <= i <= len(frames)]
        ev = cand.evaluation
        skill.meta = {
            "provenance": "bootstrap",
            "parent": "-",
            "created": _now(),
            "model": vlm,
            "subtask": cand.tactic["description"].splitlines()[0][:200],
            "demos": f"{demos.root} ({demos.env})",
            "frames": ", ".join(f"{f.video.name}#{f.index}" for f in shown) or "-",
            "tactic": f"{cand.tactic['name']}: {cand.tactic['description']}".replace("\n", " ")[:400],
            "eval": (
                f"win {ev['candidate']['wins']}/{ev['candidate']['episodes']} return {ev['candidate']['mean_return']:.2f} "
                f"vs {best} win {ev['best']['wins']}/{ev['best']['episodes']} return {ev['best']['mean_return']:.2f}; "
                f"{describe_test(ev['test'])}; seeds {ev['seeds']} on {env_spec}"
            ),
        }
        stored = lib.add(skill)
        added.append(stored.name)
    return {
        "demos": str(demos.root),
        "env": demos.env,
        "vlm": vlm,
        "key_frames": [{"episode": f.episode, "frame": f.index, "events": list(f.events)} for f in frames],
        "tactics": tactics,
        "candidates": [
            {"name": c.name, "status": c.status, "reason": c.reason, "evaluation": c.evaluation}
            for c in candidates
        ],
        "added": added,
        "library": str(lib.dir),
    }


def run_bootstrap_vlm(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(bootstrap_vlm(*args, **kwargs))
