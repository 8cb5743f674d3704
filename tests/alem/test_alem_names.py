"""Our plain-Python copies of ALEM's tables match the installed alem-env."""

from __future__ import annotations

import numpy as np
from alem_testlib import needs_alem

from compass.games.alem import names as n


def test_weights_sum_to_paper_maxima():
    w = np.asarray(n.ACHIEVEMENT_WEIGHTS)
    assert len(w) == len(n.ACHIEVEMENTS) == 93
    assert w[: n.FIRST_COORD_ACHIEVEMENT].sum() == 217
    assert w[n.FIRST_COORD_ACHIEVEMENT :].sum() == 159
    assert w.sum() == 376


def test_action_names_round_trip_for_every_agent():
    for agent in range(n.N_AGENTS):
        names = [n.action_name(a, agent) for a in range(n.N_ACTIONS)]
        assert len(set(names)) == n.N_ACTIONS
        assert [n.action_index(x, agent) for x in names] == list(range(n.N_ACTIONS))
        gives = [x for x in names if x.startswith("Give to Agent")]
        assert sorted(int(x.rsplit(" ", 1)[1]) for x in gives) == [i for i in range(3) if i != agent]


@needs_alem
def test_tables_match_alem_package():
    from alem.alem_coop.constants import ACHIEVEMENT_REWARD_MAP, Achievement, BlockType
    from alem.alem_coop.envs.common import _ON_OVERWORLD, COORDINATION_ACHIEVEMENTS
    from alem.llm.alem_language_wrapper import (
        ACTIONS,
        MELEE_MOB_NAMES,
        PASSIVE_MOB_NAMES,
        RANGED_MOB_NAMES,
    )

    assert tuple(b.name.lower() for b in BlockType) == n.BLOCK_NAMES
    assert tuple(a.name for a in sorted(Achievement, key=lambda a: a.value)) == n.ACHIEVEMENTS
    assert tuple(int(x) for x in np.asarray(ACHIEVEMENT_REWARD_MAP)) == n.ACHIEVEMENT_WEIGHTS
    assert set(COORDINATION_ACHIEVEMENTS) == set(range(n.FIRST_COORD_ACHIEVEMENT, 93))
    assert set(_ON_OVERWORLD) == n.OVERWORLD_ACHIEVEMENTS
    assert tuple(ACTIONS) == n.ACTION_LABELS
    assert tuple(MELEE_MOB_NAMES) == n.MELEE_MOB_NAMES
    assert tuple(RANGED_MOB_NAMES) == n.RANGED_MOB_NAMES
    assert tuple(PASSIVE_MOB_NAMES) == n.PASSIVE_MOB_NAMES
