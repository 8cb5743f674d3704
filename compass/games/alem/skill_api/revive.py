"""Reviving teammates, second pass: which bodies to walk to, and when (docs/alem.md "Reviving
teammates, second pass: team wipes").

alem revives a body at 1 health beside whatever killed it, and a body's needs do not change while
it lies dead (``update_player_intrinsics`` skips the dead), so a body left until the creature near
it has gone, or until dawn, loses nothing but the steps it would have played. On Hard tuning seeds
0-47 (main 99ed7b9) 63 of 151 revived agents died again within 50 steps, and a revive walk in the
dark on the overworld ended in the walker's death 9 times in 37 (5 in 91 by day). The library
does not call these: each wait scored below main on Hard 100,480-100,527 (night rule -0.84, creature
rule -0.65, both -0.71 team Total %), the night one moving walk deaths to the morning.

Every step helper returns an action index, or ``None`` when it has nothing to do.
"""

from __future__ import annotations

from compass.games.alem.obs import ObsData
from compass.games.alem.skill_api.below import body_in_danger
from compass.games.alem.skill_api.knowledge import Point, distance
from compass.games.alem.skill_api.survival import revive_step, shelter_time


def night_out(d: ObsData, dusk: int = 120, dawn: int = 265, dark: float = 0.35) -> bool:
    """Whether it is night on the overworld (the library's shelter window, or light below ``dark``).
    Below the overworld there is no night: always False."""
    return d.level == 0 and (shelter_time(d, dusk, dawn) or d.light < dark)


def body_threatened(d: ObsData, xy: Point, clear: int = 3) -> bool:
    """Whether a hostile creature this agent sees stands within ``clear`` tiles (Manhattan) of the
    body at ``xy``, or (below the overworld) the body lies in a ranged creature's line of fire.
    A body revived there comes back at 1 health beside its killer."""
    near = any(m.hostile and distance((m.x, m.y), xy) <= clear for m in d.mobs)
    return near or (d.level >= 1 and body_in_danger(d, xy))  # below: also a line of fire


def careful_revive_step(
    d: ObsData,
    reach: int = 30,
    clear: int = 3,
    night_reach: int = 2,
    dusk: int = 120,
    dawn: int = 265,
) -> int | None:
    """:func:`revive_step` that leaves a body where reviving it would kill it again or kill the
    reviver: a body with a hostile creature within ``clear`` tiles of it (or in a line of fire
    below: :func:`body_threatened`) is passed over (a farther safe one is revived instead), and on
    the overworld at night (:func:`night_out`) only a body within ``night_reach`` tiles is revived
    (one in the shelter beside the agent), the rest wait for dawn. ``clear`` 0 turns the first rule
    off, ``night_reach`` ``reach`` the second. ``None`` when no body qualifies or none can be
    reached."""
    if night_out(d, dusk, dawn):
        reach = min(reach, night_reach)
    skip = None if clear <= 0 else (lambda obs, xy: body_threatened(obs, xy, clear))
    return revive_step(d, reach=reach, skip=skip)


__all__ = ["body_threatened", "careful_revive_step", "night_out"]
