"""Fight or keep away (compass.games.alem.skill_api.melee) on tiny hand-drawn maps, and the alem rule
it rests on (a hard elite takes no damage from one agent) in the real env."""

from __future__ import annotations

from alem_testlib import load_skill, needs_alem, run_skill, view_of
from test_alem_api import _obs

from compass.games.alem import skill_api as api
from compass.games.alem.names import DO, DOWN, LEFT, RIGHT, SLEEP, UP
from compass.games.alem.obs import Mob, Teammate


def _mob(x: int, y: int, me: tuple[int, int], coord: int = 0, required: int = 0, health: float = 5.0) -> Mob:
    dx, dy = x - me[0], y - me[1]
    return Mob(300, "zombie", "melee", x, y, dx, dy, abs(dx) + abs(dy), health, coord, required)


def _mate(i: int, x: int, y: int, me: tuple[int, int]) -> Teammate:
    dx, dy = x - me[0], y - me[1]
    return Teammate(i, "miner", x, y, dx, dy, abs(dx) + abs(dy), 9.0)


def test_melee_damage_follows_sword_role_and_strength():
    inv = {"wood": 0, "stone": 0, "pickaxe": 0}
    assert api.melee_damage(_obs(["@"], role="forager", inventory=inv | {"sword": 0})) == 1
    assert api.melee_damage(_obs(["@"], role="miner", inventory=inv | {"sword": 2})) == 3
    assert api.melee_damage(_obs(["@"], role="warrior", inventory=inv | {"sword": 1})) == 4
    strong = {"dexterity": 1, "strength": 5, "intelligence": 1}
    assert api.melee_damage(_obs(["@"], role="miner", inventory=inv | {"sword": 1}, attributes=strong)) == 4


def test_strikes_to_kill_and_who_can_hurt_an_elite():
    me = (2, 2)
    d = _obs([".....", ".....", "..@..", ".....", "....."], role="forager")  # no sword: 1 per hit
    assert api.strikes_to_kill(d, _mob(3, 2, me)) == 5
    assert api.strikes_to_kill(d, _mob(3, 2, me, coord=1, required=2)) == 10  # a soft elite alone: half
    hard = _mob(3, 2, me, coord=2, required=2)
    assert api.strikes_to_kill(d, hard) is None
    d.mobs.append(hard)
    assert not api.can_hurt(d, hard) and api.untouchable(d) == [hard]
    # A teammate standing by the elite makes two hitters: it can be hurt, and is no longer untouchable.
    d.teammates.append(_mate(1, 4, 2, me))
    assert api.hitters(d, hard) == 2 and api.can_hurt(d, hard) and api.untouchable(d) == []
    # One that needs three hitters still cannot.
    assert not api.can_hurt(d, _mob(3, 2, me, coord=2, required=3))
    # A normal zombie is always fought; a teammate far away does not count for an elite.
    far = _obs(["......."] * 3 + ["...@..."], role="miner", teammates=[_mate(1, 0, 0, (3, 3))])
    assert api.can_hurt(far, _mob(4, 3, (3, 3))) and not api.can_hurt(
        far, _mob(4, 3, (3, 3), coord=2, required=2)
    )


def test_keep_away_steps_off_and_not_into_a_fleeing_teammate():
    me = (2, 2)
    grid = [".....", ".....", "..@..", ".....", "....."]
    elite = _mob(2, 3, me, coord=2, required=2)  # south of the agent
    d = _obs(grid, mobs=[elite])
    assert api.keep_away_step(d, (2, 3)) == UP  # straight away from it
    assert api.keep_away_step(d, (2, 3), keep=0) is None  # out of `keep`: nothing to do
    # A teammate north-west: the north tile could be its next step too (alem then moves neither):
    # the agent takes a tile no teammate stands next to, as far from the elite as any other.
    d2 = _obs(grid, mobs=[elite], teammates=[_mate(1, 1, 1, me)])
    assert api.keep_away_step(d2, (2, 3)) in (LEFT, RIGHT)
    assert api.keep_away_step(d2, (2, 3)) == RIGHT  # (1, 2) is next to the teammate too


