"""ALEM scenarios by name (cheap to import: no JAX)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    """An ALEM environment name and coordination difficulty (alpha: easy 0.3, medium 0.6, hard 0.9)."""

    env_name: str
    difficulty: str
    num_levels: int = 9


SCENARIOS: dict[str, Scenario] = {
    "easy": Scenario("Alem-Coop-Symbolic", "easy"),
    "medium": Scenario("Alem-Coop-Symbolic", "medium"),
    "hard": Scenario("Alem-Coop-Symbolic", "hard"),
    # ALEM-LITE: the overworld only (the paper's MARL sweeps used this Debug variant at hard).
    "overworld": Scenario("Alem-Coop-Symbolic-Debug", "hard", num_levels=1),
}


@dataclass(frozen=True)
class Preset:
    """How ``EnvParams`` are built on top of ``get_coordination_params(difficulty)``.

    ``overrides`` are applied after the difficulty preset, as the code that defines each one does.
    """

    name: str
    overrides: tuple[tuple[str, float], ...]
    source: str


PRESETS: dict[str, Preset] = {
    # alem's RL evaluation (baselines/utils.py _make_eval_env) and the ALEM paper's benchmark config:
    # the difficulty preset as is, so non_specialist_efficiency = 1 - alpha (0.7 / 0.4 / 0.1).
    "rl": Preset("rl", (), "alem baselines/utils.py _make_eval_env: get_coordination_params(difficulty)"),
    # alem's released LLM harness (alem/llm/alem_language_wrapper.py make_alem_env, used by
    # baselines/llm/eval_alem.py): the same preset, then non_specialist_efficiency forced to 0.2.
    "harness": Preset(
        "harness",
        (("non_specialist_efficiency", 0.2),),
        "alem llm/alem_language_wrapper.py make_alem_env: non_specialist_efficiency=0.2 after the preset",
    ),
}


def get_preset(name: str) -> Preset:
    """The :class:`Preset` called ``name`` (``rl`` or ``harness``); a clear error otherwise."""
    if name not in PRESETS:
        raise ValueError(f"unknown ALEM preset {name!r}; valid: {', '.join(PRESETS)}")
    return PRESETS[name]
