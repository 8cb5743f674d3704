"""The viewer's JSON API over a real recorded run: lists, windows, events, frames, library edits."""

from __future__ import annotations

import io

import httpx
import numpy as np
from PIL import Image


def test_runs_list_shows_outcomes_tokens_and_errors(viewer_url):
    runs = {r["id"]: r for r in httpx.get(f"{viewer_url}/api/runs").json()}
    assert set(runs) == {"vlm-run", "lib-run", "mini-eval"}
    vlm = runs["vlm-run"]
    assert vlm["status"] == "finished" and vlm["n_episodes"] == 1
    assert vlm["tokens"] > 0 and vlm["episodes"][0]["outcome"] in {"win", "loss", "timeout"}
    assert vlm["skill_errors"] >= 1  # the scripted synthesis injects a fault
    assert [r["id"] for r in httpx.get(f"{viewer_url}/api/runs", params={"q": "test-model"}).json()] == [
        "vlm-run"
    ]


def test_an_eval_result_is_listed_with_its_report_plot_and_episode_replays(viewer_url):
    """`compass eval` writes beside the runs; its summary.json is not a run's (episodes is a count)."""
    assert httpx.get(f"{viewer_url}/").status_code == 200
    runs = {r["id"]: r for r in httpx.get(f"{viewer_url}/api/runs").json()}
    ev = runs["mini-eval"]
    assert ev["kind"] == "eval" and ev["status"] == "finished" and ev["n_episodes"] == 4
    assert ev["configs"] == ["comm=none", "comm=multihop"]
    assert {(e["config"], e["seed"]) for e in ev["episodes"]} == {
        (c, s) for c in ("comm=none", "comm=multihop") for s in (0, 1)
    }
    page = httpx.get(f"{viewer_url}/runs/mini-eval")
    assert page.status_code == 200 and "<th>win %</th>" in page.text  # the report's table, as HTML
    plot = httpx.get(f"{viewer_url}/api/runs/mini-eval/file", params={"path": "report.png"})
    assert plot.status_code == 200 and plot.content.startswith(b"\x89PNG")
    # Each kept trace opens as a run of its own, with the episode the eval recorded.
    trace = ev["episodes"][0]["trace"]
    assert trace == "mini-eval~traces~comm=none~smax_protoss_5_vs_5~seed-0"
    run = httpx.get(f"{viewer_url}/api/runs/{trace}").json()
    assert run["env"] == "smax:protoss_5_vs_5" and run["seed"] == 0
    assert [e["outcome"] for e in run["episodes"]] == [ev["episodes"][0]["outcome"]]
    assert (
        httpx.get(f"{viewer_url}/api/runs/{trace}/episodes/0").json()["steps"] == ev["episodes"][0]["steps"]
    )
    # A nested id never leaves the runs directory.
    assert httpx.get(f"{viewer_url}/api/runs/mini-eval~..~..~etc").status_code == 404


def test_steps_come_in_windows_with_decisions_and_prompt_links(viewer_url, recorded):
    ep = httpx.get(f"{viewer_url}/api/runs/vlm-run/episodes/0").json()
    assert ep["steps"] == 30 and ep["agents"] == 5
    kinds = {e["kind"] for e in ep["events"]}
    assert {"synthesis", "repair", "error"} <= kinds
    w = httpx.get(f"{viewer_url}/api/runs/vlm-run/episodes/0/steps", params={"start": 10, "count": 5}).json()
    assert [s["t"] for s in w["steps"]] == [10, 11, 12, 13, 14] and w["total"] == 30
    w0 = httpx.get(
        f"{viewer_url}/api/runs/vlm-run/episodes/0/steps", params={"start": recorded["prompt_t"], "count": 1}
    ).json()
    links = [p for d in w0["steps"][0]["decisions"] for p in d["prompts"]]
    assert any(recorded["prompt_key"] in p["path"] for p in links)
    # Prompts that were not logged have no link (and nothing breaks).
    assert len(links) < sum(
        1 for d in w0["steps"][0]["decisions"] for r in d["records"] if r.get("kind") == "vlm"
    )
    r = httpx.get(f"{viewer_url}/api/runs/vlm-run/file", params={"path": "../../etc/passwd"})
    assert r.status_code == 404