def test_keep_away_digs_out_of_a_dead_end_with_a_pickaxe():
    # A dead end: stone north, west and east; the elite south. With a pickaxe, dig away from it.
    grid = ["#####", "##@##", "##.##"]
    me = (2, 1)
    elite = _mob(2, 2, me, coord=2, required=2)
    pick = {"wood": 0, "stone": 0, "pickaxe": 1, "sword": 0}
    facing_north = _obs(
        grid, mobs=[elite], inventory=pick, facing="north", facing_xy=(2, 0), facing_block="stone"
    )
    assert api.keep_away_step(facing_north, (2, 2)) == DO  # facing the stone farthest from it: mine
    facing_south = _obs(grid, mobs=[elite], inventory=pick, facing="south", facing_xy=(2, 2))
    assert api.keep_away_step(facing_south, (2, 2)) == UP  # turn toward that stone first
    assert api.keep_away_step(_obs(grid, mobs=[elite]), (2, 2)) is None  # no pickaxe: nowhere to go


def test_the_library_keeps_away_from_a_lone_hard_elite_and_meets_a_zombie_awake():
    """The library skill through the sandbox: it steps away from a hard elite it cannot hurt (main hit
    it), fights a normal zombie in the same place, and at energy 0 does not fall asleep with a zombie
    4 tiles off (main slept: 3 tiles was its only check)."""
    skill = load_skill("alem_role_policy")
    grid = [".........", ".........", "....@....", ".........", ".........", ".........", "........."]
    me = (4, 2)
    vitals = {"health": 9, "food": 9, "drink": 9, "energy": 9}
    inv = {"wood": 0, "stone": 0, "pickaxe": 0, "sword": 1}
    view = view_of(
        _obs(grid, mobs=[_mob(4, 3, me, coord=2, required=2)], status=vitals, inventory=inv, step=10)
    )
    assert run_skill(skill, view).action == UP
    view = view_of(
        _obs(
            grid,
            mobs=[_mob(4, 3, me)],
            status=vitals,
            inventory=inv,
            step=10,
            facing="south",
            facing_xy=(4, 3),
        )
    )
    assert run_skill(skill, view).action == DO
    tired = vitals | {"energy": 0}
    view = view_of(_obs(grid, mobs=[_mob(4, 6, me)], status=tired, inventory=inv, step=10))
    action = run_skill(skill, view).action
    assert action != SLEEP and action == DOWN  # toward it, to fight it awake


def _zombie_between(env, hitters: int, coord: int = 2) -> float:
    """Seed 0's overworld with one zombie (``coord`` 2: a hard elite, 2 agents required; 5 health, just
    attacked so it cannot hit this step) between agents 0 and 1, who face it, on grass, with no other melee creature
    on the level; the first ``hitters`` agents Do for one step. Returns the zombie's health after."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from alem.alem_coop.constants import BlockType

    from compass.games.alem.names import NOOP

    env.reset(0)
    cp = env.checkpoint()
    st = cp["state"]
    lvl = int(st.player_level)
    r, c = 20, 20  # the zombie's tile; agent 0 west of it (facing east), agent 1 east of it (facing west)
    grid = st.map
    for dr in (-1, 0, 1):
        for dc in (-2, -1, 0, 1, 2):
            grid = grid.at[lvl, r + dr, c + dc].set(BlockType.GRASS.value)
    m = st.melee_mobs
    mobs = m.replace(
        position=m.position.at[lvl, 0].set(jnp.array([r, c], m.position.dtype)),
        health=m.health.at[lvl].set(0.0).at[lvl, 0].set(5.0),
        mask=m.mask.at[lvl].set(False).at[lvl, 0].set(True),
        attack_cooldown=m.attack_cooldown.at[lvl, 0].set(5),
        type_id=m.type_id.at[lvl, 0].set(0),
    )
    st = st.replace(
        map=grid,
        melee_mobs=mobs,
        mob_map=st.mob_map.at[lvl].set(False).at[lvl, r, c].set(True),
        melee_mob_coordination=st.melee_mob_coordination.at[lvl, 0].set(coord),
        melee_mob_agents_required=st.melee_mob_agents_required.at[lvl, 0].set(2),
        player_position=jnp.asarray([[r, c - 1], [r, c + 1], [r + 8, c]], dtype=st.player_position.dtype),
        player_direction=st.player_direction.at[0].set(2).at[1].set(1),  # east, west
    )
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    env.step([DO if i < hitters else NOOP for i in range(3)])
    return float(env.checkpoint()["state"].melee_mobs.health[lvl, 0])


@needs_alem
def test_a_lone_agent_does_no_damage_to_a_hard_elite_in_the_real_env(alem_overworld):
    """alem's rule behind ``can_hurt``: one agent's blow leaves a hard elite whole, two on the same
    step hurt it."""
    env = alem_overworld(50, text=False)
    assert _zombie_between(env, hitters=1, coord=0) < 5.0  # the set-up hits: a normal zombie is hurt
    assert _zombie_between(env, hitters=1) == 5.0
    assert _zombie_between(env, hitters=2) < 5.0
