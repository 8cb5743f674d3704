"""A short MAPPO run: it learns, checkpoints, resumes, and refuses a checkpoint of another env."""

from __future__ import annotations

import json

import pytest

from compass.marl.checkpoint import CheckpointError, load_actor
from compass.marl.config import MappoConfig
from compass.marl.train import Trainer, train


def _cfg(**kw) -> MappoConfig:
    base = dict(
        env="smax:terran_5_vs_5",
        num_envs=32,
        num_steps=64,
        total_steps=32 * 64 * 30,
        max_episode_steps=100,
        hidden=64,
        checkpoint_every=10,
        eval_episodes=64,
    )
    return MappoConfig(**{**base, **kw})


@pytest.mark.slow
def test_short_training_learns_clearly_above_random_and_resumes(tmp_path):
    cfg = _cfg()
    summary = train(cfg, tmp_path)
    rows = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == cfg.num_updates and rows[-1]["steps"] == summary["steps"]
    params, meta = load_actor(tmp_path / "checkpoint", "smax:terran_5_vs_5")
    trainer = Trainer.build(cfg)
    random = trainer.evaluate(params, 64, uniform=True)
    greedy = summary["greedy_eval"]
    # damage dealt (the return) by the trained greedy team vs random legal actions, same held-out seeds
    assert greedy["mean_return"] > 1.5 * random["mean_return"], (greedy, random)
    # resuming: more steps continue from the checkpoint instead of starting over
    more = train(cfg.model_copy(update={"total_steps": cfg.total_steps + 2 * cfg.steps_per_update}), tmp_path)
    assert more["updates"] == cfg.num_updates + 2
    rows = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["update"] for r in rows] == list(range(1, cfg.num_updates + 3))
    with pytest.raises(CheckpointError, match="trained on smax:terran_5_vs_5, not smax:zerg_5_vs_5"):
        load_actor(tmp_path / "checkpoint", "smax:zerg_5_vs_5")
    with pytest.raises(CheckpointError, match="cannot resume"):
        train(cfg.model_copy(update={"hidden": 32}), tmp_path)
