"""The viewer on a real ALEM run: steps, events, ALEM frames and text, and checkpointed seeking
(a step reached through a checkpoint shows exactly what a replay from the start shows)."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image

from compass.config import RunConfig
from compass.episode.session import run
from compass.viewer.replay import CHECKPOINT_EVERY, EpisodeReplay
from compass.viewer.runs import RunStore

STEPS = 2 * CHECKPOINT_EVERY + 40
pytestmark = pytest.mark.slow  # a 240-step ALEM run and two replays of it (~100 s here)


@pytest.fixture(scope="module")
def alem_run(tmp_path_factory):
    pytest.importorskip("alem")
    runs = tmp_path_factory.mktemp("alem-viewer") / "runs"
    run(
        RunConfig(
            env="alem:overworld", max_steps=STEPS, out=runs, run_id="alem", skill="alem_role_policy", seed=0
        )
    )
    return runs


@pytest.fixture(scope="module")
def client(alem_run):
    from compass.viewer.app import create_app

    with TestClient(create_app(alem_run), base_url="http://127.0.0.1") as c:
        yield c


def _png(r) -> np.ndarray:
    assert r.status_code == 200, r.text
    return np.asarray(Image.open(io.BytesIO(r.content)))


def test_alem_episode_opens_steps_and_shows_frames_and_text(client):
    ep = client.get("/api/runs/alem/episodes/0").json()
    assert ep["agents"] == 3 and ep["steps"] == STEPS, "alem_role_policy survives the overworld's first steps"
    w = client.get("/api/runs/alem/episodes/0/steps", params={"start": 100, "count": 3}).json()
    assert [s["t"] for s in w["steps"]] == [100, 101, 102]
    assert all(s["step"]["skills"] == ["alem_role_policy"] * 3 for s in w["steps"])
    page = client.get("/runs/alem/episodes/0", params={"t": 100})
    assert page.status_code == 200 and 'data-family="alem"' in page.text
    _png(client.get("/api/runs/alem/episodes/0/frame/0/global.png"))
    # Opening the episode started a thread that lays a checkpoint every CHECKPOINT_EVERY steps
    # (nothing has asked for a later step yet).
    replay = client.app.state.replays.replay("alem", 0)
    deadline = time.monotonic() + 300
    while max(replay.checkpoints) < 2 * CHECKPOINT_EVERY and time.monotonic() < deadline:
        time.sleep(0.2)
    assert set(replay.checkpoints) == {0, CHECKPOINT_EVERY, 2 * CHECKPOINT_EVERY}
    t = STEPS - 5  # past two checkpoints
    g = _png(client.get(f"/api/runs/alem/episodes/0/frame/{t}/global.png"))
    ego = _png(client.get(f"/api/runs/alem/episodes/0/frame/{t}/agent1.png"))
    assert g.ndim == 3 and g.std() > 5 and ego.ndim == 3 and ego.shape != g.shape
    panels = client.get(f"/api/runs/alem/episodes/0/agents/{t}").json()
    assert panels["diverged_at"] is None and len(panels["agents"]) == 3
    assert all(f"Step: {t}/" in a["text"] for a in panels["agents"] if a["alive"])
    back = client.get("/api/runs/alem/episodes/0/agents/5").json()  # back past them: a restore
    assert back["t"] == 5 and back["diverged_at"] is None


def test_seeking_back_through_a_checkpoint_equals_a_replay_from_the_start(alem_run):
    store = RunStore(alem_run)
    fast = EpisodeReplay(store, "alem", 0)
    assert fast.checkpointable
    fast.seek(STEPS - 1)
    assert set(fast.checkpoints) >= {0, CHECKPOINT_EVERY, 2 * CHECKPOINT_EVERY}
    target = CHECKPOINT_EVERY + 17
    fast.seek(target)  # back: restores the checkpoint at CHECKPOINT_EVERY, replays 17 steps
    slow = EpisodeReplay(store, "alem", 0)
    slow.checkpointable = False
    slow.seek(target)
    assert fast.t == slow.t == target and fast.diverged_at is None and slow.diverged_at is None
    assert [v.text for v in fast.perceived] == [v.text for v in slow.perceived]
    assert np.array_equal(fast.global_frame(), slow.global_frame())
    # The checkpoint is still good after being used (restoring copies it).
    fast.seek(CHECKPOINT_EVERY + 3)
    slow.seek(CHECKPOINT_EVERY + 3)
    assert [v.text for v in fast.perceived] == [v.text for v in slow.perceived]
