"""The combat family: StarCraft-style micro in SMAX (JAX) and SMACv2 (StarCraft II).

Skills speak SMACv2's action indices (0 no-op, 1 stop, 2-5 move N/S/E/W, 6+j attack enemy j) and
read SMACv2-style text, so one library runs unchanged on both environments.
"""

from __future__ import annotations

from compass.core.family import EnvOptions, GameFamily
from compass.core.types import MultiAgentEnv
from compass.games.combat.scenarios import SCENARIOS
from compass.games.combat.text import view_from_text

# The game's own goal, worded independently of every skill's description: retrieval from it is an
# honest test of the library (it ranks `regroup` first; `--skill NAME` runs a named skill instead).
DEFAULT_TASK = "Defeat all enemy units"

FRAME_LEGEND = (
    "your unit's view (centre = you, inner ring = shoot range, outer = sight range, "
    "orange = units relayed by allies)"
)


def _smax(scenario: str, options: EnvOptions) -> MultiAgentEnv:
    from compass.games.combat.smax import DEFAULT_MAX_STEPS, SmaxEnv

    return SmaxEnv(
        scenario,
        epo=options.epo,
        max_steps=options.max_steps or DEFAULT_MAX_STEPS,
        enemy="external" if options.external_enemy else "heuristic",
    )


def _smacv2(scenario: str, options: EnvOptions) -> MultiAgentEnv:
    from compass.games.combat.smacv2.env import make_smacv2

    if options.external_enemy:
        raise ValueError(
            "smacv2: the enemy team is StarCraft II's built-in AI; only smax: takes an enemy controller"
        )

    return make_smacv2(scenario, epo=options.epo, max_steps=options.max_steps)


def _action_name(action: int, _agent: int) -> str:
    from compass.games.combat.text import action_name

    return action_name(action)


def _controller(kind: str):
    def factory(env, team, units, arg):
        from compass.games.combat.controllers import CONTROLLERS

        return CONTROLLERS[kind](env, team, units, arg)

    return factory


def _human_keys(view):
    from compass.games.combat.keys import human_keys

    return human_keys(view)


FAMILY = GameFamily(
    name="combat",
    package=__name__,
    envs={"smax": _smax, "smacv2": _smacv2},
    skill_api="compass.games.combat.skill_api",
    default_task=DEFAULT_TASK,
    synthesis="refine",
    frame_legend=FRAME_LEGEND,
    view_from_text=view_from_text,
    scenarios={"smax": tuple(SCENARIOS), "smacv2": tuple(s for s in SCENARIOS if "_5_vs_" in s)},
    controllers={"heuristic": _controller("heuristic"), "mappo": _controller("mappo")},
    batch_envs=("smax",),
    human_keys=_human_keys,
    action_name=_action_name,
)