def test_kills_are_jump_targets_that_account_for_every_dead_enemy(viewer_url):
    ep = httpx.get(f"{viewer_url}/api/runs/lib-run/episodes/0").json()
    kills = [e for e in ep["events"] if e["kind"] == "kill"]
    assert kills, "the library planner's 30 steps of protoss 5v5 (seed 0) see a kill"
    # Every enemy that died is in the events: killed by someone, or a death with no attacker.
    enemy_ends = [e for e in kills if " killed enemy " in e["text"]]
    enemy_ends += [e for e in ep["events"] if e["kind"] == "death" and e["text"].startswith("enemy ")]
    assert len(enemy_ends) == ep["result"]["dead_enemies"] > 0
    first = kills[0]
    step = httpx.get(
        f"{viewer_url}/api/runs/lib-run/episodes/0/steps", params={"start": first["t"], "count": 1}
    ).json()["steps"][0]["step"]
    (recorded,) = [e for e in step["events"] if e["kind"] == "kill"][:1]
    assert recorded["text"] == first["text"] and recorded["by"] and recorded["target"]
    if first["agent"] is not None:  # one of ours killed it: that agent's attack order named the target
        target = int(recorded["target"].split()[1])
        assert step["actions"][first["agent"]] == 6 + target


def test_frames_are_re_simulated_and_match_the_trace(viewer_url):
    r = httpx.get(f"{viewer_url}/api/runs/vlm-run/episodes/0/frame/12/global.png", timeout=300)
    assert r.status_code == 200 and "X-Replay-Diverged-At" not in r.headers
    g = np.asarray(Image.open(io.BytesIO(r.content)))
    assert g.ndim == 3 and g.shape[0] > 100 and g.std() > 5
    ego = httpx.get(f"{viewer_url}/api/runs/vlm-run/episodes/0/frame/12/agent2.png", timeout=300)
    assert ego.status_code == 200 and not np.array_equal(
        np.asarray(Image.open(io.BytesIO(ego.content))).shape, g.shape[:0]
    )
    panels = httpx.get(f"{viewer_url}/api/runs/vlm-run/episodes/0/agents/29", timeout=300).json()
    assert panels["diverged_at"] is None and len(panels["agents"]) == 5
    assert panels["agents"][0]["text"].startswith("Step 29.") or not panels["agents"][0]["alive"]


def test_library_search_edit_refusal_and_revert(viewer_url, recorded):
    hits = httpx.get(f"{viewer_url}/api/library/combat/search", params={"q": "kite melee units"}).json()
    assert hits[0]["name"] == "kite_melee" and 0 < hits[0]["score"] <= 1
    path = recorded["lib"] / "combat" / "regroup.py"
    before = path.read_text()
    bad = before.replace("def regroup(obs", "def regroup(obs, extra")
    bad = before + "\n    return (\n"
    r = httpx.put(f"{viewer_url}/api/library/combat/skills/regroup", json={"text": bad})
    assert r.status_code == 400 and "line" in r.json()["detail"] and "syntax error" in r.json()["detail"]
    assert path.read_text() == before
    good = before.replace('"""', '"""Edited in the viewer. ', 1)
    r = httpx.put(
        f"{viewer_url}/api/library/combat/skills/regroup",
        json={"text": good, "reason": "doc tweak", "author": "Viewer Test"},
    )
    assert r.status_code == 200, r.text
    assert path.read_text() == good
    skill = httpx.get(f"{viewer_url}/api/library/combat/skills/regroup").json()
    assert skill["history"][-1]["reason"] == "doc tweak" and skill["history"][-1]["author"] == "Viewer Test"
    r = httpx.post(
        f"{viewer_url}/api/library/combat/skills/regroup/revert",
        json={"version": str(skill["history"][-2]["version"])},
    )
    assert r.status_code == 200 and path.read_text() == before


def test_skill_page_data_has_lineage_stats_and_the_code_a_decision_ran(viewer_url):
    from compass.episode.trace import read_trace

    lib = httpx.get(f"{viewer_url}/api/library").json()["families"]["combat"]["skills"]
    generated = [s for s in lib if s["provenance"] == "generated"]
    assert generated, "the recorded run synthesized skills"
    child = httpx.get(f"{viewer_url}/api/library/combat/skills/{generated[0]['name']}").json()
    assert child["lineage"]["ancestors"] and child["history"][0]["kind"] == "model"
    parent = httpx.get(f"{viewer_url}/api/library/combat/skills/{child['lineage']['ancestors'][0]}").json()
    assert generated[0]["name"] in parent["lineage"]["children"]
    assert parent["in_runs"]["decisions"] > 0 and parent["in_runs"]["episodes"] >= 1
    del read_trace


