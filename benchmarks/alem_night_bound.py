"""What surviving the overworld's nights could still give a skill file: a bound, not a policy
(docs/alem.md "What surviving the nights is worth"). Tuning seeds only.

The skill file plays as the whole team while the game is changed under it: after every step, while
the team is on the overworld, every hostile creature there (zombies, skeletons, the elite among
them) and every arrow in flight is taken out of the env's state, as if no creature could reach the
team at all:

- ``--calm night``: in the library's night window (day steps 120-264, ``alem_role_policy``'s
  ``dusk`` and ``dawn``, or light below 0.35), the hours the library spends sealed in: a shelter
  that never fails;
- ``--calm always``: at every step on the overworld: the overworld made safe, day and night.
  Its team loses the overworld's kills too (zombies, skeletons, elite ones), which a real defence
  would keep.

Creatures are taken out after the step that spawned them, so the agents see one for one step at
most (their views of that step were made before). Levels below are untouched. Played against an
earlier report's rows of the same skill file on the same seeds (``--against FILE:LABEL``:
traces are reproducible, so they are the rows a replay gives), the paired difference is what that
safety would be worth to the skill file as it plays now.

    python benchmarks/alem_night_bound.py compass/games/alem/skills/alem_role_policy.py \\
        --calm night --against /tmp/v.json:main --seeds 0-23 --steps 3000 --out /tmp/night.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from alem_dev import dev_parser, parse_dev_args, summary, write_out  # noqa: E402
from alem_variants import comparison_lines, play_variant, reference_rows  # noqa: E402

#: The library's night window (``alem_role_policy``: ``dusk``, ``dawn``, and light below 0.35;
#: the test checks them against the skill file).
DUSK, DAWN, DARK = 120, 265, 0.35
DAY_LENGTH = 300  # alem's EnvParams.day_length


def _calm_fn():
    """The jitted state change: level 0's melee and ranged creatures and arrows removed."""
    import jax
    import jax.numpy as jnp

    def off(mobs):
        return mobs.replace(mask=mobs.mask.at[0].set(False))

    @jax.jit
    def calm(state):
        grid = state.mob_map[0].astype(jnp.int8)
        for mobs in (state.melee_mobs, state.ranged_mobs):
            # min, not set: a freed slot may share a tile with a cow, whose mark must stay.
            pos = mobs.position[0]
            grid = grid.at[pos[:, 0], pos[:, 1]].min((~mobs.mask[0]).astype(jnp.int8))
        return state.replace(
            melee_mobs=off(state.melee_mobs),
            ranged_mobs=off(state.ranged_mobs),
            mob_projectiles=off(state.mob_projectiles),
            mob_map=state.mob_map.at[0].set(grid.astype(bool)),
        )

    return calm


def calm_needed(s, when: str) -> bool:
    """Whether the numpy state ``s`` has a creature or arrow on the overworld to take out now."""
    if int(s.player_level) != 0:
        return False
    if when == "night":
        tod = int(s.timestep) % DAY_LENGTH
        if not (DUSK <= tod < DAWN or float(s.light_level) < DARK):
            return False
    return bool(s.melee_mobs.mask[0].any() or s.ranged_mobs.mask[0].any() or s.mob_projectiles.mask[0].any())


def main(argv: list[str] | None = None) -> int:
    p = dev_parser(__doc__, seeds="0-23", variants=False)
    p.add_argument("--calm", choices=("night", "always"), required=True)
    p.add_argument("--against", required=True, help="FILE:LABEL: the same skill file's rows, unchanged game")
    p.add_argument("--preset", default="rl", choices=("rl", "harness"))
    a = parse_dev_args(p, argv)
    label, ref = reference_rows(a.against, a.seeds, a.steps, a.preset)
    calm = _calm_fn()
    envs: dict[int, object] = {}
    removed = [0] * len(a.seeds)

    def on_reset(i: int, env) -> None:
        envs[i] = env

    def on_result(i: int, res) -> None:
        env = envs[i]
        if not res.done and calm_needed(env._np, a.calm):
            env._state = calm(env._state)  # takes the env out of its batch; the next step restacks
            removed[i] += 1

    cpu = time.process_time()
    rows = play_variant(
        Path(a.skill_file), a.seeds, a.steps, a.preset, on_reset=on_reset, on_result=on_result
    )
    for i, r in enumerate(rows):
        r["calmed_steps"] = removed[i]
    s = summary(rows) | {"cpu_seconds": time.process_time() - cpu}
    ref_summary = summary(ref)
    name = f"calm_{a.calm}"
    report = {
        "seeds": a.seeds,
        "steps": a.steps,
        "preset": a.preset,
        "calm": a.calm,
        "against": {"report": a.against, "label": label, "summary": ref_summary},
        "variants": {name: {"path": a.skill_file, "rows": rows, "summary": s}},
    }
    write_out(a.out, report)
    print(f"[{label}] {json.dumps(ref_summary)}")
    print(f"[{name}] {json.dumps(s)}")
    for line in comparison_lines(name, ref, rows):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
