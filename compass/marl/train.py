"""The MAPPO trainer: vmapped rollouts and the PPO update in one jitted function per update.

``train(cfg, out)`` runs ``cfg.num_updates`` updates, each ``num_envs x num_steps`` env steps,
checkpoints every ``checkpoint_every`` updates (and at the end), resumes from ``out`` when a
checkpoint is there, and finishes with a greedy evaluation on held-out seeds. Everything it
writes is in ``out``: ``checkpoint/`` (see :mod:`compass.marl.checkpoint`), ``metrics.jsonl`` (one
line per update) and ``eval.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from compass.marl.checkpoint import load_train_state, save_checkpoint
from compass.marl.config import MappoConfig
from compass.marl.envs import MarlEnv, make_marl_env
from compass.marl.networks import Actor, Critic, init_carry
from compass.marl.ppo import clipped_policy_loss, clipped_value_loss, entropy, gae

#: held-out evaluation episodes use keys from this offset on (training keys derive from ``cfg.seed``)
EVAL_SEED_OFFSET = 1_000_000


@dataclass(eq=False)  # hashed by identity: jit treats the trainer as a static argument
class Trainer:
    """Networks, optimiser and jitted functions for one config and env."""

    cfg: MappoConfig
    env: MarlEnv
    actor: Actor
    critic: Critic
    tx: optax.GradientTransformation

    @classmethod
    def build(cls, cfg: MappoConfig, env: MarlEnv | None = None) -> Trainer:
        env = env or make_marl_env(cfg.env, cfg.max_episode_steps, cfg.epo)
        n_minibatch_updates = cfg.update_epochs * cfg.num_minibatches

        def schedule(count):
            frac = 1.0 - (count // n_minibatch_updates) / cfg.num_updates
            return cfg.lr * frac if cfg.anneal_lr else cfg.lr

        tx = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(schedule, eps=1e-5))
        return cls(cfg, env, Actor(env.n_actions, cfg.hidden), Critic(cfg.hidden), tx)

    # --- state ------------------------------------------------------------------------------

    def init(self, key) -> dict[str, Any]:
        """A fresh training state: parameters, optimiser state, envs, hidden state, key."""
        cfg, env = self.cfg, self.env
        k_a, k_c, k_env, key = jax.random.split(key, 4)
        b = cfg.num_envs * env.n_agents
        actor_params = self.actor.init(
            k_a,
            init_carry(b, cfg.hidden),
            jnp.zeros((1, b, env.obs_dim)),
            jnp.zeros((1, b), bool),
            jnp.ones((1, b, env.n_actions), bool),
        )
        critic_params = self.critic.init(k_c, jnp.zeros((b, env.world_dim + env.obs_dim)))
        params = {"actor": actor_params, "critic": critic_params}
        obs, es = jax.vmap(env.reset)(jax.random.split(k_env, cfg.num_envs))
        st = {
            "params": params,
            "opt_state": self.tx.init(params),
            "env_state": es,
            "obs": obs,
            "done": jnp.zeros(cfg.num_envs, bool),
            "hidden": init_carry(b, cfg.hidden),
            "ep_return": jnp.zeros(cfg.num_envs),
            "key": key,
            "update": jnp.asarray(0, jnp.int32),
        }
        # Weakly typed leaves (from env resets) would make the second update compile again.
        return jax.tree.map(lambda x: jnp.asarray(x, dtype=x.dtype), st)

    # --- one update ---------------------------------------------------------------------------

    def _critic_in(self, obs):
        """(E, A, D) obs + (E, S) world -> (E*A, S+D)."""
        e, a, _ = obs.obs.shape
        world = jnp.broadcast_to(obs.world[:, None, :], (e, a, obs.world.shape[-1]))
        return jnp.concatenate([world, obs.obs], -1).reshape(e * a, -1)

    # No buffer donation: with jax 0.4.38 on CPU an update loaded from the persistent compilation
    # cache segfaults when its input is donated (reproduced here); the copy costs a few MB.
    @partial(jax.jit, static_argnums=0)
    def update(self, st: dict[str, Any]):
        """Collect ``num_steps`` x ``num_envs`` steps, then ``update_epochs`` of minibatch PPO."""
        cfg, env = self.cfg, self.env
        e, a = cfg.num_envs, env.n_agents
        params = st["params"]

        def env_step(carry, _):
            es, obs, done, h, ep_ret, key = carry
            key, k_act, k_env = jax.random.split(key, 3)
            x = obs.obs.reshape(1, e * a, -1)
            d_in = jnp.repeat(done, a)
            av = obs.avail.reshape(1, e * a, -1)
            h2, logits = self.actor.apply(params["actor"], h, x, d_in[None], av)
            action = jax.random.categorical(k_act, logits[0])
            logp = jax.nn.log_softmax(logits[0])[jnp.arange(e * a), action]
            cin = self._critic_in(obs)
            value = self.critic.apply(params["critic"], cin)
            obs2, es2, reward, done2, won, _ = jax.vmap(env.step)(
                jax.random.split(k_env, e), es, action.reshape(e, a)
            )
            ep_ret = ep_ret + reward[:, 0]
            stats = jnp.stack([done2.sum(), (won & done2).sum(), jnp.where(done2, ep_ret, 0.0).sum()])
            tr = {
                "obs": x[0],
                "avail": av[0],
                "done_in": d_in,
                "action": action,
                "logp": logp,
                "value": value,
                "reward": reward.reshape(e * a),
                "done": jnp.repeat(done2, a),
                "cin": cin,
            }
            return (es2, obs2, done2, h2, jnp.where(done2, 0.0, ep_ret), key), (tr, stats)

        h0 = st["hidden"]
        carry = (st["env_state"], st["obs"], st["done"], h0, st["ep_return"], st["key"])
        carry, (traj, stats) = jax.lax.scan(env_step, carry, None, cfg.num_steps)
        es, obs, done, h_last, ep_ret, key = carry
        last_value = self.critic.apply(params["critic"], self._critic_in(obs))
        adv, targets = gae(traj["reward"], traj["value"], traj["done"], last_value, cfg.gamma, cfg.gae_lambda)

        def loss_fn(p, mb):
            _, logits = self.actor.apply(p["actor"], mb["h0"], mb["obs"], mb["done_in"], mb["avail"])
            logp_all = jax.nn.log_softmax(logits)
            logp = jnp.take_along_axis(logp_all, mb["action"][..., None], -1)[..., 0]
            adv_n = (mb["adv"] - mb["adv"].mean()) / (mb["adv"].std() + 1e-8)
            pl = clipped_policy_loss(logp, mb["logp"], adv_n, cfg.clip_eps)
            value = self.critic.apply(p["critic"], mb["cin"])
            vl = clipped_value_loss(value, mb["value"], mb["targets"], cfg.clip_eps)
            ent = entropy(logits).mean()
            return pl + cfg.vf_coef * vl - cfg.ent_coef * ent, (pl, vl, ent)

        data = {**traj, "adv": adv, "targets": targets}
        n_seq = e * a
        mb_size = n_seq // cfg.num_minibatches

        def epoch(carry, k):
            p, opt = carry
            perm = jax.random.permutation(k, n_seq)[: mb_size * cfg.num_minibatches]
            perm = perm.reshape(cfg.num_minibatches, mb_size)

            def minibatch(carry, idx):
                p, opt = carry
                mb = {key_: v[:, idx] for key_, v in data.items()}
                mb["h0"] = h0[idx]
                (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, mb)
                upd, opt = self.tx.update(grads, opt, p)
                return (optax.apply_updates(p, upd), opt), jnp.stack([loss, *aux])

            (p, opt), losses = jax.lax.scan(minibatch, (p, opt), perm)
            return (p, opt), losses

        key, k_epochs = jax.random.split(key)
        (params, opt_state), losses = jax.lax.scan(
            epoch, (params, st["opt_state"]), jax.random.split(k_epochs, cfg.update_epochs)
        )
        s = stats.sum(0)
        metrics = {
            "episodes": s[0],
            "wins": s[1],
            "return_sum": s[2],
            "loss": losses[..., 0].mean(),
            "policy_loss": losses[..., 1].mean(),
            "value_loss": losses[..., 2].mean(),
            "entropy": losses[..., 3].mean(),
        }
        new = {
            "params": params,
            "opt_state": opt_state,
            "env_state": es,
            "obs": obs,
            "done": done,
            "hidden": h_last,
            "ep_return": ep_ret,
            "key": key,
            "update": st["update"] + 1,
        }
        return new, metrics

    # --- greedy evaluation ------------------------------------------------------------------

    @partial(jax.jit, static_argnums=(0, 3, 4))
    def _evaluate(self, actor_params, keys, n_steps: int, uniform: bool = False):
        env, cfg = self.env, self.cfg
        n = keys.shape[0]
        a = env.n_agents
        obs, es = jax.vmap(env.reset)(keys)

        def step(carry, k):
            es, obs, h, finished, won, ret, length = carry
            x = obs.obs.reshape(1, n * a, -1)
            av = obs.avail.reshape(1, n * a, -1)
            h, logits = self.actor.apply(actor_params, h, x, jnp.zeros((1, n * a), bool), av)
            k_act, k = jax.random.split(k)
            if uniform:  # the random baseline: a legal action uniformly at random
                action = jax.random.categorical(k_act, jnp.where(av[0], 0.0, -1e10)).reshape(n, a)
            else:
                action = jnp.argmax(logits[0], -1).reshape(n, a)
            obs, es, reward, done, w, t = jax.vmap(env.step)(jax.random.split(k, n), es, action)
            live = ~finished
            ret = ret + jnp.where(live, reward[:, 0], 0.0)
            won = won | (live & done & w)
            length = jnp.where(live & done, t, length)
            return (es, obs, h, finished | done, won, ret, length), None

        carry = (
            es,
            obs,
            init_carry(n * a, cfg.hidden),
            jnp.zeros(n, bool),
            jnp.zeros(n, bool),
            jnp.zeros(n),
            jnp.zeros(n, jnp.int32),
        )
        ks = jax.random.split(jax.random.PRNGKey(0), n_steps)
        (_, _, _, finished, won, ret, length), _ = jax.lax.scan(step, carry, ks)
        return finished, won, ret, length

    def evaluate(
        self, actor_params, episodes: int, seed_offset: int = EVAL_SEED_OFFSET, uniform: bool = False
    ) -> dict[str, Any]:
        """Greedy (argmax) episodes on held-out seeds ``seed_offset + i``; win rate with a 95% CI.

        ``uniform=True`` plays uniformly random legal actions instead (the baseline to beat)."""
        from compass.eval.stats import wilson_interval

        keys = jnp.stack([jax.random.PRNGKey(seed_offset + i) for i in range(episodes)])
        finished, won, ret, length = jax.device_get(
            self._evaluate(actor_params, keys, self.cfg.max_episode_steps, uniform)
        )
        wins = int(won.sum())
        lo, hi = wilson_interval(wins, episodes)
        return {
            "episodes": episodes,
            "seeds": f"{seed_offset}..{seed_offset + episodes - 1}",
            "wins": wins,
            "win_rate": wins / episodes,
            "win_rate_ci95": [lo, hi],
            "mean_return": float(np.mean(ret)),
            "mean_length": float(np.mean(length)),
        }


def device_description() -> str:
    d = jax.devices()[0]
    return f"{d.platform}:{getattr(d, 'device_kind', d)}"


def train(
    cfg: MappoConfig,
    out: str | Path,
    on_update: Callable[[dict[str, Any]], None] | None = None,
    resume: bool = True,
) -> dict[str, Any]:
    """Train (or resume) into ``out``; returns the final summary (also ``out/eval.json``)."""
    from compass.util.jax_cache import enable_jax_cache

    enable_jax_cache()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    trainer = Trainer.build(cfg)
    st = trainer.init(jax.random.PRNGKey(cfg.seed))
    metrics_path = out / "metrics.jsonl"
    elapsed_before = 0.0
    if resume and (out / "checkpoint" / "train_state.msgpack").exists():
        st, info = load_train_state(out / "checkpoint", st, cfg)
        elapsed_before = info.get("train_seconds", 0.0)
    elif metrics_path.exists():
        metrics_path.unlink()  # a fresh run: old curves would mix with the new ones
    start_update = int(st["update"])
    t_start = time.perf_counter()
    last_ckpt = start_update
    with open(metrics_path, "a", encoding="utf-8") as mf:
        for u in range(start_update, cfg.num_updates):
            t0 = time.perf_counter()
            st, m = trainer.update(st)
            m = jax.device_get(m)
            dt = time.perf_counter() - t0
            eps = int(m["episodes"])
            row = {
                "update": u + 1,
                "steps": (u + 1) * cfg.steps_per_update,
                "seconds": round(dt, 3),
                "steps_per_s": round(cfg.steps_per_update / dt, 1),
                "episodes": eps,
                "win_rate": round(float(m["wins"]) / eps, 4) if eps else None,
                "return": round(float(m["return_sum"]) / eps, 4) if eps else None,
                **{k: round(float(m[k]), 5) for k in ("loss", "policy_loss", "value_loss", "entropy")},
            }
            mf.write(json.dumps(row) + "\n")
            mf.flush()
            if on_update is not None:
                on_update(row)
            if (u + 1) % cfg.checkpoint_every == 0 or u + 1 == cfg.num_updates:
                save_checkpoint(
                    out / "checkpoint",
                    st,
                    trainer,
                    train_seconds=elapsed_before + time.perf_counter() - t_start,
                    device=device_description(),
                )
                last_ckpt = u + 1
    if last_ckpt != int(st["update"]):
        save_checkpoint(out / "checkpoint", st, trainer, elapsed_before + time.perf_counter() - t_start)
    summary = {
        "env": cfg.env,
        "steps": int(st["update"]) * cfg.steps_per_update,
        "updates": int(st["update"]),
        "train_seconds": round(elapsed_before + time.perf_counter() - t_start, 1),
        "device": device_description(),
        "seed": cfg.seed,
    }
    if cfg.eval_episodes:
        summary["greedy_eval"] = trainer.evaluate(st["params"]["actor"], cfg.eval_episodes)
    from compass.util.atomic import atomic_write_json

    atomic_write_json(out / "eval.json", summary)
    return summary