def test_prompt_log_links_of_log_prompts_records(tmp_path):
    """A trace line with ``files`` (as ``--log-prompts`` writes them) links prompt, images and
    response; paths outside the run directory are dropped; records without files link nothing."""
    import json

    from compass.viewer.runs import RunStore

    run = tmp_path / "runs" / "r1"
    (run / "prompts").mkdir(parents=True)
    (run / "images").mkdir()
    (run / "responses").mkdir()
    (run / "prompts" / "k1.txt").write_text("### prompt\nhello")
    (run / "images" / "a.png").write_bytes(b"png")
    (run / "responses" / "r.txt").write_text("answer")
    files = {
        "prompt": "prompts/k1.txt",
        "images": ["images/a.png", "../../secret.png"],
        "response": "responses/r.txt",
    }
    lines = [
        {"kind": "run_start", "config": {"env": "smax:protoss_5_vs_5"}},
        {
            "kind": "decision",
            "episode": 0,
            "t": 0,
            "agent": 0,
            "skill": "x",
            "records": [
                {"module": "perception", "kind": "vlm", "key_prompt": "k1", "files": files},
                {"module": "actor", "kind": "vlm", "key_prompt": "nope"},
            ],
        },
        {"kind": "step", "episode": 0, "t": 0, "actions": [0], "skills": ["x"], "reward": 0.0},
    ]
    (run / "trace.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (step,) = RunStore(tmp_path / "runs").steps("r1", 0, 0, 5)
    (link,) = step["decisions"][0]["prompts"]
    assert link == {
        "module": "perception",
        "key_prompt": "k1",
        "path": "prompts/k1.txt",
        "images": ["images/a.png"],
        "response": "responses/r.txt",
    }


def test_token_required_when_set(tmp_path):
    """Bound beyond loopback, the viewer answers only with the token (then a cookie carries it)."""
    from fastapi.testclient import TestClient

    from compass.viewer.app import create_app

    (tmp_path / "runs").mkdir()
    client = TestClient(create_app(tmp_path / "runs", token="s3cret"), base_url="http://127.0.0.1")
    assert client.get("/api/runs").status_code == 401
    assert client.get("/api/runs", params={"token": "wrong"}).status_code == 401
    assert client.get("/", params={"token": "s3cret"}).status_code == 200
    assert client.get("/api/runs").status_code == 200  # the cookie from the previous answer


def test_only_requests_for_the_served_address_are_answered(viewer_url):
    """DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 sends
    ``Host: evil.example``; the viewer refuses it, reads and library edits alike."""
    port = viewer_url.rsplit(":", 1)[1]
    evil = {"Host": f"evil.example:{port}"}
    assert httpx.get(f"{viewer_url}/api/runs", headers=evil).status_code == 400
    assert httpx.get(f"{viewer_url}/", headers={"Host": "evil.example"}).status_code == 400
    r = httpx.put(f"{viewer_url}/api/library/combat/skills/attack_nearest", json={"text": "x"}, headers=evil)
    assert r.status_code == 400
    for ok in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        assert httpx.get(f"{viewer_url}/api/runs", headers={"Host": ok}).status_code == 200


def test_host_names_and_a_wildcard_bind(tmp_path):
    from fastapi.testclient import TestClient

    from compass.viewer.access import host_name
    from compass.viewer.app import create_app

    assert [host_name(h) for h in ("[::1]:8765", "LocalHost:1", "10.0.0.5", "::1")] == [
        "::1",
        "localhost",
        "10.0.0.5",
        "::1",
    ]
    (tmp_path / "runs").mkdir()
    lan = TestClient(create_app(tmp_path / "runs", hosts=["10.0.0.5"]), base_url="http://10.0.0.5:8765")
    assert lan.get("/api/runs").status_code == 200
    assert lan.get("/api/runs", headers={"Host": "127.0.0.1"}).status_code == 400
    anywhere = TestClient(
        create_app(tmp_path / "runs", token="t", hosts=None), base_url="http://evil.example"
    )
    assert anywhere.get("/api/runs", params={"token": "t"}).status_code == 200  # the token guards


def test_a_busy_port_is_one_line(tmp_path):
    import socket

    from typer.testing import CliRunner

    from compass.cli import app

    (tmp_path / "runs").mkdir()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = CliRunner().invoke(app, ["view", str(tmp_path / "runs"), "--port", str(port)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(another compass server? pick another --port, or --port 0 for any free one)"
    ]
