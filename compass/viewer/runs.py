"""Reading what ``compass run`` wrote: ``runs/<id>/summary.json``, ``trace.jsonl``, ``timings.jsonl``,
and what ``compass eval`` wrote: ``runs/<name>/episodes.csv`` with its report and kept traces
(a run directory's format: :mod:`compass.core.runformat`).

The viewer reads only these files (never the live objects of a run). A trace is indexed once by
byte offset (one pass, records kept as offsets, not parsed objects), so a page asks for a window
of steps and reads just those lines: a 10,000-step episode is never loaded into a page.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compass.core.runformat import RunFiles, RunFormatError, read_summary

#: Where optional prompt logs may live inside a run directory (``--log-prompts``).
PROMPT_DIRS = ("prompts", "prompt_logs")
#: Record keys that may link a logged prompt file (relative to the run directory).
PROMPT_KEYS = ("prompt_log", "prompt_file", "prompt_path")


class RunNotFound(LookupError):
    """An unknown run id or episode."""


@dataclass
class EpisodeIndex:
    """Byte offsets of one episode's trace lines."""

    steps: list[int] = field(default_factory=list)  # offset of the step record for t (index = t)
    decisions: dict[int, list[int]] = field(default_factory=dict)  # t -> offsets of decision records
    vlm: dict[int, list[int]] = field(default_factory=dict)  # t -> offsets of vlm records
    human: dict[int, int] = field(default_factory=dict)  # t -> offset of the person's action (compass play)
    events: list[dict[str, Any]] = field(default_factory=list)
    end: int | None = None  # offset of episode_end
    agents: int = 0


@dataclass
class TraceIndex:
    path: Path
    size: int
    mtime: float
    run_start: int | None
    episodes: dict[int, EpisodeIndex]


#: Separates the parts of a nested run id: ``ablation~traces~comm=none~smax_protoss_5_vs_5~seed-0``
#: is the episode trace an eval kept under ``ablation/traces/...`` (a ``/`` would break the routes).
NEST = "~"


def _safe_id(run_id: str) -> list[str]:
    """The path parts of a run id; anything that could leave the runs directory is unknown."""
    parts = run_id.split(NEST) if run_id else []
    if not parts or any(not p or "/" in p or "\\" in p or p.startswith(".") for p in parts):
        raise RunNotFound(f"no run {run_id!r}")
    return parts


