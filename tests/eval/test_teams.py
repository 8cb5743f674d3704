"""Heterogeneous teams: every controller kind drives units of our team and of the enemy team."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

from compass.eval.driver import prepare, run_eval
from compass.eval.episode import EpisodeError, play_episode
from compass.eval.spec import parse_spec
from compass.vlm import tokens as vlm_tokens
from tests.fakes.fake_vlm_server import FakeVLMServer
from tests.planner.scripted import ScriptedVLM

NORTH = 0  # SMAX's native "move north"


class TinyPolicy:
    """A real (if tiny) linear policy over SMAX observation vectors: argmax(obs @ W + b) among the
    available actions, loaded from ``policy.npz``; it records what it was given."""

    loaded: list[TinyPolicy] = []

    def __init__(self, ckpt: str) -> None:
        data = np.load(Path(ckpt) / "policy.npz")
        self.w, self.b = data["w"], data["b"]
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []
        self.resets: list[int] = []
        TinyPolicy.loaded.append(self)

    def reset(self, n_agents: int) -> None:
        self.resets.append(n_agents)

    def act(self, obs: np.ndarray, avail: np.ndarray) -> np.ndarray:
        self.calls.append((obs.copy(), avail.copy()))
        logits = obs @ self.w[: obs.shape[1], : avail.shape[1]] + self.b[: avail.shape[1]]
        return np.where(avail > 0, logits, -np.inf).argmax(axis=1)


@pytest.fixture
def mappo_ckpt(tmp_path, monkeypatch) -> Path:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    b = np.zeros(16)
    b[NORTH] = 1.0  # prefers moving north whenever it may
    np.savez(ckpt / "policy.npz", w=np.zeros((256, 16)), b=b)
    module = types.ModuleType("compass.marl.policy")
    module.load_policy = TinyPolicy
    monkeypatch.setitem(sys.modules, "compass.marl.policy", module)
    TinyPolicy.loaded = []
    monkeypatch.setattr(vlm_tokens, "_encoding", lambda name: None)  # no BPE downloads
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return ckpt


SPEC = """\
name: teams
envs: [smax:protoss_5_vs_5]
seeds: [3]
max_steps: 12
base: {{planner: library, decision_interval: 4, vlm: "{vlm}"}}
configs:
  - name: every-kind
    team: "0 vlm, 1 library, 2 skill:focus_fire, 3 random, 4 mappo:{ckpt}"
    enemy: "0 heuristic, 1 random, 2 skill:kite_melee, 3 library, 4 mappo:{ckpt}"
  - name: scripted
    team: heuristic
    enemy: "0-4 heuristic"
"""


@pytest.mark.slow
def test_every_controller_kind_on_both_teams(mappo_ckpt, tmp_path):
    script = ScriptedVLM(synth_agent=-1)
    with FakeVLMServer(responder=lambda request: script(request.text)) as server:
        text = SPEC.format(vlm=server.spec("openai", "test-model"), ckpt=mappo_ckpt)
        rows = run_eval(prepare(parse_spec(text, "teams.yaml"), tmp_path), 1)
        requests = list(server.requests)
    by = {r["config"]: r for r in rows}
    mixed, scripted = by["every-kind"], by["scripted"]

    # the VLM drives unit 0 only: calls and tokens are accounted on the row
    assert requests and mixed["vlm_calls"] == len(requests) and mixed["prompt_tokens"] > 0
    # library (race_adaptive_combat) and the fixed skill ran; nothing ran skills for units 3 and 4
    used = mixed["extra"]["skills_used"]
    assert used.get("focus_fire", 0) >= 11 and used.get("race_adaptive_combat", 0) >= 11
    assert sum(used.values()) <= 3 * mixed["steps"]

    # one MAPPO policy per team, fed SMAX's own observation vectors every step
    ours, theirs = TinyPolicy.loaded
    assert ours.resets == [5] and theirs.resets == [5]
    assert len(ours.calls) == len(theirs.calls) == mixed["steps"]
    obs, avail = ours.calls[0]
    assert obs.shape[0] == 5 and avail.shape == (5, 10)
    # ... and its actions reach the game: unit 4 (the one it drives) walks north up to the map edge,
    # where moving on is not offered and it stops
    n_own = 4 + 6  # SMAX's own features: health, x, y, cooldown, one-hot unit type (6 types)
    y = [o[4, obs.shape[1] - n_own + 2] for o, _ in ours.calls if o[4].any()]
    assert len(y) > 5 and all(b > a for a, b in zip(y[:4], y[1:5], strict=True))
    assert all(b >= a for a, b in zip(y, y[1:], strict=False)) and y[-1] > 0.9
    # unit 1 (the library one) does not just walk north
    y1 = [o[1, obs.shape[1] - n_own + 2] for o, _ in ours.calls if o[1].any()]
    assert not all(b > a for a, b in zip(y1, y1[1:], strict=False))

    # a team with no compass unit makes no decisions and runs no skills
    assert scripted["decisions"] == 0 and scripted["extra"]["skills_used"] == {}
    assert scripted["vlm_calls"] == 0


@pytest.mark.slow
def test_a_unit_that_does_not_exist_is_a_clear_error(tmp_path):
    plan = parse_spec(
        "seeds: 1\nmax_steps: 3\nconfigs:\n  - {name: a, team: '0-4 library, 5-6 random'}\n", "x.yaml"
    )
    with pytest.raises(EpisodeError) as e:
        play_episode(plan.jobs()[0])
    assert e.value.user_error
    assert (
        "config 'a', smax:protoss_5_vs_5, seed 0: ValueError: team: unit 5 does not exist (units 0-4)"
        in str(e.value)
    )


def test_team_spec_parsing():
    from compass.eval.controllers import parse_team, resolve

    team = parse_team("0-2 compass, 3 mappo:ckpt/a, 4 skill:kite_melee")
    assert [str(a) for a in team] == ["0+1+2 compass", "3 mappo:ckpt/a", "4 skill:kite_melee"]
    units = resolve(team, 5, "team")
    assert units[4].kind == "skill" and units[4].arg == "kite_melee"
    with pytest.raises(ValueError, match="no controller for unit"):
        resolve(parse_team("0-2 compass"), 5, "team")
    with pytest.raises(ValueError, match="needs its units"):
        parse_team("compass, 3 random")
    with pytest.raises(ValueError, match="skill needs a skill name"):
        parse_team("skill")


REAL_CKPT = Path(__file__).resolve().parents[2] / "demos" / "protoss_5_vs_5" / "checkpoint"

REAL_SPEC = f"""\
name: real-mappo
envs: [smax:protoss_5_vs_5]
seeds: [0, 1]
max_steps: 30
configs:
  - name: mappo
    team: "0-4 mappo:{REAL_CKPT}"
  - name: library
    planner: library
