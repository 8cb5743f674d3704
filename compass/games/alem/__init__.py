"""The ALEM family: the open-ended coordination world of ``alem-env`` (3 agents: warrior, forager, miner)."""

from __future__ import annotations

from compass.core.family import EnvOptions, GameFamily, Scorer
from compass.core.types import AgentView, MultiAgentEnv
from compass.games.alem.scenarios import SCENARIOS

# The game's own goal, worded independently of every skill's description (no skill's docstring or
# subtask header is copied here); `--skill alem_role_policy` runs the generalist skill by name.
DEFAULT_TASK = "Unlock as many achievements as possible as a team"

FRAME_LEGEND = (
    "your agent's egocentric view of the map tiles around it (you are at the centre; "
    "other agents and creatures are drawn on their tiles)"
)


MINIMAP_LEGEND = (
    "minimap of the level with what you know of (white = you, blue = teammates, red = creatures, "
    "orange = creatures reported by teammates); north is up, as in the text (y grows south)"
)


def _alem(scenario: str, options: EnvOptions) -> MultiAgentEnv:
    from compass.games.alem.env import make_alem

    if options.external_enemy:
        raise ValueError("alem: all agents are one team; there is no enemy team to control")

    return make_alem(scenario, max_steps=options.max_steps or 10000)


def _scorer(env: MultiAgentEnv) -> Scorer:
    from compass.games.alem.metrics import AlemScorer

    return AlemScorer(env)


def _view_from_text(text: str) -> AgentView:
    from compass.games.alem.textview import view_from_text

    return view_from_text(text)


def _human_keys(view: AgentView):
    from compass.games.alem.keys import human_keys

    return human_keys(view)


FAMILY = GameFamily(
    name="alem",
    package=__name__,
    envs={"alem": _alem},
    skill_api="compass.games.alem.skill_api",
    default_task=DEFAULT_TASK,
    synthesis="whole",
    frame_legend=FRAME_LEGEND,
    view_from_text=_view_from_text,
    scenarios={"alem": tuple(SCENARIOS)},
    make_scorer=_scorer,
    score_key="total_pct",
    minimap_legend=MINIMAP_LEGEND,
    y_axis="south",
    batch_envs=("alem",),
    human_keys=_human_keys,
)
