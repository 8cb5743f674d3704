"""Helpers shared by the ALEM tests (a module, not the conftest, so test files can import it)."""

from __future__ import annotations

import importlib.util

import pytest

from compass.core.family import get_family
from compass.core.types import AgentView
from compass.games.alem.names import BLOCK_ID, ITEM_NAMES
from compass.games.alem.obs import CoordSite, ObsData, Teammate

LIBRARY = get_family("alem").seed_skills_dir
HAVE_ALEM = importlib.util.find_spec("alem") is not None
needs_alem = pytest.mark.skipif(not HAVE_ALEM, reason="alem-env is not installed")
# Item ids of the ladders, for hand-drawn maps.
LADDER_DOWN = next(k for k, n in ITEM_NAMES.items() if n == "ladder down")
LADDER_UP = next(k for k, n in ITEM_NAMES.items() if n == "ladder up")


def load_skill(name: str):
    """Compile a library skill under the sandbox policy."""
    from compass.sandbox import compile_skill
    from compass.skills.library import header_length
    from compass.skills.skill import parse_skill_source

    path = LIBRARY / f"{name}.py"
    text = path.read_text()
    skill = parse_skill_source(text, "alem", path)
    return compile_skill(skill.code, skill.name, "alem", filename=str(path), line_offset=header_length(text))


def view_of(d: ObsData) -> AgentView:
    """An AgentView carrying the hand-drawn ``d`` as its parsed observation (what the sandbox hands a skill)."""
    from compass.core.types import OwnUnit

    own = OwnUnit(d.role, float(d.position[0]), float(d.position[1]), 9.0, 5.0, 1.0, 0, 48.0, 48.0)
    return AgentView(d.agent_id, "alem", d.step, True, own, (), tuple(range(56)), "", obs=d)


def run_skill(compiled, view: AgentView, executor=None):
    """Run a compiled skill on one view through the lead's sandbox; returns ``SkillResult``."""
    from compass.sandbox import SkillExecutor

    executor = executor or SkillExecutor("compass.games.alem.skill_api", seed=0)
    return executor.run(compiled, view)


def site_with_room(grass, candidates, n: int):
    """The first tile of the boolean map ``candidates`` with ``n`` grass neighbours that each have a
    second grass tile beyond them (where an agent starts, two tiles out, to walk in and face it):
    ``((row, col), [neighbour, ...], [start, ...])``, or None. Real-env coordination tests place
    their agents with it."""
    import numpy as np

    rows, cols = grass.shape
    for r, c in np.argwhere(candidates):
        free = [
            (int(r + dr), int(c + dc))
            for dr, dc in ((0, -1), (0, 1), (-1, 0), (1, 0))
            if 1 <= r + 2 * dr < rows - 1
            and 1 <= c + 2 * dc < cols - 1
            and grass[r + dr, c + dc]
            and grass[r + 2 * dr, c + 2 * dc]
        ]
        if len(free) >= n:
            stands = free[:n]
            return (int(r), int(c)), stands, [(2 * a - int(r), 2 * b - int(c)) for a, b in stands]
    return None


def place_pair(env, candidates, pickaxe: int, what: str):
    """On ``env`` reset to seed 0: agents 0 and 1 two tiles out from the first tile of
    ``candidates(state)`` with room for two (:func:`site_with_room`), agent 2 over 20 tiles away,
    every agent's pickaxe set to ``pickaxe``; one Noop step. Returns ``(site, step result)``."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from compass.games.alem.names import BLOCK_ID, NOOP

    env.reset(0)
    cp = env.checkpoint()
    st = cp["state"]
    grass = np.asarray(st.map[0]) == BLOCK_ID["grass"]
    found = site_with_room(grass, candidates(st), 2)
    assert found is not None, f"seed 0's overworld has {what} with room beside it"
    site, _, starts = found
    far = next((int(r), int(c)) for r, c in np.argwhere(grass) if abs(r - site[0]) + abs(c - site[1]) > 20)
    st = st.replace(
        player_position=jnp.asarray([starts[0], starts[1], far], dtype=st.player_position.dtype),
        inventory=st.inventory.replace(pickaxe=st.inventory.pickaxe.at[:].set(pickaxe)),
    )
    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    return site, env.step([NOOP, NOOP, NOOP])


def add_sync_site(d: ObsData, name: str, xy: tuple[int, int], soft: bool, required: int = 3) -> None:
    """A sync site on ``name`` at ``xy`` in ``d``'s view (offsets and distance from ``d.position``)."""
    dx, dy = xy[0] - d.position[0], xy[1] - d.position[1]
    d.coord_sites.append(
        CoordSite(name, *xy, dx, dy, abs(dx) + abs(dy), "sync", required=required, soft=soft)
    )


def add_team(d: ObsData, positions: dict, roles=None, dead=()) -> None:
    """Every agent of ``positions`` but ``d``'s own as a teammate in view (role ``roles[i]`` or miner,
    9 health, alive unless in ``dead``)."""
    for i, (x, y) in positions.items():
        if i != d.agent_id:
            dx, dy = x - d.position[0], y - d.position[1]
            role = roles[i] if roles else "miner"
            d.teammates.append(Teammate(i, role, x, y, dx, dy, abs(dx) + abs(dy), 9.0, alive=i not in dead))


def with_blocks(d: ObsData, **tiles) -> ObsData:
    """``d`` with the named blocks drawn on its level-0 memory: ``ripe_plant=[(x, y)]``."""
    for name, xys in tiles.items():
        for x, y in xys:
            d.memory.blocks[0, y, x] = BLOCK_ID[name]
    return d


def seed0_overworld(env):
    """``env`` reset to seed 0, for a test to edit: (checkpoint, state, level, row, col, map), ``row``
    and ``col`` agent 1's tile. Hand the edited state to :func:`restore_edited`."""
    env.reset(0)
    cp = env.checkpoint()
    st = cp["state"]
    row, col = (int(v) for v in st.player_position[1])
    return cp, st, int(st.player_level), row, col, st.map


def restore_edited(env, cp, st):
    """Put the edited state ``st`` into ``env`` and take one Noop step: the views after the edit (the
    restored views predate it)."""
    import jax
    import numpy as np

    from compass.games.alem.names import NOOP

    env.restore(cp | {"state": st, "np": jax.tree_util.tree_map(np.asarray, st)})
    return env.step([NOOP, NOOP, NOOP]).views