"""


@pytest.mark.slow
def test_shipped_mappo_checkpoint_drives_a_team(tmp_path):
    """The real protoss demonstrator (``demos/``) through ``compass.marl.policy.load_policy``."""
    from compass.marl.policy import load_policy

    policy = load_policy(REAL_CKPT)
    policy.reset(5)
    obs = np.zeros((5, policy.meta["obs_dim"]), np.float32)
    avail = np.zeros((5, policy.meta["n_actions"]), bool)
    avail[:, 4] = True  # only "stop" is legal: a greedy policy must pick it
    assert policy.act(obs, avail).tolist() == [4] * 5

    rows = run_eval(prepare(parse_spec(REAL_SPEC, "real.yaml"), tmp_path), 1)
    by = {(r["config"], r["seed"]): r for r in rows}
    assert len(by) == 4
    for seed in (0, 1):
        mappo = by[("mappo", seed)]
        assert mappo["decisions"] == 0 and mappo["extra"]["skills_used"] == {}  # no skill ran
        assert mappo["steps"] > 1 and mappo["outcome"] in {"win", "loss", "timeout"}


TRACED_SPEC = """\
name: traced
envs: [smax:protoss_5_vs_5]
seeds: [0, 1]
max_steps: 10
traces: true
base: {planner: library, decision_interval: 4}
configs:
  - {name: mixed, team: "0-2 library, 3-4 heuristic"}
"""


@pytest.mark.slow
@pytest.mark.parametrize("batched", [False, True])
def test_trace_records_the_actions_controllers_played(tmp_path, monkeypatch, batched):
    """Units driven by a controller (here SMAX's heuristic) are traced with the actions the game
    was given for them, played alone or in a batch, not a placeholder 0."""
    import json
    from collections import defaultdict

    from compass.eval.episode import play_batch
    from compass.games.combat.smax import SmaxEnv

    episodes: list[list[list[int]]] = []  # per episode (env reset): each step's actions
    current: dict[int, list[list[int]]] = defaultdict(list)  # env -> its episode's list
    reset, step_begin = SmaxEnv.reset, SmaxEnv.step_begin

    def spy_reset(self, seed):
        current[id(self)] = []
        episodes.append(current[id(self)])
        return reset(self, seed)

    def spy_step(self, actions):
        current[id(self)].append([int(a) for a in actions])
        return step_begin(self, actions)

    monkeypatch.setattr(SmaxEnv, "reset", spy_reset)
    monkeypatch.setattr(SmaxEnv, "step_begin", spy_step)
    jobs = parse_spec(TRACED_SPEC, "traced.yaml").jobs(tmp_path)
    if batched:
        play_batch(jobs)
    else:
        for j in jobs:
            play_episode(j)
    traced = []
    for path in sorted(tmp_path.rglob("trace.jsonl")):
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        traced.append([x["actions"] for x in lines if x["kind"] == "step"])
    played = [e for e in episodes if len(e) > 1]  # not the worker's warm-up (a reset and one step)
    assert len(traced) == 2 and sorted(traced) == sorted(played)
    # the heuristic units moved and attacked: not the no-op 0 every step
    assert any(a[3] != 0 or a[4] != 0 for steps in traced for a in steps)
