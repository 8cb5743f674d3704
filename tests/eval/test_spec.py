"""Experiment specs: grids expand to named configurations; every error names file, line and field."""

from __future__ import annotations

import pytest

from compass.eval.spec import SpecError, parse_spec

GOOD = """\
name: abl
envs: [smax:protoss_5_vs_5, smax:zerg_5_vs_5]
seeds: {start: 100, count: 3}
base: {planner: library, epo: true}
configs:
  - {name: lib}
  - name: het
    team: "0-2 compass, 3-4 random"
    enemy: library
grid:
  comm: [none, onehop, multihop]
"""


def test_grid_expands_per_configuration_with_readable_names():
    plan = parse_spec(GOOD, "abl.yaml")
    names = [c.name for c in plan.configs]
    assert names == [
        "lib/comm=none",
        "lib/comm=onehop",
        "lib/comm=multihop",
        "het/comm=none",
        "het/comm=onehop",
        "het/comm=multihop",
    ]
    assert all(c.epo and c.planner == "library" for c in plan.configs)
    assert plan.seeds == (100, 101, 102)
    assert len(plan.jobs()) == 6 * 2 * 3
    assert plan.configs[3].team == "0-2 compass, 3-4 random"


def test_command_line_overrides_seeds_and_workers():
    plan = parse_spec(GOOD, "abl.yaml", seeds=7, workers=3)
    assert plan.seeds == tuple(range(7)) and plan.workers == 3


def test_a_changed_setting_changes_the_configuration_key():
    a = parse_spec(GOOD, "abl.yaml").configs[0]
    b = parse_spec(GOOD.replace("epo: true", "epo: false"), "abl.yaml").configs[0]
    assert a.name == b.name and a.key() != b.key()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # unknown field inside the second configuration: its own line
        (
            "configs:\n  - {name: a}\n  - name: b\n    comms: none\n",
            "s.yaml:4: configs[1].comms: unknown field",
        ),
        # a near miss of a field's name says which was meant
        ("envs: [smax:protoss_5_vs_5]\nseed: 1\n", "s.yaml:2: seed: unknown field (did you mean 'seeds'?)"),
        ("base:\n  planer: library\n", "s.yaml:2: base.planer: unknown field (did you mean 'planner'?)"),
        ("configs:\n  - {name: a, comms: none}\n", "configs[0].comms: unknown field (did you mean 'comm'?)"),
        # a bad value in a grid: the line of that grid entry
        ("grid:\n  comm:\n    - none\n    - twohop\n", "s.yaml:4: grid.comm[1]: "),
        ("envs: [smax:protoss_5_vs_5]\nseeds: 0\n", "s.yaml:2: seeds: "),
        ("envs:\n  - smax:protoss_9_vs_9\n", "unknown scenario 'protoss_9_vs_9'"),
        ("envs:\n  - starcraft:x\n", "unknown environment 'starcraft'"),
        ("base:\n  planner: gpt\n", "s.yaml:2: base.planner: "),
        (
            "configs:\n  - name: a\n    team: 0-2 compass, 2-4 random\n",
            "s.yaml:3: configs[0].team: unit 2 is assigned twice",
        ),
        (
            "configs:\n  - name: a\n    enemy: 0-4 wizard\n",
            "s.yaml:3: configs[0].enemy: unknown controller 'wizard'",
        ),
        ("configs:\n  - name: a\n    seed: 3\n", "s.yaml:3: configs[0].seed: seed is set by the eval"),
        ("envs: [smax:protoss_5_vs_5\n", "s.yaml:2: not valid YAML"),
        ("workers: many\n", "s.yaml:1: workers: "),
    ],
)
def test_errors_point_at_file_line_and_field(text, expected):
    with pytest.raises(SpecError) as e:
        parse_spec(text, "s.yaml")
    assert expected in str(e.value)
    assert "\n" not in str(e.value)


def test_duplicate_configuration_names_are_refused():
    with pytest.raises(SpecError, match="s.yaml:3: configs\\[1\\]: two configurations are both named 'a'"):
        parse_spec("configs:\n  - {name: a}\n  - {name: a, comm: none}\n", "s.yaml")


def test_scenario_placeholder_names_a_checkpoint_per_env():
    plan = parse_spec(
        "envs: [smax:protoss_5_vs_5, smax:zerg_5_vs_6]\nseeds: 1\n"
        "configs:\n  - {name: m, team: 'mappo:demos/{scenario}_epo/checkpoint', enemy: default}\n"
    )
    teams = [(job.env, job.config_fields["team"]) for job in plan.jobs()]
    assert teams == [
        ("smax:protoss_5_vs_5", "mappo:demos/protoss_5_vs_5_epo/checkpoint"),
        ("smax:zerg_5_vs_6", "mappo:demos/zerg_5_vs_6_epo/checkpoint"),
    ]


def test_table2_spec_is_the_papers_grid_under_epo():
    from pathlib import Path

    from compass.eval.spec import load_spec

    plan = load_spec(Path(__file__).resolve().parents[2] / "examples" / "eval" / "table2.yaml")
    races = {e.split(":")[1].split("_")[0] for e in plan.envs}
    sizes = {e.split("_", 1)[1] for e in plan.envs}
    assert races == {"protoss", "terran", "zerg"} and sizes == {"5_vs_5", "5_vs_6"}
    assert len(plan.seeds) >= 40 and all(c.epo for c in plan.configs)
    library = sorted(c.comm for c in plan.configs if c.planner == "library" and c.team == "compass")
    assert library == ["multihop", "none", "onehop"]
    assert {c.team for c in plan.configs} >= {"heuristic", "mappo:demos/{scenario}_epo/checkpoint"}


def test_table2_mappo_checkpoints_are_shipped_and_trained_under_epo():
    """Every scenario of the Table 2 spec has its MAPPO checkpoint, trained under EPO on that
    scenario (a checkpoint trained without ``--epo`` would be played under EPO unnoticed)."""
    import json
    from pathlib import Path

    from compass.eval.spec import for_env, load_spec

    root = Path(__file__).resolve().parents[2]
    plan = load_spec(root / "examples" / "eval" / "table2.yaml")
    (mappo,) = [c for c in plan.configs if c.team.startswith("mappo:")]
    for env in plan.envs:
        ckpt = root / for_env({"team": mappo.team}, env)["team"].removeprefix("mappo:")
        meta = json.loads((ckpt / "meta.json").read_text())
        assert (meta["env"], meta["epo"]) == (env, True), ckpt
        assert (ckpt / "actor.msgpack").is_file()
