"""SMACv2 scenarios as smacv2 configs, and the clear error when smacv2 or StarCraft II is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compass.core.family import make_env
from compass.games.combat.scenarios import get_scenario
from compass.games.combat.smacv2 import install as smacv2_install
from compass.games.combat.smacv2.config import env_kwargs
from compass.games.combat.smacv2.env import Smacv2NotInstalledError, make_smacv2
from compass.games.combat.smacv2.install import find_sc2, import_problem, require_smacv2

TABLE_3 = {  # the paper's scenarios: race -> (unit types, weights, exceptions)
    "protoss": (["stalker", "zealot", "colossus"], [0.45, 0.45, 0.1], None),
    "terran": (["marine", "marauder", "medivac"], [0.45, 0.45, 0.1], ["medivac"]),
    "zerg": (["zergling", "baneling", "hydralisk"], [0.45, 0.1, 0.45], ["baneling"]),
}


@pytest.fixture(autouse=True)
def _no_sc2(monkeypatch, tmp_path):
    """No game anywhere, smacv2 not importable, and the protobuf variable restored afterwards."""
    monkeypatch.setenv("SC2PATH", str(tmp_path / "no-StarCraftII"))
    monkeypatch.delenv("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", raising=False)
    monkeypatch.setitem(sys.modules, "smacv2", None)  # None in sys.modules makes the import fail


@pytest.mark.parametrize("race", sorted(TABLE_3))
@pytest.mark.parametrize("size", [(5, 5), (5, 6)])
def test_table3_scenarios_are_smacv2_race_configs(race, size):
    spec = get_scenario(f"{race}_{size[0]}_vs_{size[1]}")
    kw = env_kwargs(spec, prob_obs_enemy=1.0, action_mask=True)
    units, weights, exceptions = TABLE_3[race]
    cap = kw["capability_config"]
    assert kw["map_name"] == f"10gen_{race}"
    assert (cap["n_units"], cap["n_enemies"]) == size
    assert cap["team_gen"]["dist_type"] == "weighted_teams" and cap["team_gen"]["observe"] is True
    assert cap["team_gen"]["unit_types"] == units and cap["team_gen"]["weights"] == weights
    assert cap["team_gen"].get("exception_unit_types") == exceptions
    assert cap["start_positions"] == {
        "dist_type": "surrounded_and_reflect",
        "p": 0.5,
        "map_x": 32,
        "map_y": 32,
    }
    assert kw["use_unit_ranges"] is True and kw["min_attack_range"] == 2 and kw["conic_fov"] is False
    epo = env_kwargs(spec, prob_obs_enemy=0.0, action_mask=False)
    assert epo["prob_obs_enemy"] == 0.0 and epo["action_mask"] is False


def _assert_install_text(message: str) -> None:
    for needle in (
        "pip install pysc2",
        "pip install --no-deps git+https://github.com/oxwhirl/smacv2.git",
        "SC2PATH",
        "StarCraft II 4.10",
        "SC2.4.10.zip",
        "$SC2PATH/Maps/SMAC_Maps",
        "32x32_flat.SC2Map",
        "docs/smacv2.md",
    ):
        assert needle in message, needle
    assert "[" not in message  # the CLI prints through rich, which would eat "[...]" as markup


def test_missing_smacv2_and_game_fail_at_once_with_install_steps():
    with pytest.raises(Smacv2NotInstalledError) as err:
        make_smacv2("protoss_5_vs_5")
    assert isinstance(err.value, ImportError)
    _assert_install_text(str(err.value))
    with pytest.raises(ImportError, match="SMACv2 on StarCraft II is not ready"):
        make_env("smacv2:zerg_5_vs_6", epo=True)


def test_scenario_typo_is_reported_before_dependencies():
    with pytest.raises(ValueError, match="protoss_5_vs_5"):
        make_smacv2("protos_5_vs_5")


def _game(root: Path, maps: bool) -> Path:
    (root / "Versions" / "Base75689").mkdir(parents=True)
    if maps:
        (root / "Maps" / "SMAC_Maps").mkdir(parents=True)
        (root / "Maps" / "SMAC_Maps" / "32x32_flat.SC2Map").write_bytes(b"map")
    return root


def test_only_the_missing_steps_are_listed(tmp_path, monkeypatch):
    game = _game(tmp_path / "StarCraftII", maps=False)
    monkeypatch.setenv("SC2PATH", str(game))
    monkeypatch.setattr(smacv2_install, "import_problem", lambda: None)
    with pytest.raises(Smacv2NotInstalledError) as err:
        require_smacv2()
    text = str(err.value)
    assert "SMAC_Maps.zip" in text and "1. the SMACv2 maps" in text
    assert "pip install" not in text and "SC2.4.10.zip" not in text
    (game / "Maps" / "SMAC_Maps").mkdir(parents=True)
    (game / "Maps" / "SMAC_Maps" / "32x32_flat.SC2Map").write_bytes(b"map")
    install = require_smacv2()
    assert install.sc2_path == game and install.map_path.name == "32x32_flat.SC2Map"


def test_a_folder_without_versions_is_not_a_game(tmp_path):
    (tmp_path / "Maps").mkdir()
    install, problems = find_sc2(tmp_path)
    assert install is None and any("not a StarCraft II install" in p for p in problems)


def test_import_problems_are_named(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "ns_only").mkdir()  # a bare folder: a namespace package, not smacv2
    assert "not installed" in import_problem("ns_only", "ns_only.env")
    pkg = tmp_path / "broken_sc2"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import pysc2_not_here\n")
    assert "pysc2_not_here" in import_problem("broken_sc2", "broken_sc2")
    old = tmp_path / "old_protos"
    old.mkdir()
    (old / "__init__.py").write_text("raise TypeError('Descriptors cannot be created directly.')\n")
    problem = import_problem("old_protos", "old_protos")
    assert "protobuf" in problem
    assert os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] == "python"
    text = smacv2_install.install_message(
        [problem], need_python=False, need_protobuf=True, need_game=False, need_maps=False
    )
    assert "export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python" in text and "pip install pysc2" not in text


def test_cli_prints_the_install_steps_not_a_traceback(tmp_path):
    env = dict(os.environ, SC2PATH=str(tmp_path / "none"), COLUMNS="120")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from compass.cli import app; app()",
            "run",
            "--env",
            "smacv2:protoss_5_vs_5",
            "--out",
            str(tmp_path / "runs"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "SC2.4.10.zip" in proc.stderr and "git+https://github.com/oxwhirl/smacv2.git" in proc.stderr
