"""``compass skills check``: recorded observations rebuild views; good skills pass, faulty ones are reported."""

from __future__ import annotations

import shutil

import pytest

from compass.core.family import get_family
from compass.games.combat.text import (
    obs_data_from_view,
    parse_combat_text,
    render_combat_text,
    view_from_text,
)
from compass.skills.check import check_library, load_observations, observations_path
from compass.skills.library import SkillLibrary

# Fails only on some observations: those where the unit sees no enemy (and dead units, which see nothing).
FRAGILE = '''def fragile_skill(obs: str) -> int:
    """Attack the first listed enemy; breaks when no enemy is listed."""
    obs_data = parse_obs(obs)
    first = obs_data.enemies[0]
    if (first.id + 6) in obs_data.available_actions:
        return attack(first.id)
    return default_action(obs)
'''

# Returns a move even when it is not available (at the map edge, or when dead).
ALWAYS_NORTH = '''def always_north(obs: str) -> int:
    """Move north, whatever happens."""
    return move("north")
'''


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return load_observations(observations_path("combat"))


@pytest.fixture()
def lib_copy(tmp_path):
    shutil.copytree(get_family("combat").seed_skills_dir, tmp_path / "combat")
    return tmp_path


def test_recorded_observations_cover_races_relays_and_dead_units(texts):
    assert 150 <= len(texts) <= 400
    units = " ".join(texts)
    for kind in ("stalker", "zealot", "marine", "marauder", "zergling", "hydralisk"):
        assert kind in units
    assert any("[relayed by Ally #" in t for t in texts)
    assert any("Your unit is dead" in t for t in texts)
    assert any("Enemy #5:" in t for t in texts)  # 5v6 scenarios: six enemies


def test_view_from_text_round_trips(texts):
    for text in texts:
        view = view_from_text(text)
        assert render_combat_text(view) == text
        direct, parsed = obs_data_from_view(view), parse_combat_text(text)
        assert direct.available_actions == parsed.available_actions
        assert direct.own_position == parsed.own_position and direct.can_move == parsed.can_move
        for xs, ys in ((direct.enemies, parsed.enemies), (direct.allies, parsed.allies)):
            assert [
                (
                    u.id,
                    u.unit_type,
                    u.position,
                    u.distance,
                    u.health,
                    u.last_action,
                    u.visible,
                    u.source,
                    u.hops,
                    u.age,
                )
                for u in xs
            ] == [
                (
                    u.id,
                    u.unit_type,
                    u.position,
                    u.distance,
                    u.health,
                    u.last_action,
                    u.visible,
                    u.source,
                    u.hops,
                    u.age,
                )
                for u in ys
            ]
        assert [e.can_attack for e in direct.enemies] == [e.can_attack for e in parsed.enemies]


def test_view_from_text_rejects_other_text():
    with pytest.raises(ValueError, match="not a combat observation"):
        view_from_text("hello")


def test_shipped_library_passes(combat_library, texts):
    rows = check_library(combat_library)
    assert [r.name for r in rows] == combat_library.names()
    for row in rows:
        assert row.runs == len(texts)
        assert row.errors == [], (row.name, row.errors[:3])


def test_skill_that_raises_on_some_observations_is_reported(lib_copy, texts):
    (lib_copy / "combat" / "fragile_skill.py").write_text("# provenance: human\n" + FRAGILE)
    (lib_copy / "combat" / "always_north.py").write_text("# provenance: human\n" + ALWAYS_NORTH)
    lib = SkillLibrary(lib_copy, "combat")
    rows = {r.name: r for r in check_library(lib)}
    fragile = rows["fragile_skill"]
    without_enemy = sum(not parse_combat_text(t).enemies for t in texts)
    assert fragile.runs == len(texts) and len(fragile.errors) == without_enemy > 0
    assert "IndexError" in fragile.errors[0] and "[runtime]" in fragile.errors[0]
    assert fragile.errors[0].startswith("observation ")
    north = rows["always_north"]
    assert north.errors and all("[invalid_action]" in e and "not available" in e for e in north.errors)
    assert rows["race_adaptive_combat"].errors == []


def test_explicit_observations(combat_library, texts):
    rows = check_library(combat_library, observations=texts[:3])
    assert all(r.runs == 3 for r in rows)


def test_cli_skills_check_exit_codes(lib_copy):
    from typer.testing import CliRunner

    from compass.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["skills", "check", "--library", str(lib_copy)])
    assert r.exit_code == 0, r.output
    (lib_copy / "combat" / "fragile_skill.py").write_text("# provenance: human\n" + FRAGILE)
    r = runner.invoke(app, ["skills", "check", "--library", str(lib_copy)])
    assert r.exit_code == 1 and "fragile_skill" in r.output
