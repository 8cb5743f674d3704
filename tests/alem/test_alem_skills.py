"""Every library skill compiles under the sandbox and returns legal actions on real views."""

from __future__ import annotations

import pytest
from alem_testlib import LIBRARY, load_skill, needs_alem, run_skill

from compass.sandbox import SkillExecutor

SKILLS = sorted(p.stem for p in LIBRARY.glob("*.py"))


def test_library_is_well_formed():
    from compass.skills.skill import parse_skill_source

    assert "alem_role_policy" in SKILLS and len(SKILLS) >= 12
    for name in SKILLS:
        text = (LIBRARY / f"{name}.py").read_text()
        assert text.startswith("# provenance: human")
        skill = parse_skill_source(text, "alem", LIBRARY / f"{name}.py")
        assert skill.name == name and len(skill.description) > 80
        load_skill(name)  # compiles under RestrictedPython


@needs_alem
@pytest.mark.parametrize("name", SKILLS)
def test_skill_returns_legal_actions(name, overworld_views):
    compiled = load_skill(name)
    ex = SkillExecutor("compass.games.alem.skill_api", seed=0)
    for views in overworld_views[::4]:
        for v in views:
            res = run_skill(compiled, v, ex)
            assert res.error is None, res.error
            assert res.action in v.avail_actions
