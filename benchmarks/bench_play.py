"""Latency of ``compass play`` at ``turn`` pace: a key press in the browser to the next frame on
screen, for SMAX and ALEM, measured in Debian's chromium driven by Playwright.

The page times it itself (``window.compassLatencies``): from the ``keydown`` handler to the
animation frame after the next step's image is decoded. That span holds the POST of the action, the
step (the compass agents' skills in the sandbox, decisions when due, the env step, the ego frame
rendered and PNG-encoded), the long poll's answer and the image decode. Only steps where the
person's unit is alive count (a dead unit's steps are not waited for). Environments run one after
the other (one server each); the statistic is the same for both (median, p90 over all key presses).

    python benchmarks/bench_play.py                    # SMAX protoss_5_vs_5 and ALEM easy, seeds 0-1
    python benchmarks/bench_play.py --presses 30 --envs smax:protoss_5_vs_5
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._results import write_results  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
KEYS = ["ArrowDown", "ArrowRight", "s", "d", "ArrowUp", "ArrowLeft", "x", " "]


def _serve(settings):
    import uvicorn

    from compass.play.app import create_play_app
    from compass.play.study import check_settings
    from compass.viewer.access import allowed_hosts

    app = create_play_app(settings, check_settings(settings), None, allowed_hosts("127.0.0.1"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, app, f"http://127.0.0.1:{port}"


def measure(browser, env: str, seed: int, presses: int, max_steps: int) -> dict:
    """Key-press-to-frame latencies (ms) of one sitting on ``env`` from ``seed`` until ``presses``
    presses were timed (episodes in a row, as a participant would play them)."""
    from compass.play.study import PlaySettings

    out = Path(tempfile.mkdtemp(prefix="bench-play-"))
    settings = PlaySettings(env=env, seed=seed, episodes=20, max_steps=max_steps, out=out)
    server, app, url = _serve(settings)
    page = browser.new_page()
    page.set_default_timeout(300_000)
    try:
        page.goto(f"{url}/play?participant=bench")
        page.click("#start")
        page.wait_for_url("**/play/s/**")
        last, n = None, 0
        while n < presses:
            page.wait_for_function(
                "last => document.body.dataset.phase === 'between' || location.pathname.endsWith('/done')"
                " || (document.body.dataset.phase === 'play' && document.body.dataset.t + ':' + "
                "document.body.dataset.episode !== last)",
                arg=last,
            )
            if page.url.endswith("/done"):
                break
            if page.evaluate("document.body.dataset.phase") == "between":
                page.keyboard.press("Enter")
                page.wait_for_function("document.body.dataset.phase !== 'between'")
                continue
            last = page.evaluate("document.body.dataset.t + ':' + document.body.dataset.episode")
            state = page.evaluate(
                "({alive: window.compassState.alive, keys: window.compassState.keys.map(k => k.key)})"
            )
            if not state["alive"]:
                continue
            key = next((k for k in KEYS[n % len(KEYS) :] + KEYS if k in state["keys"]), None)
            if key is None:
                continue
            page.keyboard.press(key)
            n += 1
        page.wait_for_function(f"window.compassLatencies.length >= {n}")
        lat = page.evaluate("window.compassLatencies")
    finally:
        page.close()
        for s in app.state.sittings.values():
            s.leave("benchmark over")
            s.join(timeout=60)
        server.should_exit = True
    # Which presses led into a step where agents decided (retrieval, or a model call with vlm):
    # those steps wait for the decision round, the others only for skills and the env.
    from compass.episode.trace import read_trace

    (sitting,) = app.state.sittings.values()
    trace = read_trace(sitting.run_dir)
    decided = {(r["episode"], r["t"]) for r in trace if r["kind"] == "decision"}
    pressed = [(r["episode"], r["t"]) for r in trace if r["kind"] == "human" and r["via"] == "key"]
    into_decision = [(e, t + 1) in decided for e, t in pressed]
    return {"latencies_ms": [round(x, 2) for x in lat], "into_decision": into_decision[: len(lat)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", nargs="+", default=["smax:protoss_5_vs_5", "alem:easy"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--presses", type=int, default=40, help="timed key presses per seed and env")
    ap.add_argument("--max-steps", type=int, default=60)
    ap.add_argument("--no-write", action="store_true", help="print only (a dirty tree, a quick look)")
    args = ap.parse_args()
    if not os.path.exists(CHROMIUM):
        sys.exit(f"error: {CHROMIUM} is absent: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    results: dict[str, dict] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for env in args.envs:
                lat: list[float] = []
                flags: list[bool] = []
                for seed in args.seeds:
                    m = measure(browser, env, seed, args.presses, args.max_steps)
                    lat += m["latencies_ms"]
                    flags += m["into_decision"]
                plain = [x for x, d in zip(lat, flags, strict=True) if not d]
                deciding = [x for x, d in zip(lat, flags, strict=True) if d]
                q = statistics.quantiles(lat, n=10)
                results[env] = {
                    "latencies_ms": lat,
                    "presses": len(lat),
                    "median_ms": round(statistics.median(lat), 1),
                    "p90_ms": round(q[-1], 1),
                    "mean_ms": round(statistics.fmean(lat), 1),
                    "max_ms": round(max(lat), 1),
                    "no_decision": {
                        "presses": len(plain),
                        "median_ms": round(statistics.median(plain), 1) if plain else None,
                    },
                    "into_decision_round": {
                        "presses": len(deciding),
                        "median_ms": round(statistics.median(deciding), 1) if deciding else None,
                    },
                }
                print(f"{env}: {results[env]}", flush=True)
        finally:
            browser.close()
    load_after = os.getloadavg()
    envs = list(results)
    print(
        f"\nkey press -> next frame on screen, turn pace (load {load_before[0]:.1f} -> {load_after[0]:.1f})"
    )
    print(
        f"{'env':24s} {'presses':>7s} {'median':>8s} {'p90':>8s} {'no-decision median':>19s}"
        f" {'decision-step median':>21s} {'median vs 100 ms aim':>21s}"
    )
    for env in envs:
        r = results[env]
        nd, dd = r["no_decision"]["median_ms"], r["into_decision_round"]["median_ms"]
        print(
            f"{env:24s} {r['presses']:7d} {r['median_ms']:8.1f} {r['p90_ms']:8.1f} {nd!s:>19s} {dd!s:>21s}"
            f" {r['median_ms'] / 100:20.2f}x"
        )
    if len(envs) == 2:
        a, b = envs
        print(f"median ratio {b} / {a}: {results[b]['median_ms'] / results[a]['median_ms']:.2f}x")
    data = {
        # keys without ':' so docs can cite them (<!-- figure: play_latency.json:per_env.smax-... -->)
        "per_env": {env.replace(":", "-"): r for env, r in results.items()},
        "aim_median_ms": 100,
        "load_average_1min": {"before": round(load_before[0], 2), "after": round(load_after[0], 2)},
    }
    if not args.no_write:
        write_results(
            "play_latency",
            data,
            seeds=args.seeds,
            notes="turn pace, one person (Playwright) at a time, library planner for the other agents, "
            "process-isolated skills; timed in the page from keydown to the frame after the next step; "
            "shared machine under load (see load_average_1min)",
        )


if __name__ == "__main__":
    main()
