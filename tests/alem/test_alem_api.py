"""The ALEM skill API: parse_obs fast path, helpers, path finding."""

from __future__ import annotations

import random

from alem_testlib import needs_alem

from compass.games.alem import skill_api as api
from compass.games.alem.names import BLOCK_ID, DO, DOWN, LEFT, RIGHT, UP
from compass.games.alem.obs import AlemMemory, Mob, ObsData, Teammate


def _obs(grid: list[str], **kw) -> ObsData:
    """ObsData on a tiny map: '.' grass, '#' stone, 'T' tree, '~' water, '@' the agent (at grass)."""
    mem = AlemMemory(1)
    pos = (0, 0)
    for y, row in enumerate(grid):
        for x, ch in enumerate(row):
            name = {".": "grass", "#": "stone", "T": "tree", "~": "water", "@": "grass"}[ch]
            mem.blocks[0, y, x] = BLOCK_ID[name]
            if ch == "@":
                pos = (x, y)
    base = dict(
        agent_id=0,
        role="warrior",
        step=0,
        max_steps=100,
        alive=True,
        position=pos,
        facing="north",
        facing_xy=(pos[0], pos[1] - 1),
        do_target="grass",
        level=0,
        level_name="Overworld",
        level_cleared=True,
        light=1.0,
        status={"health": 9, "food": 9, "drink": 9, "energy": 9},
        attributes={"dexterity": 1, "strength": 1, "intelligence": 1},
        inventory={"wood": 0, "stone": 0, "pickaxe": 0, "sword": 0},
        memory=mem,
        legal_indices=list(range(18)),
        facing_block="grass",
    )
    base.update(kw)
    return ObsData(**base)


def test_path_to_goes_around_walls_and_faces_target():
    d = _obs(["......", ".####.", ".#@.#.", ".#..#.", ".##.#.", "...T.."])
    assert api.path_to(d, (3, 5)) in (RIGHT, DOWN)  # both start a 3-step path out through column 3
    walled = _obs(["......", ".####.", ".#@#..", ".#.#..", ".#.##.", "...T.."])
    assert api.path_to(walled, (3, 5)) == DOWN  # the only way out
    d2 = _obs(["....", ".@T.", "...."])
    assert api.path_to(d2, (2, 1)) == RIGHT  # adjacent: turn toward it
    d3 = _obs(["....", ".@T.", "...."], facing="east", facing_xy=(2, 1), facing_block="tree")
    assert api.path_to(d3, (2, 1)) is None and api.act_on(d3, (2, 1)) == DO


def test_act_on_never_hits_a_teammate():
    d = _obs(["...", ".@.", "..."], facing_xy=(1, 0), teammates=[Teammate(1, "forager", 1, 0, 0, -1, 1, 9.0)])
    assert api.act_on(d, (1, 0)) == api.NOOP


def test_enclosure_and_sleep_spot():
    d = _obs(["#####", "#@..#", "###.#", "#...#", "#####"])
    spot = api.sleep_spot(d)
    assert spot == ((1, 1), (2, 1), (3, 1))
    sealed = _obs(["###", "#@#", "###"])
    assert api.enclosed(sealed)
    assert api.dig_out(sealed) is None  # no pickaxe: cannot dig stone
    armed = _obs(["###", "#@#", "###"], inventory={"pickaxe": 1, "stone": 0, "wood": 0, "sword": 0})
    assert api.dig_out(armed) == DO  # facing north stone


def test_dig_out_opens_the_wall_away_from_a_creature():
    armed = {"pickaxe": 1, "stone": 0, "wood": 0, "sword": 0}
    sealed = _obs(["###", "#@#", "###"], inventory=armed)  # facing north
    assert api.dig_out(sealed, away_from=(1, -5)) == DOWN  # the zombie waits north: open the south wall
    assert api.dig_out(sealed, away_from=(5, 1)) == LEFT
    assert api.dig_out(sealed, away_from=(1, 6)) == DO  # it waits south: the north wall it faces


def test_flee_and_nearest():
    d = _obs(
        ["~....", ".....", "..@..", ".....", "....T"], mobs=[Mob(200, "zombie", "melee", 2, 1, 0, -1, 1, 5.0)]
    )
    assert api.flee(d, (2, 1)) == DOWN
    assert api.nearest(d, "tree") == (4, 4) and api.nearest(d, "water") == (0, 0)
    assert api.greedy_step(d, (2, 0)) in (LEFT, RIGHT, UP, None)


def test_action_helpers():
    assert api.place("table") == 8 and api.craft("wood_pickaxe") == 11 and api.build("shelter") == 51
    assert api.request("food") == 42 and api.move("west") == LEFT and api.face("south") == DOWN


@needs_alem
def test_make_api_fast_path_and_default(overworld_views):
    for v in overworld_views[-1]:
        names = api.make_api(v, random.Random(0))
        d = names["parse_obs"](v.text)
        assert d is v.obs
        assert names["parse_obs"]("current") is d
        assert api.default_action(v) in v.avail_actions
        for t in d.teammates:
            g = names["give"](t.id)
            assert names["action_name"](g) == f"Give to Agent {t.id}"
        parsed = names["parse_obs"](v.text + "\n")
        assert parsed.from_text and parsed.position == d.position


# Names the module exports for compass's own code and tests, not to skills: the view and record types,
# the prompt builder's entry points, and internal tables.
MODULE_ONLY = {
    "ASCEND",
    "EXPORTS",
    "GROUND",
    "OBSERVATION_TYPES",
    "Point",
    "RESOURCE_BLOCK",
    "RESOURCE_TOOL",
    "STEP_DIRS",
    "make_api",
    "obs_data_from_view",
}


def test_every_public_name_is_shown_to_skills_unless_listed_module_only():
    """``__all__`` is a literal (ruff reads it), ``EXPORTS`` is what skills and prompts see: a helper
    imported and listed in ``__all__`` but left out of ``EXPORTS`` is invisible to every model."""
    exports, public = set(api.EXPORTS), set(api.__all__)
    assert public - exports == MODULE_ONLY
    built = api.make_api(None, random.Random(0))
    assert list(built) == list(api.EXPORTS)
    for name in exports - public:  # the per-view wrappers make_api binds
        assert callable(built[name]), name