class RunStore:
    """The runs under one directory, with cached trace indexes."""

    def __init__(self, runs_dir: str | os.PathLike) -> None:
        self.dir = Path(runs_dir)
        self._indexes: dict[str, TraceIndex] = {}
        self._lock = threading.Lock()

    # --- runs -------------------------------------------------------------------------------

    def run_dir(self, run_id: str) -> Path:
        d = self.dir.joinpath(*_safe_id(run_id))
        if not (RunFiles(d).is_run() or (d.is_dir() and _is_eval_dir(d))):
            raise RunNotFound(f"no run {run_id!r} in {self.dir}")
        return d

    def is_eval(self, run_id: str) -> bool:
        return _is_eval_dir(self.run_dir(run_id))

    def list_runs(self) -> list[dict[str, Any]]:
        """One row per run: id, env, planner, seed, episodes, wins, tokens, cost, errors, status."""
        if not self.dir.is_dir():
            return []
        rows = []
        for d in sorted(self.dir.iterdir(), key=lambda p: p.name, reverse=True):
            if not d.is_dir():
                continue
            try:
                rows.append(self.run_row(d.name))
            except RunNotFound:
                continue
        return rows

    def summary(self, run_id: str) -> dict[str, Any] | None:
        """A ``compass run`` summary (None: none yet, unreadable, or an eval's, shaped differently)."""
        try:
            s = read_summary(self.run_dir(run_id))
        except (OSError, RunFormatError):
            return None
        return s.raw if s is not None else None

    def run_row(self, run_id: str) -> dict[str, Any]:
        d = self.run_dir(run_id)
        if _is_eval_dir(d):
            return self.eval_row(run_id)
        try:
            typed = read_summary(d)
        except (OSError, RunFormatError) as e:  # listed, with why it cannot be shown
            return {
                "id": run_id,
                "kind": "run",
                "status": f"unreadable: {e}",
                "episodes": [],
                "n_episodes": 0,
            }
        status = "finished" if typed is not None and RunFiles(d).trace.exists() else "incomplete"
        if typed is None:
            # No summary (an eval's kept trace, or a run still going): episodes from the trace.
            cfg = self._run_start(run_id) or {}
            c = cfg.get("config", {})
            eps = self._trace_episodes(run_id)
            return {
                "id": run_id,
                "kind": "run",
                "status": "finished" if RunFiles(d).trace.exists() else "incomplete",
                "env": c.get("env"),
                "planner": c.get("planner"),
                "vlm": c.get("vlm"),
                "seed": c.get("seed"),
                "episodes": eps,
                "n_episodes": len(eps),
                "wins": sum(1 for e in eps if e["outcome"] == "win"),
                "tokens": sum(e["tokens"] for e in eps),
                "cost_usd": round(sum(e["cost_usd"] for e in eps), 6),
                "skill_errors": sum(e["skill_errors"] for e in eps),
            }
        eps = [self._episode_row(e) for e in typed.episodes]
        usage = typed.vlm_usage or {}
        total = usage.get("total", usage)
        return {
            "id": run_id,
            "kind": "run",
            "status": status,
            "env": typed.env,
            "planner": typed.planner,
            "vlm": typed.vlm,
            "seed": typed.seed,
            "comm": typed.comm,
            "n_episodes": len(eps),
            "wins": sum(1 for e in eps if e["outcome"] == "win"),
            "headline": typed.headline,
            "tokens": sum(e["tokens"] for e in eps) or _tokens(total),
            "cost_usd": round(sum(e["cost_usd"] for e in eps), 6),
            "skill_errors": sum(e["skill_errors"] for e in eps),
            "episodes": eps,
            "video": typed.video,
        }

    def _trace_episodes(self, run_id: str) -> list[dict[str, Any]]:
        """Rows of the episodes a trace finished (its ``episode_end`` records)."""
        try:
            idx = self.index(run_id)
        except RunNotFound:
            return []
        seed = self.config(run_id).get("seed")
        rows = []
        for n, ep in sorted(idx.episodes.items()):
            if ep.end is None:
                continue
            end = self.read_at(run_id, [ep.end])[0]
            rows.append(self._episode_row({"seed": seed, **end, "episode": n}))
        return rows

    def eval_row(self, run_id: str) -> dict[str, Any]:
        """A ``compass eval`` directory as a row: its episodes (one per config, env and seed, each
        linked to its kept trace where the spec had ``traces: true``), report and status."""
        from compass.eval.episode import slug
        from compass.eval.store import read_meta, read_rows

        d = self.run_dir(run_id)
        try:
            rows = read_rows(d / "episodes.csv")
        except (ValueError, KeyError, OSError):
            rows = []
        eps = []
        for k, r in enumerate(rows):
            trace = (
                f"{run_id}{NEST}traces{NEST}{slug(r['config'])}{NEST}{slug(r['env'])}{NEST}seed-{r['seed']}"
            )
            kept = (d / "traces" / slug(r["config"]) / slug(r["env"]) / f"seed-{r['seed']}").is_dir()
            eps.append(
                {
                    "episode": k,
                    "config": r["config"],
                    "env": r["env"],
                    "seed": r["seed"],
                    "outcome": r["outcome"],
                    "return": r["return"],
                    "steps": r["steps"],
                    "skill_errors": r["skill_errors"],
                    "decisions": r["decisions"],
                    "tokens": r["prompt_tokens"] + r["completion_tokens"],
                    "cost_usd": r["cost_usd"],
                    "calls": r["vlm_calls"],
                    "headline": None,
                    "trace": trace if kept else None,
                }
            )
        meta = read_meta(d)
        configs = meta.get("config_order") or list(dict.fromkeys(e["config"] for e in eps))
        envs = list(dict.fromkeys(e["env"] for e in eps))
        return {
            "id": run_id,
            "kind": "eval",
            "status": "finished" if (d / "report.md").exists() else "partial",
            "env": ", ".join(envs),
            "planner": f"eval: {len(configs)} configuration(s)",
            "vlm": None,
            "seed": None,
            "configs": configs,
            "n_episodes": len(eps),
            "wins": sum(1 for e in eps if e["outcome"] == "win"),
            "tokens": sum(e["tokens"] for e in eps),
            "cost_usd": round(sum(e["cost_usd"] for e in eps), 6),
            "skill_errors": sum(e["skill_errors"] for e in eps),
            "episodes": eps,
            "report": (d / "report.md").read_text(encoding="utf-8") if (d / "report.md").exists() else None,
            "plot": "report.png" if (d / "report.png").exists() else None,
        }

    @staticmethod
    def _episode_row(e: dict[str, Any]) -> dict[str, Any]:
        v = e.get("vlm") or {}
        return {
            "episode": e.get("episode"),
            "seed": e.get("seed"),
            "outcome": e.get("outcome"),
            "return": e.get("return"),
            "steps": e.get("steps"),
            "skill_errors": e.get("skill_errors", 0),
            "decisions": e.get("decisions", 0),
            "tokens": _tokens(v),
            "cost_usd": float(v.get("cost_usd", 0) or 0),
            "calls": v.get("calls", 0),
            "headline": e.get("headline"),
        }

    # --- trace index ------------------------------------------------------------------------

    def trace_path(self, run_id: str) -> Path:
        path = RunFiles(self.run_dir(run_id)).trace_file()
        if path is not None:
            return path
        raise RunNotFound(f"run {run_id!r} has no trace")

    def index(self, run_id: str) -> TraceIndex:
        path = self.trace_path(run_id)
        st = path.stat()
        with self._lock:
            idx = self._indexes.get(run_id)
            if idx is not None and idx.path == path and idx.size == st.st_size and idx.mtime == st.st_mtime:
                return idx
            idx = _build_index(path, st.st_size, st.st_mtime)
            self._indexes[run_id] = idx
            return idx

    def read_at(self, run_id: str, offsets: list[int]) -> list[dict[str, Any]]:
        path = self.trace_path(run_id)
        out = []
        with open(path, "rb") as f:
            for off in offsets:
                f.seek(off)
                out.append(json.loads(f.readline()))
        return out

    def _run_start(self, run_id: str) -> dict[str, Any] | None:
        try:
            idx = self.index(run_id)
        except RunNotFound:
            return None
        if idx.run_start is None:
            return None
        return self.read_at(run_id, [idx.run_start])[0]

    def config(self, run_id: str) -> dict[str, Any]:
        rs = self._run_start(run_id)
        return (rs or {}).get("config", {})

    def episode(self, run_id: str, episode: int) -> EpisodeIndex:
        idx = self.index(run_id)
        if episode not in idx.episodes:
            raise RunNotFound(f"run {run_id!r} has no episode {episode}")
        return idx.episodes[episode]

    def steps(self, run_id: str, episode: int, start: int, count: int) -> list[dict[str, Any]]:
        """Steps ``start .. start+count-1`` of an episode, each with its decisions and VLM calls
        (and ``human``: the person's action, in runs of ``compass play``)."""
        ep = self.episode(run_id, episode)
        start = max(0, start)
        end = min(len(ep.steps), start + max(0, count))
        out = []
        for t in range(start, end):
            step = self.read_at(run_id, [ep.steps[t]])[0]
            decisions = self.read_at(run_id, ep.decisions.get(t, []))
            for d in decisions:
                d["prompts"] = self._prompt_links(run_id, d)
            row = {"t": t, "step": step, "decisions": decisions}
            if t in ep.human:  # a person's action at this step (compass play)
                row["human"] = self.read_at(run_id, [ep.human[t]])[0]
            out.append(row)
        return out

    def _prompt_links(self, run_id: str, decision: dict[str, Any]) -> list[dict[str, Any]]:
        """Logged prompt files of a decision's VLM calls: the record's ``files`` (``--log-prompts``:
        ``{"prompt": ..., "images": [...], "response": ...}``), a ``prompt_log``-like key, or a file
        named after the call's prompt key under ``prompts/``. Paths stay inside the run directory."""
        d = self.run_dir(run_id)
        links = []
        for rec in decision.get("records", []):
            if rec.get("kind") not in ("vlm", "vlm_error"):
                continue
            files = rec.get("files") if isinstance(rec.get("files"), dict) else {}
            found = files.get("prompt") if isinstance(files.get("prompt"), str) else None
            for k in PROMPT_KEYS:
                if found is None and isinstance(rec.get(k), str):
                    found = rec[k]
            key = rec.get("key_prompt")
            if (found is None or not self._inside(d, found)) and key:
                found = None
                for sub in PROMPT_DIRS:
                    hits = sorted((d / sub).glob(f"{key}*")) if (d / sub).is_dir() else []
                    if hits:
                        found = str(hits[0].relative_to(d))
                        break
            if found is None or not self._inside(d, found):
                continue
            images = [p for p in files.get("images") or [] if isinstance(p, str) and self._inside(d, p)]
            response = files.get("response")
            links.append(
                {
                    "module": rec.get("module"),
                    "key_prompt": key,
                    "path": found,
                    "images": images,
                    "response": response if isinstance(response, str) and self._inside(d, response) else None,
                }
            )
        return links

    @staticmethod
    def _inside(run_dir: Path, rel: str) -> bool:
        try:
            p = (run_dir / rel).resolve()
            return p.is_file() and p.is_relative_to(run_dir.resolve())
        except (OSError, ValueError):
            return False

    def run_file(self, run_id: str, rel: str) -> Path:
        """A file inside the run directory (never outside it)."""
        d = self.run_dir(run_id)
        if not self._inside(d, rel):
            raise RunNotFound(f"no file {rel!r} in run {run_id!r}")
        return (d / rel).resolve()


