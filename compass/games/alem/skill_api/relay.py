"""The ladder down relayed: the team's descent once any agent knows the ladder (docs/alem.md "The
ladder relayed").

Each agent's map memory is its own, and a skill keeps no state between steps: a teammate cannot
record where another agent saw the ladder. What reaches every agent each step is each teammate's
position and its request (alem shows it for 10 steps). Descend takes the whole team down wherever
it stands, so what the team needs is not that the armed agent learns where the ladder is, but that
the agent that knows it learns that the team is ready. The relay therefore runs the other way: an
agent ready for the descent that knows no ladder down requests :data:`READY_REQUEST` (a ruby: no
skill of the library asks for one, and mining one takes an iron pickaxe), and a teammate that knows
a ladder down and sees that request walks there and Descends. Like ``coordination.CALL_REQUEST``
this convention holds only among skills that keep it.
"""

from __future__ import annotations

from compass.games.alem.obs import ObsData, Teammate
from compass.games.alem.skill_api.actions import request
from compass.games.alem.skill_api.knowledge import nearest, team_alive
from compass.games.alem.skill_api.progress import armed_for_descent, descent_step

#: The request read as "ready for the descent, no ladder down known": the relay's signal.
READY_REQUEST = "ruby"


def ready_mates(d: ObsData) -> list[Teammate]:
    """Living teammates whose request is :data:`READY_REQUEST`, nearest first (teammates'
    requests reach every agent wherever it stands, for 10 steps after each request)."""
    return sorted((t for t in team_alive(d) if t.request == READY_REQUEST), key=lambda t: (t.dist, t.id))


def ready_signal_step(d: ObsData, from_step: int = 300, **armed: float) -> int | None:
    """Tell the team this agent is ready for the descent but knows no ladder down: the request
    :data:`READY_REQUEST`, or ``None``.

    Made when :func:`armed_for_descent` holds (``from_step`` and ``armed`` are its keywords),
    no ladder down is known, and this agent's request slot is free (a request lasts 10 steps: the
    signal costs one action in ten while the agent stays ready, and a food or drink request already
    open comes first). A teammate that knows a ladder answers with :func:`relay_descent_step`."""
    if d.my_request is not None or nearest(d, "ladder down") is not None:
        return None
    if not armed_for_descent(d, from_step=from_step, **armed):
        return None
    return request(READY_REQUEST)


def relay_descent_step(
    d: ObsData,
    from_step: int = 300,
    health: float = 5,
    supplies: float = 3,
    pickaxe: int = 0,
    sword: int = 0,
    min_energy: float = 0,
    dig: bool = True,
) -> int | None:
    """Answer a teammate's :data:`READY_REQUEST`: walk to the known ladder down and Descend (it
    takes the team, the ready teammate with it), or ``None``.

    Only while a living teammate signals (:func:`ready_mates`), this agent knows a ladder down, and
    :func:`armed_for_descent` holds for it with ``from_step``, ``health``, ``supplies``,
    ``pickaxe`` and ``sword`` (by default no tools of its own: the ready teammate holds them) and
    its energy is at least ``min_energy``. The walk is :func:`descent_step`'s (``dig``: through the
    stone round a ladder inside a mountain, where this agent's pickaxe mines it); no exploring."""
    if not ready_mates(d) or nearest(d, "ladder down") is None:
        return None
    return descent_step(
        d,
        from_step=from_step,
        seek_from=d.max_steps + 1,
        min_energy=min_energy,
        dig=dig,
        health=health,
        supplies=supplies,
        pickaxe=pickaxe,
        sword=sword,
    )
