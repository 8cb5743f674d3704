"""The skill library at scale, and the viewer on a long run.

Run: ``PYTHONPATH=. python benchmarks/bench_library_scale.py [--skills 10000] [--steps 10000]``
(``--parts retrieval,viewer,alem`` picks parts; ``alem`` needs ``--alem-run RUN_DIR``, a long
``compass run --env alem:...`` run). Writes ``benchmarks/results/library_scale.json``
(through ``_results.write_results``).

Retrieval (N generated combat skills, distinct descriptions, in a versioned library root):

* top-5 for a query seen before and for a new query, *including the query embedding*, median of
  many queries: the new path (direct transformer forward, numpy matrix) side by side with the old
  one (sentence-transformers ``encode`` + a faiss ``IndexFlatIP``);
* adding one skill and retrieving: incremental (embed the new skill, append a row) vs the old full
  rebuild (re-embed every description through the cache, rebuild the faiss index), side by side;
  ``add`` itself (sandbox compile, atomic write, git commit under the library lock) timed apart.

Viewer (a ``--steps``-step trace with ALEM's shape: 3 agents, a decision round every 8 steps,
ALEM-sized decision records; built from the record kinds ``compass run`` writes, env name
``synthetic:bench`` so no frames are rendered for it): time to index the trace, API window
latency, and in chromium (Playwright) time to first paint of the replay page and per-step
navigation (ArrowRight until the step's info and timeline are drawn). Frame rendering is timed
on a real SMAX run (first frame, which includes building the env, and the next steps).

ALEM viewer (a real long ALEM run): the first frames (building the env and compiling ALEM's
renderer), the time the replay thread takes to lay checkpoints over the whole episode, then
frames of random steps (a restore plus at most ``CHECKPOINT_EVERY`` replayed steps), of the next
step and of an agent's ego view, and in chromium first paint and per-step navigation until the
step, its timeline *and all four frames* are drawn.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

VERBS = [
    "focus fire on",
    "kite",
    "retreat from",
    "flank",
    "guard allies against",
    "heal allies near",
    "scout for",
    "hold position against",
    "pull back from",
    "bait",
]
TARGETS = [
    "zealots",
    "stalkers",
    "marines",
    "marauders",
    "zerglings",
    "hydralisks",
    "the weakest enemy",
    "the nearest enemy",
    "ranged units",
    "melee units",
]
WHEN = [
    "when shields are down",
    "while the weapon cools down",
    "when two allies are in range",
    "at the start of the fight",
    "when outnumbered",
    "near the map edge",
    "when an ally dies",
    "after a new enemy appears",
    "when health is below half",
    "when the enemy groups up",
]
HOW = [
    "in a tight group",
    "spreading out",
    "along an A* path",
    "using the north side",
    "using the south side",
    "staying at max range",
    "moving in a zigzag",
    "holding a chokepoint",
    "rotating damaged units out",
    "shooting the same target",
]


def descriptions(n: int) -> list[str]:
    out = []
    for i in range(n):
        a, b, c, d = i % 10, (i // 10) % 10, (i // 100) % 10, (i // 1000) % 10
        out.append(f"{VERBS[a].capitalize()} {TARGETS[b]} {WHEN[c]}, {HOW[d]} (variant {i // 10000}).")
    return out


def skill_text(name: str, doc: str) -> str:
    return f'# provenance: generated\ndef {name}(obs: str) -> int:\n    """{doc}"""\n    return 1\n'


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def cpu_timed(fn, *args):
    """Wall and CPU seconds of this process: on a shared machine the CPU time is what the call
    would take on a core of its own (one thread: the query path runs on one)."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return time.perf_counter() - w0, time.process_time() - c0, out


# --- retrieval --------------------------------------------------------------------------------------