def _is_eval_dir(d: Path) -> bool:
    return (d / "eval.json").is_file() and (d / "episodes.csv").is_file()


def _tokens(v: dict[str, Any]) -> int:
    return int(v.get("prompt_tokens", 0) or 0) + int(v.get("completion_tokens", 0) or 0)


def _build_index(path: Path, size: int, mtime: float) -> TraceIndex:
    """One pass over the trace: offsets per episode and step, plus the events worth jumping to."""
    episodes: dict[int, EpisodeIndex] = {}
    run_start = None
    alive: dict[int, list[bool]] = {}
    with open(path, "rb") as f:
        off = 0
        for line in f:
            here, off = off, off + len(line)
            if not line.strip():
                continue
            # Step lines are most of the file: a cheap look at the kind before parsing all of it.
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line of an interrupted run
            kind = rec.get("kind")
            if kind == "run_start":
                run_start = here
                continue
            ep_no = rec.get("episode")
            if not isinstance(ep_no, int):
                continue
            ep = episodes.setdefault(ep_no, EpisodeIndex())
            t = rec.get("t", 0)
            if kind == "step":
                while len(ep.steps) < t:  # a gap would break t -> offset; keep it aligned
                    ep.steps.append(here)
                ep.steps.append(here)
                skills = rec.get("skills") or []
                ep.agents = max(ep.agents, len(skills))
                prev = alive.get(ep_no)
                now = [s is not None for s in skills]
                if prev is not None:
                    for i, (a, b) in enumerate(zip(prev, now, strict=False)):
                        if a and not b:
                            ep.events.append({"t": t, "kind": "death", "agent": i, "text": f"agent {i} died"})
                alive[ep_no] = now
                for e in rec.get("events", []):  # what the family reported (kills...), game-agnostic
                    if isinstance(e, dict) and e.get("kind"):
                        ep.events.append(
                            {
                                "t": t,
                                "kind": str(e["kind"]),
                                "agent": e.get("agent"),
                                "text": str(e.get("text", ""))[:200],
                            }
                        )
                for e in rec.get("errors", []):
                    ep.events.append(
                        {
                            "t": t,
                            "kind": "error",
                            "agent": e.get("agent"),
                            "text": f"{e.get('skill')}: {e.get('kind')}: {str(e.get('message'))[:160]}",
                        }
                    )
            elif kind == "decision":
                ep.decisions.setdefault(t, []).append(here)
                for r in rec.get("records", []):
                    if r.get("kind") == "added":
                        what = "repair" if r.get("module") == "skill_repair" else "synthesis"
                        ep.events.append(
                            {
                                "t": t,
                                "kind": what,
                                "agent": rec.get("agent"),
                                "text": f"{what}: {r.get('skill')}",
                            }
                        )
                if rec.get("trigger") == "new_enemy":
                    ep.events.append(
                        {"t": t, "kind": "sighting", "agent": rec.get("agent"), "text": "new enemy seen"}
                    )
            elif kind == "vlm":
                ep.vlm.setdefault(t, []).append(here)
            elif kind == "human":
                ep.human[t] = here
            elif kind == "episode_end":
                ep.end = here
    return TraceIndex(path, size, mtime, run_start, episodes)
