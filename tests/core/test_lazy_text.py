"""Texts are written only when read, and skills that only ``parse_obs`` their argument never need them.

What a user would notice if this broke: a different trace for the same seed (a skill served
other data than its text says), or texts that disagree with the entities they describe.
"""

from __future__ import annotations

import pickle

import pytest

from compass.comm import CommProtocol
from compass.config import RunConfig
from compass.core.types import CURRENT_OBS
from compass.episode.session import run
from compass.games.combat.smax import SmaxEnv
from compass.games.combat.text import render_combat_text
from compass.sandbox import SkillExecutor, compile_skill
from compass.skills.library import SkillLibrary


@pytest.fixture(scope="module")
def smax_views():
    env = SmaxEnv("protoss_5_vs_5")
    views = env.reset(3)
    for _ in range(25):  # close enough that units see each other and relays exist
        views = env.step([1] * env.n_agents).views
    return views


def test_text_is_written_on_first_read_and_equals_the_eager_render(smax_views):
    calls = []
    v = smax_views[0]

    def counting(view):
        calls.append(view)
        return render_combat_text(view)

    v.text_fn = counting
    v.text = None
    lazy = v.with_entities(v.entities)
    assert calls == []  # nothing read yet: nothing rendered
    assert lazy.text == render_combat_text(lazy)
    assert lazy.text == render_combat_text(lazy) and len(calls) == 1  # written once, then kept
    v.text_fn = render_combat_text


def test_relayed_copy_renders_its_own_entities():
    env, comm = SmaxEnv("protoss_5_vs_5"), CommProtocol("multihop", seed=0)
    views, found = env.reset(3), []
    for t in range(60):  # walk north until some agent knows a unit it does not see
        comm.exchange(t, views)
        found = [(v, r) for v in views if v.alive for r in [comm.relayed_for(v.agent_id, v)] if r]
        if found:
            break
        views = env.step([2] * env.n_agents).views
    v, extra = found[0]
    base_text = v.text
    copy = v.with_entities(v.entities + tuple(extra))
    assert copy.text != base_text and copy.text == render_combat_text(copy)
    assert v.text == base_text  # the original keeps its own text


def test_lazy_views_pickle_with_their_text(smax_views):
    v = smax_views[1].with_entities(smax_views[1].entities)
    text = render_combat_text(v)
    v.render = v.text_fn = None  # callables do not cross processes
    v.text = text
    assert pickle.loads(pickle.dumps(v)).text == text


@pytest.mark.parametrize(
    ("body", "reads"),
    [
        ("return parse_obs(obs).step", False),
        ("d = parse_obs(obs)\n    return default_action(obs)", False),
        ("return 1 if 'enemy' in obs else 0", True),
        ("return len(obs[:3])", True),
        ("parse_obs = str.upper\n    return len(parse_obs(obs))", True),
        ("f = lambda: obs\n    return 1", True),
        ("def g(obs):\n        return obs\n    return g(1)", True),
        ("return parse_obs(obs=obs).step", True),
        ("return parse_obs(obs.strip()).step", True),
    ],
)
def test_reads_text_is_conservative(body, reads):
    skill = compile_skill(f"def s(obs):\n    {body}\n", "s", "combat")
    assert skill.reads_text is reads


def test_a_parse_obs_only_skill_acts_as_if_given_its_text(smax_views):
    """The same skill, once handed CURRENT_OBS and once its text, takes the same actions."""
    lib = SkillLibrary(None, "combat")
    skill = lib.compiled["race_adaptive_combat"]
    assert not skill.reads_text
    texted = compile_skill(
        skill.source.replace("parse_obs(obs)", "parse_obs(obs + '')"), skill.name, "combat"
    )
    assert texted.reads_text
    a = SkillExecutor("compass.games.combat.skill_api", seed=5)
    b = SkillExecutor("compass.games.combat.skill_api", seed=5)
    for v in smax_views:
        ra, rb = a.run(skill, v), b.run(texted, v)
        assert (ra.action, ra.error) == (rb.action, rb.error)
    assert CURRENT_OBS == "current"


def test_trace_is_the_same_when_every_skill_reads_its_text(tmp_path, monkeypatch):
    """A run whose skills are all handed their texts (as before texts were lazy) writes the same bytes."""
    cfg = dict(env="smax:zerg_5_vs_5", seed=4, out=tmp_path, max_steps=40, isolation="inprocess")
    run(RunConfig(run_id="lazy", **cfg))
    import compass.sandbox.runtime as runtime

    monkeypatch.setattr(runtime, "reads_text", lambda func: True)
    run(RunConfig(run_id="eager", **cfg))
    lazy = (tmp_path / "lazy" / "trace.jsonl").read_bytes()
    assert lazy == (tmp_path / "eager" / "trace.jsonl").read_bytes()