def bench_retrieval(n: int, cache_dir: Path, queries: int = 60) -> dict:
    import faiss

    from compass.skills.embedding import Embedder, _model
    from compass.skills.library import SkillLibrary
    from compass.skills.skill import Skill

    tmp = Path(tempfile.mkdtemp(prefix="compass-scale-"))
    try:
        fam = tmp / "lib" / "combat"
        fam.mkdir(parents=True)
        docs = descriptions(n)
        for i, doc in enumerate(docs):
            (fam / f"s{i:05d}.py").write_text(skill_text(f"s{i:05d}", doc))
        emb = Embedder(cache_dir)
        load_s, lib = timed(SkillLibrary, tmp / "lib", "combat", emb)
        index_s, _ = timed(lib.retrieve, "warm up the index", 5)  # embeds every skill once (cached on disk)
        print(f"loaded {len(lib)} skills in {load_s:.1f} s; first index {index_s:.1f} s", flush=True)

        rng = np.random.default_rng(0)
        fresh = [
            f"{VERBS[rng.integers(10)]} {TARGETS[rng.integers(10)]} {HOW[rng.integers(10)]} q{k}"
            for k in range(queries)
        ]
        names = lib.names()
        vecs = emb.embed([lib._embed_text(lib.skills[x]) for x in names])
        old_index = faiss.IndexFlatIP(vecs.shape[1])
        old_index.add(vecs)
        model = _model()

        def old_query(q: str):
            v = model.encode([q], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            return old_index.search(v.astype(np.float32), 5)

        new_t, old_t, cached_t, new_cpu, cached_cpu = [], [], [], [], []
        for q in fresh:  # alternate old and new on the same queries
            dt, ct, hits = cpu_timed(lib.retrieve, q, 5)
            new_t.append(dt)
            new_cpu.append(ct)
            old_t.append(timed(old_query, q)[0])
            dt, ct, _ = cpu_timed(lib.retrieve, q, 5)
            cached_t.append(dt)
            cached_cpu.append(ct)
            assert len(hits) == 5
        # New queries back to back, as a planner's decision round issues them (above, each new
        # query follows an old-path query, whose torch forward on every core evicts the caches).
        alone_t, alone_cpu = [], []
        for q in fresh:
            dt, ct, _ = cpu_timed(lib.retrieve, q + " (alone)", 5)
            alone_t.append(dt)
            alone_cpu.append(ct)

        # Where a new query's time goes, each alternative side by side on the same queries:
        # the query embedding (ONNX Runtime, one thread, vs torch's eager forward, one thread) and
        # the 10,000 scores (einsum's loop vs numpy's BLAS matrix-vector product).
        import torch

        from compass.skills import embedding as E

        session = E._onnx_session()
        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)
        emb_onnx, emb_torch, emb_onnx_cpu, emb_torch_cpu = [], [], [], []
        for q in fresh:
            w, c, _ = cpu_timed(E._encode_onnx, session, [q + " x"])
            emb_onnx.append(w)
            emb_onnx_cpu.append(c)
            w, c, _ = cpu_timed(E._encode_torch, [q + " y"])
            emb_torch.append(w)
            emb_torch_cpu.append(c)
        torch.set_num_threads(torch_threads)
        mat = lib._matrix[: len(lib._index_names)]
        qv = emb.embed([fresh[0]], persist=False)[0]
        sc_einsum, sc_blas = [], []
        for _ in range(queries):
            sc_einsum.append(timed(np.einsum, "ij,j->i", mat, qv)[0])
            sc_blas.append(timed(np.matmul, mat, qv)[0])
        tokens = [len(E._model().tokenizer(q)["input_ids"]) for q in fresh]

        # The new path ranks like the old one (same model, same vectors).
        agree = 0
        for q in fresh[:20]:
            new_names = [h.skill.name for h in lib.retrieve(q, 5)]
            _, idx = old_query(q)
            agree += new_names[0] == names[int(idx[0][0])]

        def old_add_retrieve(q: str, name: str) -> None:
            # What retrieve did before: embed the new skill, look every other one up in the
            # cache, rebuild the whole index, embed the query through sentence-transformers.
            v_new = model.encode(
                [lib._embed_text(lib.skills[name])],
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            v = emb.embed([lib._embed_text(lib.skills[x]) for x in lib.names() if x != name])
            ix = faiss.IndexFlatIP(v.shape[1])
            ix.add(np.concatenate([v, v_new.astype(np.float32)]))
            qv = model.encode([q], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            ix.search(qv.astype(np.float32), 5)

        # Where an add's time goes: each git call of the versioned write, by subcommand.
        from compass.skills import versions as V

        git_ms: dict[str, list[float]] = {}
        real_git = V.VersionStore.git

        def timed_git(self, *a, **kw):
            t0 = time.perf_counter()
            try:
                return real_git(self, *a, **kw)
            finally:
                git_ms.setdefault(a[0], []).append(time.perf_counter() - t0)

        V.VersionStore.git = timed_git
        add_s, inc_s, full_s = [], [], []
        for k in range(16):
            name = f"added_{k:03d}"
            doc = f"Added skill {k}: {VERBS[k % 10]} {TARGETS[(k * 3) % 10]} {WHEN[(k * 7) % 10]}."
            sk = Skill(
                name,
                "combat",
                skill_text(name, doc).split("\n", 1)[1],
                doc,
                {"provenance": "generated", "model": "bench"},
            )
            add_s.append(timed(lib.add, sk)[0])
            # Alternate which path runs first; each embeds the new skill itself (the old path
            # through its own model call, so the new path's cached vector does not help it).
            if k % 2:
                full_s.append(timed(old_add_retrieve, f"old query after add {k}", name)[0])
                inc_s.append(timed(lib.retrieve, f"query after add {k}", 5)[0])
            else:
                inc_s.append(timed(lib.retrieve, f"query after add {k}", 5)[0])
                full_s.append(timed(old_add_retrieve, f"old query after add {k}", name)[0])
        V.VersionStore.git = real_git
        ms = lambda xs: round(1000 * statistics.median(xs), 2)  # noqa: E731
        return {
            "skills": len(lib),
            "load_s": round(load_s, 2),
            "first_index_s": round(index_s, 2),
            "top5_new_query_ms": {
                "new": ms(new_t),
                "old": ms(old_t),
                "ratio_old_over_new": round(ms(old_t) / ms(new_t), 2),
            },
            "top5_new_query_back_to_back_ms": {"wall": ms(alone_t), "cpu": ms(alone_cpu)},
            "top5_repeated_query_ms": ms(cached_t),
            "query_embedding_ms": {
                "onnx_1_thread": ms(emb_onnx),
                "torch_1_thread": ms(emb_torch),
                "ratio_torch_over_onnx": round(ms(emb_torch) / ms(emb_onnx), 2),
                "onnx_cpu": ms(emb_onnx_cpu),
                "torch_cpu": ms(emb_torch_cpu),
                "onnx_min": round(1000 * min(emb_onnx), 2),
                "query_tokens_median": int(statistics.median(tokens)),
            },
            "scores_10k_ms": {
                "einsum": ms(sc_einsum),
                "blas_matmul": ms(sc_blas),
                "ratio_blas_over_einsum": round(ms(sc_blas) / ms(sc_einsum), 1),
            },
            "cpu_ms_of_this_process": {"top5_new_query": ms(new_cpu), "top5_repeated_query": ms(cached_cpu)},
            "load_average_1min": round(os.getloadavg()[0], 1),
            "top1_agreement_with_old_path": f"{agree}/20",
            "add_one_skill_ms": {
                "add_versioned_write": ms(add_s),
                "retrieve_after_add_incremental": ms(inc_s),
                "retrieve_after_add_full_rebuild_old": ms(full_s),
                "ratio_old_over_new": round(ms(full_s) / ms(inc_s), 2),
                # The first add also creates the repository (git init + the initial commit).
                "git_calls_median_ms": {k: ms(v[1:] or v) for k, v in sorted(git_ms.items())},
            },
            "queries": queries,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- viewer ---------------------------------------------------------------------------------------


def write_long_trace(run_dir: Path, steps: int, agents: int = 3, interval: int = 8) -> None:
    """A trace with ALEM's shape (record kinds and fields of compass run; synthetic content)."""
    from compass.episode.trace import dumps

    run_dir.mkdir(parents=True)
    rng = np.random.default_rng(0)
    obs = (
        "You see: tree at (2, -1), stone at (-3, 4), zombie at (5, 0). Health 7/9, food 6/9, drink 5/9. " * 3
    )
    with open(run_dir / "trace.jsonl", "w") as f:
        f.write(
            dumps(
                {
                    "kind": "run_start",
                    "config": {"env": "synthetic:bench", "seed": 0, "comm": "multihop"},
                    "library": [],
                    "library_problems": [],
                }
            )
            + "\n"
        )
        for t in range(steps):
            if t % interval == 0:
                for a in range(agents):
                    recs = [
                        {
                            "module": "perception",
                            "kind": "vlm",
                            "tag": "perception",
                            "key_prompt": f"{t:06d}{a}",
                            "response": obs,
                            "parsed": {"situation": obs[:200]},
                            "prompt_tokens": 2100,
                            "completion_tokens": 180,
                        },
                        {
                            "module": "retrieval",
                            "kind": "retrieval",
                            "query": "gather wood and craft a pickaxe",
                            "hits": [
                                ["gather_wood", 0.71],
                                ["craft_tool_ladder", 0.64],
                                ["set_up_base", 0.55],
                            ],
                        },
                    ]
                    f.write(
                        dumps(
                            {
                                "kind": "decision",
                                "episode": 0,
                                "t": t,
                                "agent": a,
                                "trigger": "interval",
                                "skill": "gather_wood",
                                "code_hash": "0" * 16,
                                "subtask": "gather wood",
                                "records": recs,
                            }
                        )
                        + "\n"
                    )
            f.write(
                dumps(
                    {
                        "kind": "step",
                        "episode": 0,
                        "t": t,
                        "actions": rng.integers(0, 56, agents).tolist(),
                        "skills": ["gather_wood"] * agents,
                        "reward": 0.0,
                    }
                )
                + "\n"
            )
        f.write(
            dumps(
                {
                    "kind": "episode_end",
                    "episode": 0,
                    "seed": 0,
                    "outcome": "timeout",
                    "return": 0.0,
                    "steps": steps,
                    "skill_errors": 0,
                    "decisions": steps // interval * agents,
                    "skills_used": {},
                }
            )
            + "\n"
        )
    summary = {
        "run_id": run_dir.name,
        "env": "synthetic:bench",
        "planner": "vlm",
        "seed": 0,
        "episodes": [
            {
                "episode": 0,
                "seed": 0,
                "outcome": "timeout",
                "return": 0.0,
                "steps": steps,
                "skill_errors": 0,
                "decisions": 0,
                "skills_used": {},
            }
        ],
    }
    (run_dir / "summary.json").write_text(json.dumps(summary))


def serve(app) -> tuple[str, object, threading.Thread]:
    import socket

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", log_config=None)
    )
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, th


def play_smax_run(tmp: Path) -> None:
    """``compass run --planner library`` for 40 steps of protoss 5v5, seed 0, into ``tmp/runs/smax``,
    in a subprocess: the viewer's first frame then builds the env itself, as it does after a run."""
    import subprocess

    from compass.core.family import get_family

    shutil.copytree(get_family("combat").seed_skills_dir, tmp / "library" / "combat")
    cmd = [sys.executable, "-m", "compass.cli", "run", "--env", "smax:protoss_5_vs_5", "--planner", "library"]
    cmd += ["--episodes", "1", "--seed", "0", "--max-steps", "40", "--no-video"]
    cmd += ["--library", str(tmp / "library"), "--out", str(tmp / "runs"), "--run-id", "smax"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run(cmd, check=True, capture_output=True, env=env)


def bench_viewer(steps: int, smax_run: Path | None) -> dict:
    import httpx

    from compass.viewer.app import create_app
    from compass.viewer.runs import RunStore

    tmp = Path(tempfile.mkdtemp(prefix="compass-viewer-"))
    out: dict = {"steps": steps}
    try:
        write_long_trace(tmp / "runs" / "long", steps)
        out["trace_mb"] = round((tmp / "runs" / "long" / "trace.jsonl").stat().st_size / 1e6, 1)
        out["index_s"] = round(timed(RunStore(tmp / "runs").index, "long")[0], 3)
        if smax_run is not None:
            shutil.copytree(smax_run, tmp / "runs" / "smax")
        else:  # play one itself: frame timings need a real SMAX run, and /tmp is no input
            play_smax_run(tmp)
        url, server, th = serve(create_app(tmp / "runs"))
        try:
            with httpx.Client(timeout=600) as c:
                c.get(f"{url}/api/runs/long/episodes/0")  # builds the index once
                win = [
                    timed(c.get, f"{url}/api/runs/long/episodes/0/steps?start={s}&count=100")[0]
                    for s in range(0, steps, steps // 20)
                ]
                out["api_window_100_steps_ms"] = round(1000 * statistics.median(win), 2)
                # a SMAX run is always there (given, or played above)
                first, _ = timed(c.get, f"{url}/api/runs/smax/episodes/0/frame/0/global.png")
                nxt = [
                    timed(c.get, f"{url}/api/runs/smax/episodes/0/frame/{t}/global.png")[0]
                    for t in range(1, 20)
                ]
                ego = [
                    timed(c.get, f"{url}/api/runs/smax/episodes/0/frame/{t}/agent0.png")[0]
                    for t in range(1, 20)
                ]
                out["smax_frame_ms"] = {
                    "first_incl_env_build": round(1000 * first, 1),
                    "next_step_global": round(1000 * statistics.median(nxt), 1),
                    "ego_same_step": round(1000 * statistics.median(ego), 1),
                }
            if os.path.exists("/usr/bin/chromium"):
                out["browser"] = browser_timings(url, steps)
        finally:
            server.should_exit = True
            th.join(timeout=10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def browser_timings(url: str, steps: int, run: str = "long", frames: bool = False) -> dict:
    """First paint and per-step navigation in chromium; ``frames``: also wait for every frame."""
    from playwright.sync_api import sync_playwright

    def drawn(t: int) -> str:
        cond = (
            f"document.getElementById('t-label').textContent === '{t}' && "
            "document.getElementById('stepinfo').textContent.includes('reward')"
        )
        if frames:  # the global frame and every ego frame of step t loaded
            cond += (
                " && [...document.querySelectorAll('#global, .ego img')].every((i) => "
                f"i.src.includes('/frame/{t}/') && i.complete && i.naturalWidth > 0)"
            )
        return cond

    res = {}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = b.new_page()
        page.set_default_timeout(120_000)
        for label, t0 in (("start", 0), ("middle", steps // 2), ("end", steps - 1)):
            t = time.perf_counter()
            page.goto(f"{url}/runs/{run}/episodes/0?t={t0}")
            page.wait_for_selector("#timeline .agent-col")
            page.wait_for_function(drawn(t0))
            res[f"first_paint_ms_{label}"] = round(1000 * (time.perf_counter() - t), 1)
        nav = []
        page.goto(f"{url}/runs/{run}/episodes/0?t={steps // 3}")
        page.wait_for_selector("#timeline .agent-col")
        page.wait_for_function(drawn(steps // 3))
        for k in range(1, 41):
            t = time.perf_counter()
            page.keyboard.press("ArrowRight")
            page.wait_for_function(drawn(steps // 3 + k))
            nav.append(time.perf_counter() - t)
        res["step_navigation_ms_median"] = round(1000 * statistics.median(nav), 1)
        res["step_navigation_ms_p90"] = round(1000 * sorted(nav)[int(0.9 * len(nav))], 1)
        b.close()
    return res


def bench_alem_viewer(run_dir: Path) -> dict:
    """The viewer on a real, long ALEM run: index, frames through checkpointed replay, browser."""
    import httpx

    from compass.viewer.app import create_app
    from compass.viewer.replay import CHECKPOINT_EVERY
    from compass.viewer.runs import RunStore

    tmp = Path(tempfile.mkdtemp(prefix="compass-alem-viewer-"))
    out: dict = {"run": run_dir.name, "checkpoint_every": CHECKPOINT_EVERY}
    try:
        shutil.copytree(run_dir, tmp / "runs" / "alem")
        trace = tmp / "runs" / "alem" / "trace.jsonl"
        out["trace_mb"] = round(trace.stat().st_size / 1e6, 1)
        out["index_s"] = round(timed(RunStore(tmp / "runs").index, "alem")[0], 3)
        app = create_app(tmp / "runs")
        url, server, th = serve(app)
        try:
            with httpx.Client(timeout=900) as c:
                ep = c.get(f"{url}/api/runs/alem/episodes/0").json()
                steps = out["steps"] = ep["steps"]
                frame = lambda t, w="global": c.get(f"{url}/api/runs/alem/episodes/0/frame/{t}/{w}.png")  # noqa: E731
                out["first_global_frame_incl_env_build_s"] = round(timed(frame, 0)[0], 2)
                out["first_ego_frame_incl_compile_s"] = round(timed(frame, 0, "agent0")[0], 2)
                # The replay thread now lays checkpoints down; wait until it has passed the end.
                replay = app.state.replays.replay("alem", 0)
                t0 = time.perf_counter()
                while max(replay.checkpoints) + CHECKPOINT_EVERY < steps and time.perf_counter() - t0 < 1800:
                    time.sleep(0.5)
                out["checkpoints_laid_s"] = round(time.perf_counter() - t0, 1)
                out["replay_steps_per_s"] = round(
                    max(replay.checkpoints) / max(out["checkpoints_laid_s"], 1e-9)
                )
                rng = np.random.default_rng(0)
                seeks = [timed(frame, int(t))[0] for t in rng.integers(0, steps, 20)]
                nxt = [timed(frame, t)[0] for t in range(steps // 2, steps // 2 + 20)]
                egos = [timed(frame, t, "agent1")[0] for t in range(steps // 2, steps // 2 + 20)]
                out["frame_ms"] = {
                    "random_step_global_median": round(1000 * statistics.median(seeks), 1),
                    "random_step_global_max": round(1000 * max(seeks), 1),
                    "next_step_global_median": round(1000 * statistics.median(nxt), 1),
                    "ego_same_step_median": round(1000 * statistics.median(egos), 1),
                }
            if os.path.exists("/usr/bin/chromium"):
                out["browser"] = browser_timings(url, steps, run="alem", frames=True)
        finally:
            app.state.replays.close()
            server.should_exit = True
            th.join(timeout=10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skills", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--parts", default="retrieval,viewer")
    ap.add_argument(
        "--smax-run", type=Path, default=None, help="a run dir of compass run (smax) for frame timings"
    )
    ap.add_argument(
        "--alem-run", type=Path, default=None, help="a long ALEM run dir of compass run (--parts alem)"
    )
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "compass" / "bench-embeddings")
    sys.path.insert(0, str(ROOT))
    from benchmarks._results import add_results_arguments, preflight, write_results

    add_results_arguments(ap)
    args = ap.parse_args()
    # A run directory the figures come from is an input: it must be committed in the repository.
    inputs = [p for p in (args.smax_run, args.alem_run) if p is not None]
    preflight(args.allow_dirty, inputs)

    result: dict = {}
    if "retrieval" in args.parts:
        result["retrieval"] = bench_retrieval(args.skills, args.cache)
        print(json.dumps(result["retrieval"], indent=1), flush=True)
    if "viewer" in args.parts:
        result["viewer"] = bench_viewer(args.steps, args.smax_run)
        print(json.dumps(result["viewer"], indent=1), flush=True)
    if "alem" in args.parts:
        if args.alem_run is None:
            ap.error("--parts alem needs --alem-run RUN_DIR (a long compass run --env alem:...)")
        result["alem_viewer"] = bench_alem_viewer(args.alem_run)
        print(json.dumps(result["alem_viewer"], indent=1), flush=True)
    # Only what this run measured is written: a part kept from an earlier run would carry that
    # run's commit under this one's, so run every part you want to quote in one command.
    result["load_average_1min_end"] = round(os.getloadavg()[0], 1)
    write_results(
        "library_scale",
        result,
        notes="all parts in one run on the 2-core development machine shared with other jobs; "
        "wall times move with the load, CPU columns are this process's CPU time",
        inputs=inputs,
        allow_dirty=args.allow_dirty,
    )


if __name__ == "__main__":
    main()
