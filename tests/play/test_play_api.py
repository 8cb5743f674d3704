"""``compass play`` over HTTP (no browser): a person's SMAX sitting of two episodes is recorded like
any run and replays in the viewer; bad input is refused; a closed or silent page abandons the
episode; two people get separate runs; a frame-rate pace advances without the person."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from compass.episode.trace import read_trace
from compass.eval.runs import rows_of
from compass.play.study import PlaySettings
from tests.play.conftest import Player, serve

ENV = "smax:protoss_5_vs_5"


def _run_dir(app, sid: str) -> Path:
    s = app.state.sittings[sid]
    s.join(timeout=60)
    assert s.run_dir is not None
    return s.run_dir


@pytest.fixture(scope="module")
def smax(tmp_path_factory):
    out = tmp_path_factory.mktemp("play")
    with serve(PlaySettings(env=ENV, max_steps=12, episodes=2, out=out, abandon_after=4.0)) as (url, app):
        yield url, app, out


def test_a_sitting_of_two_episodes_is_recorded_and_replays(smax):
    url, app, out = smax
    p = Player(url, "P-007")
    chosen: dict[tuple[int, int], int] = {}
    for ep in range(2):
        while True:
            st = p.until("play", "between", "complete")
            if st["phase"] != "play":
                break
            if not st["alive"]:
                continue
            assert st["unit"] == 0 and st["frame"].startswith("data:image/png;base64,")
            # Alternate stop and moves, so the recorded actions are the person's, not a default.
            action = [k["action"] for k in st["keys"]][st["t"] % 3]
            r = p.act(st["t"], action)
            assert r.status_code == 200, r.text
            chosen[(st["episode"], st["t"])] = action
        if st["phase"] == "between":
            assert st["episode"] == ep == 0
            p.http.post(f"/api/play/{p.id}/next")
    assert st["phase"] == "complete" and len(st["outcomes"]) == 2
    run = _run_dir(app, p.id)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["participant"] == "P-007" and manifest["controller"] == "human"
    assert manifest["status"] == "complete"
    summary = json.loads((run / "summary.json").read_text())
    assert [e["outcome"] for e in summary["episodes"]] == st["outcomes"]
    assert summary["episodes"][0]["human"]["actions"] == len([k for k in chosen if k[0] == 0])
    trace = read_trace(run)
    human = [r for r in trace if r["kind"] == "human"]
    assert {(r["episode"], r["t"]): r["action"] for r in human} == chosen
    assert all(r["controller"] == "human" and r["reaction_ms"] >= 0 for r in human)
    steps = {(r["episode"], r["t"]): r["actions"][0] for r in trace if r["kind"] == "step"}
    assert all(steps[k] == a for k, a in chosen.items())  # the traced step holds the person's action

    # compass eval's aggregation reads it like any run (compass runs / compare).
    rows = rows_of(run)
    assert [r["outcome"] for r in rows] == st["outcomes"] and rows[0]["extra"]["human"]["unit"] == 0

    # The viewer (same server) lists the run and re-simulates it without diverging.
    rows = httpx.get(f"{url}/api/runs").json()
    assert run.name in [r["id"] for r in rows]
    r = httpx.get(f"{url}/api/runs/{run.name}/episodes/1/frame/11/global.png", timeout=120)
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert "X-Replay-Diverged-At" not in r.headers
    window = httpx.get(f"{url}/api/runs/{run.name}/episodes/0/steps", params={"start": 0, "count": 3}).json()
    assert [w["human"]["action"] for w in window["steps"]] == [chosen[(0, t)] for t in range(3)]


def test_forged_and_stale_input_is_refused(smax):
    url, app, _ = smax
    p = Player(url)
    st = p.until("play")
    t, legal = st["t"], [k["action"] for k in st["keys"]]
    assert p.act(t, legal[0], unit=1).status_code == 403  # another unit
    assert p.act(t, legal[0], key="q").status_code == 400  # a key that does not send it
    assert p.act(t, 99).status_code == 400  # not one of the game's actions now
    assert p.act(t + 5, legal[0]).status_code == 409  # not the open step
    assert p.act(t, "stop").status_code == 422
    assert p.http.post(f"/api/play/{p.id}/act", json={"t": t, "action": True}).status_code == 422
    assert httpx.post(f"{url}/api/play/nosuchsitting/act", json={"t": t, "action": 1}).status_code == 404
    assert p.act(t, legal[0]).status_code == 200
    assert p.act(t, legal[0]).status_code == 409  # one action per step
    nxt = p.until("play")
    assert nxt["t"] == t + 1
    p.http.post(f"/api/play/{p.id}/leave")
    p.until("abandoned")
    trace = read_trace(_run_dir(app, p.id))
    assert [r["action"] for r in trace if r["kind"] == "human"] == [legal[0]]  # only the accepted one


def test_a_closed_page_abandons_the_episode_and_it_is_recorded(smax):
    url, app, _ = smax
    p = Player(url, "leaver")
    st = p.until("play")
    assert p.act(st["t"], st["keys"][0]["action"]).status_code == 200
    p.until("play")
    p.http.post(f"/api/play/{p.id}/leave")  # the page's pagehide beacon
    end = p.until("abandoned", "complete")
    assert end["phase"] == "abandoned" and end["outcomes"] == ["abandoned"]
    run = _run_dir(app, p.id)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["abandoned"] == 1 and summary["episodes"][0]["outcome"] == "abandoned"
    assert summary["episodes"][0]["steps"] == 1  # one step played, the second never was
    assert summary["overall"]["episodes"] == 0  # abandoned episodes are not scored
    ends = [r for r in read_trace(run) if r["kind"] == "episode_end"]
    assert [e["outcome"] for e in ends] == ["abandoned"]


def test_a_silent_page_is_abandoned_after_the_timeout(smax):
    url, app, _ = smax
    p = Player(url)
    p.until("play")
    # No more polls, no input: after abandon_after (4 s) the episode ends as abandoned.
    s = app.state.sittings[p.id]
    s.join(timeout=60)
    assert s.outcomes == ["abandoned"]
    assert json.loads((s.run_dir / "summary.json").read_text())["episodes"][0]["outcome"] == "abandoned"


def test_two_players_play_separate_episodes(smax):
    url, app, _ = smax
    a, b = Player(url, "A"), Player(url, "B")
    sa, sb = a.until("play"), b.until("play")
    assert a.act(sa["t"], sa["keys"][0]["action"]).status_code == 200
    assert a.until("play")["t"] == sa["t"] + 1
    assert b.act(sb["t"], sb["keys"][1]["action"]).status_code == 200
    assert b.until("play")["t"] == sb["t"] + 1
    # A's input cannot be sent into B's episode: the sitting id is the key, and B's step is open.
    for p in (a, b):
        p.http.post(f"/api/play/{p.id}/leave")
    ra, rb = _run_dir(app, a.id), _run_dir(app, b.id)
    assert ra != rb
    assert json.loads((ra / "manifest.json").read_text())["participant"] == "A"
    assert json.loads((rb / "manifest.json").read_text())["participant"] == "B"
    ha = [r["action"] for r in read_trace(ra) if r["kind"] == "human"]
    hb = [r["action"] for r in read_trace(rb) if r["kind"] == "human"]
    assert ha == [sa["keys"][0]["action"]] and hb == [sb["keys"][1]["action"]]


def test_requests_for_another_host_and_bad_participant_ids_are_refused(smax):
    url, _, _ = smax
    assert httpx.get(f"{url}/play", headers={"Host": "evil.example"}).status_code == 400
    assert httpx.get(f"{url}/api/runs", headers={"Host": "evil.example:80"}).status_code == 400
    assert httpx.get(f"{url}/play", headers={"Host": "localhost"}).status_code == 200
    assert httpx.get(f"{url}/play", params={"participant": "<script>"}).status_code == 400
    r = httpx.post(f"{url}/api/play/start", json={"participant": "a/b"})
    assert r.status_code == 400


def test_a_frame_rate_pace_advances_with_the_noop(tmp_path):
    settings = PlaySettings(env=ENV, max_steps=6, out=tmp_path, pace=20.0)
    with serve(settings) as (url, app):
        p = Player(url)
        end = p.until("complete", "abandoned")
        assert end["phase"] == "complete"
        trace = read_trace(_run_dir(app, p.id))
    human = [r for r in trace if r["kind"] == "human"]
    assert [r["t"] for r in human] == list(range(6))
    assert all(r["via"] == "pace" and r["action"] == 0 for r in human)
