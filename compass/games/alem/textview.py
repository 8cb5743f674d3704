"""An ALEM :class:`AgentView` rebuilt from the harness text alone (``compass skills check``).

The text is what the adapter wrote for one agent at one step (``AgentView.text``), including the
"Reported by teammates:" block that relaying appends. :func:`view_from_text` parses it back into
the structured observation (:func:`~compass.games.alem.obs.parse_alem_text`) and builds the view
the adapter would have built from it: same agent, step, legal actions, own unit, teammates and
creatures (relayed creatures as not-visible entities), and the structured observation as the
view's typed ``obs`` (where skills read it). What the text does not carry stays out: the agent's map memory (skills fall back
to what is in view), blocks beyond the nearest of each kind, creature health.
"""

from __future__ import annotations

import re

from compass.core.types import AgentView, Entity
from compass.games.alem.env import FAMILY, _extra, _relayed_text
from compass.games.alem.extract import entities, own_unit
from compass.games.alem.names import MELEE_MOB_NAMES, PASSIVE_MOB_NAMES, RANGED_MOB_NAMES, SIGHT_RANGE
from compass.games.alem.obs import parse_alem_text

RELAYED_HEADER = "Reported by teammates:"
_RELAYED = re.compile(
    r"^- (.+?) \(x=(-?\d+), y=(-?\d+)\) \[relayed by Agent (\d+), (\d+) hops?, "
    r"seen (?:this step|(\d+) steps? ago)\]$"
)
# Relayed creatures get ids in the adapter's slot ranges (passive 100+, melee 200+, ranged 300+),
# which is how the skill API tells their kind.
_KIND_BASE = {
    **dict.fromkeys(PASSIVE_MOB_NAMES, 100),
    **dict.fromkeys(MELEE_MOB_NAMES, 200),
    **dict.fromkeys(RANGED_MOB_NAMES, 300),
}


def split_relayed(text: str) -> tuple[str, list[str]]:
    """The harness text and the lines of the appended "Reported by teammates:" block (if any)."""
    head, sep, tail = text.rpartition("\n\n" + RELAYED_HEADER + "\n")
    if not sep:
        return text, []
    return head, [line for line in tail.splitlines() if line.strip()]


def view_from_text(text: str, agent_id: int | None = None) -> AgentView:
    """The view an ALEM agent had when its text was ``text`` (see the module docstring).

    ``agent_id`` defaults to the one agent the text's teammate list leaves out.
    """
    if not text.strip():
        raise ValueError("empty ALEM observation text")
    base, relayed_lines = split_relayed(text)
    obs = parse_alem_text(base, agent_id)
    if not re.search(r"^Position: ", base, re.M):
        raise ValueError(f"not an ALEM observation (no 'Position:' line): {base[:60]!r}")
    ents = list(entities(obs))
    for k, line in enumerate(relayed_lines):
        m = _RELAYED.match(line)
        if m is None:
            raise ValueError(f"unreadable relayed line in ALEM observation: {line!r}")
        name, x, y = m.group(1), int(m.group(2)), int(m.group(3))
        dx, dy = x - obs.x, y - obs.y
        dist = (dx * dx + dy * dy) ** 0.5 / SIGHT_RANGE
        ents.append(
            Entity(
                id=_KIND_BASE.get(name, 200) + k,
                team="enemy",
                unit_type=name,
                x=float(x),
                y=float(y),
                rel_x=dx / SIGHT_RANGE,
                rel_y=dy / SIGHT_RANGE,
                distance=dist,
                health=0.0,
                visible=False,
                source=int(m.group(4)),
                hops=int(m.group(5)),
                age=int(m.group(6) or 0),
            )
        )
    view = AgentView(
        agent_id=obs.agent_id,
        family=FAMILY,
        step=obs.step,
        alive=obs.alive,
        own=own_unit(obs, 0),
        entities=tuple(ents),
        avail_actions=tuple(obs.legal_indices),
        text=text,
        obs=obs,
        extra=_extra(obs),
        text_fn=lambda v: _relayed_text(base, v),
    )
    return view
