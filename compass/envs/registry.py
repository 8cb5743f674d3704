"""``FAMILY:SCENARIO`` strings to environment adapters."""

from __future__ import annotations

from compass.envs.base import MultiAgentEnv

ENV_FAMILIES = {"smax": "combat", "smacv2": "combat", "alem": "alem"}


def skill_family(env_spec: str) -> str:
    """The skill family (``combat`` or ``alem``) an environment spec uses."""
    kind = env_spec.split(":", 1)[0]
    if kind not in ENV_FAMILIES:
        raise ValueError(f"unknown environment {kind!r} in {env_spec!r}; valid: {', '.join(ENV_FAMILIES)}")
    return ENV_FAMILIES[kind]


def make_env(env_spec: str, *, epo: bool = False, max_steps: int | None = None) -> MultiAgentEnv:
    """Build an adapter from ``smax:protoss_5_vs_5``, ``smacv2:terran_5_vs_6``, ``alem:hard``..."""
    kind, _, scenario = env_spec.partition(":")
    skill_family(env_spec)
    if kind == "smax":
        from compass.envs.smax import DEFAULT_MAX_STEPS, SmaxEnv

        return SmaxEnv(scenario, epo=epo, max_steps=max_steps or DEFAULT_MAX_STEPS)
    if kind == "smacv2":
        from compass.envs.smacv2 import make_smacv2

        return make_smacv2(scenario, epo=epo, max_steps=max_steps)
    from compass.envs.alem import make_alem

    return make_alem(scenario, max_steps=max_steps or 10000)
