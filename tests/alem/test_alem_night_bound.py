"""benchmarks/alem_night_bound.py: the overworld made safe under a skill file, the bound a planner
reads before designing another night change (docs/alem.md "What surviving the nights is worth")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from alem_testlib import LIBRARY, needs_alem

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bound(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its siblings
    import alem_night_bound

    return alem_night_bound


def test_the_night_window_is_the_librarys(bound):
    # --calm night bounds the library's own shelter hours: the window must follow the skill file.
    text = (LIBRARY / "alem_role_policy.py").read_text()
    found = {k: int(v) for k, v in re.findall(r"^    (dusk|dawn) = (\d+)", text, re.M)}
    assert found == {"dusk": bound.DUSK, "dawn": bound.DAWN}
    assert "d.light < 0.35" in text and bound.DARK == 0.35


@needs_alem
def test_calm_takes_out_the_overworlds_creatures_and_keeps_its_cows(bound):
    """Hard tuning seed 0, every agent idle until a zombie or skeleton stands on the overworld:
    after ``calm`` none is left, nor its mark on the mob map, while every cow keeps its mark; by day
    the night oracle finds nothing to do, the always oracle does."""
    import jax

    from compass.games.alem.env import make_alem

    env = make_alem("hard", max_steps=300, text=False)
    assert env._c.env_params.day_length == bound.DAY_LENGTH
    env.reset(0)
    for _ in range(100):
        s = env.numpy_state
        if s.melee_mobs.mask[0].any() or s.ranged_mobs.mask[0].any():
            break
        env.step([0, 0, 0])
    else:
        pytest.fail("no creature on the overworld within 100 idle steps")
    assert int(s.timestep) % bound.DAY_LENGTH < bound.DUSK  # daytime
    assert bound.calm_needed(s, "always") and not bound.calm_needed(s, "night")
    after = jax.device_get(bound._calm_fn()(env._state))
    assert not after.melee_mobs.mask[0].any() and not after.ranged_mobs.mask[0].any()
    assert not after.mob_projectiles.mask[0].any()
    cows = np.zeros_like(after.mob_map[0])
    pos = s.passive_mobs.position[0][s.passive_mobs.mask[0]]
    cows[pos[:, 0], pos[:, 1]] = True
    assert cows.any() and (np.asarray(after.mob_map[0]) == cows).all()
    # The levels below are left alone.
    assert (np.asarray(after.melee_mobs.mask[1:]) == s.melee_mobs.mask[1:]).all()


@needs_alem
@pytest.mark.slow
def test_the_night_oracle_changes_nothing_before_dusk_and_the_always_one_does(bound, tmp_path, capfd):
    """Hard tuning seed 0, 110 steps (all before the library's dusk at 120), the library: against
    the unchanged game's rows, ``--calm night`` gives the very same episode; ``--calm always``
    takes creatures out of it and says on how many steps."""
    import alem_variants

    lib = str(LIBRARY / "alem_role_policy.py")
    ref = tmp_path / "main.json"
    alem_variants.main([f"main={lib}", "--seeds", "0", "--steps", "110", "--out", str(ref)])
    common = [lib, "--against", f"{ref}:main", "--seeds", "0", "--steps", "110"]
    bound.main([*common, "--calm", "night", "--out", str(tmp_path / "night.json")])
    night = json.loads((tmp_path / "night.json").read_text())["variants"]["calm_night"]["rows"]
    (main_row,) = json.loads(ref.read_text())["variants"]["main"]["rows"]
    assert night[0]["calmed_steps"] == 0
    assert {k: v for k, v in night[0].items() if k != "calmed_steps"} == main_row
    assert "seed 0:" not in capfd.readouterr().out  # no episode listed as changed
    bound.main([*common, "--calm", "always", "--out", str(tmp_path / "always.json")])
    report = json.loads((tmp_path / "always.json").read_text())
    assert report["calm"] == "always" and report["against"]["label"] == "main"
    assert report["variants"]["calm_always"]["rows"][0]["calmed_steps"] > 0
