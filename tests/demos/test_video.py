"""The streamed video writer and the ALEM followable frame (no game needed)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from compass.core.video import EpisodeVideo, FrameInfo, count_frames


def test_episode_video_streams_frames_and_only_a_finished_file_gets_its_name(tmp_path):
    with EpisodeVideo(tmp_path / "ep.mp4") as v:
        for k in range(7):
            v.add(np.full((40, 60, 3), 30 * k, np.uint8))
        assert not (tmp_path / "ep.mp4").exists()  # still a hidden part file
    assert count_frames(tmp_path / "ep.mp4") == 7
    with pytest.raises(RuntimeError), EpisodeVideo(tmp_path / "bad.mp4") as v:
        v.add(np.zeros((40, 60, 3), np.uint8))
        raise RuntimeError("episode crashed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ep.mp4"]  # nothing that looks like a result


def test_frames_of_another_size_are_refused(tmp_path):
    v = EpisodeVideo(tmp_path / "ep.mp4")
    v.add(np.zeros((40, 60, 3), np.uint8))
    with pytest.raises(ValueError, match="frame 1 is"):
        v.add(np.zeros((20, 60, 3), np.uint8))
    v.abort()


def test_alem_frame_shows_hud_per_agent_and_ego_views():
    from compass.games.alem.video import render_video_frame

    s = types.SimpleNamespace(
        player_position=np.array([[24, 24], [25, 24], [24, 26]]),
        player_alive=np.array([1, 1, 0]),
        player_level=0,
        player_health=np.array([9.0, 5.0, 0.0]),
        player_food=np.array([9.0, 5.0, 0.0]),
        player_drink=np.array([7.0, 5.0, 0.0]),
        player_energy=np.array([9.0, 2.0, 0.0]),
    )
    world = np.full((768, 768, 3), 90, np.uint8)
    egos = [np.full((130, 90, 3), 200, np.uint8) for _ in range(3)]
    f = render_video_frame(s, world, egos, FrameInfo(12, ["a", "b", None], None), "alem:overworld")
    assert f.shape[0] % 2 == 0 and f.shape[1] % 2 == 0  # H.264 needs even sizes
    # the ego views are pasted beside the map (their bright pixels are there)
    assert (f[:, 384 + 16 :] == 200).all(-1).sum() >= 3 * 130 * 90
    # health bars: agent 0 full (red), agent 2 empty
    red = (f[..., 0] > 200) & (f[..., 1] < 90) & (f[..., 2] < 90)
    assert red.sum() > 300
