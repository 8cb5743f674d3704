"""What a person controlling one ALEM agent may do (``compass play``): the game's own action set.

The common actions have keys (arrows/WASD move, space does, Z sleeps, ...); every legal action,
keyed or not, is listed with the harness's label and can be clicked (crafting, potions, give to a
named teammate, requests)."""

from __future__ import annotations

from compass.core.controller import HumanKey
from compass.core.types import AgentView
from compass.games.alem.names import (
    ASCEND,
    BUILD_SHELTER,
    DESCEND,
    DO,
    DOWN,
    GIVE,
    LEFT,
    N_ACTIONS,
    NOOP,
    PLACE_FURNACE,
    PLACE_PLANT,
    PLACE_STONE,
    PLACE_TABLE,
    PLACE_TORCH,
    REQUEST_FOOD,
    REST,
    RIGHT,
    SLEEP,
    UP,
    action_name,
)

#: key -> action; the arrows and WASD move, the rest are mnemonic
KEYS: dict[str, int] = {
    "ArrowLeft": LEFT,
    "ArrowRight": RIGHT,
    "ArrowUp": UP,
    "ArrowDown": DOWN,
    "a": LEFT,
    "d": RIGHT,
    "w": UP,
    "s": DOWN,
    " ": DO,
    "z": SLEEP,
    "r": REST,
    "q": NOOP,
    "p": PLACE_STONE,
    "t": PLACE_TABLE,
    "f": PLACE_FURNACE,
    "n": PLACE_PLANT,
    "o": PLACE_TORCH,
    "b": BUILD_SHELTER,
    "e": REQUEST_FOOD,
    ">": DESCEND,
    "<": ASCEND,
    "1": GIVE,
    "2": GIVE + 1,
}


def human_keys(view: AgentView) -> tuple[HumanKey, ...]:
    """Every legal action of ``view``'s agent, in action order, with its key where it has one."""
    key_of: dict[int, str] = {}
    for key, action in KEYS.items():
        key_of.setdefault(action, key)  # the arrow keys are the ones shown for moves
    avail = sorted(a for a in set(view.avail_actions) if 0 <= a < N_ACTIONS)
    return tuple(HumanKey(key_of.get(a, ""), a, action_name(a, view.agent_id)) for a in avail) + tuple(
        HumanKey(k, a, action_name(a, view.agent_id))
        for k, a in KEYS.items()
        if a in avail and key_of[a] != k  # WASD as well as the arrows
    )
