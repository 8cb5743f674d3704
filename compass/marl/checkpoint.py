"""Checkpoints on disk (flax msgpack serialisation, atomic writes).

``DIR/`` holds:

- ``actor.msgpack``: the shared actor's parameters (all a policy needs to act);
- ``train_state.msgpack``: parameters, optimiser state, envs and key (resuming training);
- ``config.yaml``: the :class:`~compass.marl.config.MappoConfig` it was trained with;
- ``meta.json``: env spec, shapes, action names, steps, seconds, device, the actor's SHA-256.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flax import serialization

from compass.core.errors import CompassError
from compass.marl.config import MappoConfig, dump_config
from compass.util.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text

FORMAT = "compass-mappo/1"


class CheckpointError(CompassError, ValueError):
    """A checkpoint folder that is missing, incomplete or for another environment."""


def save_checkpoint(
    path: Path, st: dict[str, Any], trainer: Any, train_seconds: float = 0.0, device: str = ""
) -> None:
    """Write ``st`` (the trainer's state) to ``path``; meta last, so a half-written folder is not loadable."""
    import jax

    st = jax.device_get(st)
    env, cfg = trainer.env, trainer.cfg
    actor_bytes = serialization.to_bytes(st["params"]["actor"])
    atomic_write_bytes(path / "actor.msgpack", actor_bytes)
    atomic_write_bytes(path / "train_state.msgpack", serialization.to_bytes(st))
    atomic_write_text(path / "config.yaml", dump_config(cfg))
    update = int(st["update"])
    atomic_write_json(
        path / "meta.json",
        {
            "format": FORMAT,
            "env": env.spec,
            "n_agents": env.n_agents,
            "obs_dim": env.obs_dim,
            "world_dim": env.world_dim,
            "n_actions": env.n_actions,
            "action_names": list(env.action_names),
            "hidden": cfg.hidden,
            "max_episode_steps": cfg.max_episode_steps,
            "epo": cfg.epo,
            "updates": update,
            "steps": update * cfg.steps_per_update,
            "train_seconds": round(train_seconds, 1),
            "device": device,
            "seed": cfg.seed,
            "actor_sha256": hashlib.sha256(actor_bytes).hexdigest(),
            "saved": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )


def read_meta(path: str | Path) -> dict[str, Any]:
    """The checkpoint's ``meta.json``; a clear :class:`CheckpointError` when it is not a checkpoint."""
    path = Path(path)
    meta_path = path / "meta.json"
    if not path.is_dir():
        raise CheckpointError(f"checkpoint {path} is not a folder")
    if not meta_path.exists():
        raise CheckpointError(f"{path} is not a compass MAPPO checkpoint (no meta.json)")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{meta_path}: unreadable ({e})") from None
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{meta_path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta


def load_actor(path: str | Path, env_spec: str | None = None) -> tuple[Any, dict[str, Any]]:
    """The actor parameters and meta of a checkpoint; ``env_spec`` must match the env it was trained on."""
    import jax
    import jax.numpy as jnp

    from compass.marl.networks import Actor, init_carry

    path = Path(path)
    meta = read_meta(path)
    if env_spec is not None and meta["env"] != env_spec:
        raise CheckpointError(f"checkpoint {path} was trained on {meta['env']}, not {env_spec}")
    actor = Actor(meta["n_actions"], meta["hidden"])
    template = actor.init(
        jax.random.PRNGKey(0),
        init_carry(1, meta["hidden"]),
        jnp.zeros((1, 1, meta["obs_dim"])),
        jnp.zeros((1, 1), bool),
        jnp.ones((1, 1, meta["n_actions"]), bool),
    )
    data = (path / "actor.msgpack").read_bytes()
    if hashlib.sha256(data).hexdigest() != meta["actor_sha256"]:
        raise CheckpointError(f"{path / 'actor.msgpack'} does not match the checksum in meta.json")
    try:
        params = serialization.from_bytes(template, data)
    except (ValueError, KeyError) as e:
        raise CheckpointError(
            f"{path / 'actor.msgpack'}: does not fit the network in meta.json ({e})"
        ) from None
    return params, meta


def load_train_state(path: Path, template: dict[str, Any], cfg: MappoConfig) -> tuple[dict, dict]:
    """Restore a training state to resume; refuses a checkpoint of another env or shape."""
    meta = read_meta(path)
    saved = MappoConfig(**_yaml(path / "config.yaml"))
    for key in ("env", "num_envs", "hidden", "max_episode_steps", "epo"):
        if getattr(saved, key) != getattr(cfg, key):
            raise CheckpointError(
                f"cannot resume {path}: it has {key}={getattr(saved, key)!r}, the config {getattr(cfg, key)!r}"
            )
    st = serialization.from_bytes(template, (path / "train_state.msgpack").read_bytes())
    return st, meta


def _yaml(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text()) or {}
