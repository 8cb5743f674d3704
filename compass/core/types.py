"""The per-agent contract between environments and everything above them.

An adapter turns its native environment into one :class:`AgentView` per agent per step and
turns the family's action indices back into native actions. Everything above (comm, skills,
planner, runner) only ever sees these types.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, NotRequired, Protocol, TypedDict, TypeVar

import numpy as np

Team = Literal["ally", "enemy"]
Outcome = Literal["win", "loss", "timeout", "running"]


@dataclass(frozen=True)
class Entity:
    """One unit as an agent knows it.

    ``id`` is the entity's id in the family's vocabulary: for enemies the index ``j`` that
    ``attack`` targets (action ``6 + j`` in the combat family), for allies the agent id. Both are
    global, so reports about the same entity from different agents agree.

    Positions are absolute map coordinates (``x``, ``y``); ``rel_x``/``rel_y``/``distance`` are
    relative to the observer and divided by its sight range, as SMACv2 observations are.
    """

    id: int
    team: Team
    unit_type: str
    x: float
    y: float
    rel_x: float
    rel_y: float
    distance: float
    health: float
    shield: float = 0.0
    can_attack: bool = False
    last_action: int = 0
    visible: bool = True
    source: int | None = None  # agent that saw it, when relayed
    hops: int = 0
    age: int = 0  # steps since it was seen

    def relative_to(self, x: float, y: float, sight_range: float, attack_range: float) -> Entity:
        """The same entity seen from another position (used when relaying reports)."""
        dx, dy = (self.x - x) / sight_range, (self.y - y) / sight_range
        dist = math.hypot(dx, dy)
        can_attack = self.team == "enemy" and self.visible and dist * sight_range <= attack_range
        return replace(self, rel_x=float(dx), rel_y=float(dy), distance=dist, can_attack=can_attack)


_new = object.__new__
_set_attr = object.__setattr__


def new_entity(
    id: int,
    team: Team,
    unit_type: str,
    x: float,
    y: float,
    rel_x: float,
    rel_y: float,
    distance: float,
    health: float,
    shield: float = 0.0,
    can_attack: bool = False,
    last_action: int = 0,
    visible: bool = True,
    source: int | None = None,
    hops: int = 0,
    age: int = 0,
) -> Entity:
    """``Entity(...)`` with the same fields, about 2.5x cheaper, for the per-step hot paths (views, relays).

    The frozen dataclass's ``__init__`` sets each of the 16 fields through ``object.__setattr__``;
    this sets the instance dict once, with the same keys in the same order (so equality, hashing,
    repr and pickles are those of ``Entity(...)``).
    """
    e = _new(Entity)
    _set_attr(
        e,
        "__dict__",
        {
            "id": id,
            "team": team,
            "unit_type": unit_type,
            "x": x,
            "y": y,
            "rel_x": rel_x,
            "rel_y": rel_y,
            "distance": distance,
            "health": health,
            "shield": shield,
            "can_attack": can_attack,
            "last_action": last_action,
            "visible": visible,
            "source": source,
            "hops": hops,
            "age": age,
        },
    )
    return e


@dataclass(frozen=True)
class OwnUnit:
    """The observing agent's own unit, in terms every family has.

    What only one family knows (combat's shield and weapon cooldown, ALEM's inventory and
    needs) is in the view's typed ``obs``.
    """

    unit_type: str
    x: float
    y: float
    health: float
    sight_range: float
    attack_range: float  # how close an enemy must be to be hit (combat: shoot range; ALEM: 1 tile)
    last_action: int
    map_width: float
    map_height: float


def new_own_unit(
    unit_type: str,
    x: float,
    y: float,
    health: float,
    sight_range: float,
    attack_range: float,
    last_action: int,
    map_width: float,
    map_height: float,
) -> OwnUnit:
    """``OwnUnit(...)`` with the same fields, about 2x cheaper (one per agent per step; see :func:`new_entity`)."""
    u = _new(OwnUnit)
    _set_attr(
        u,
        "__dict__",
        {
            "unit_type": unit_type,
            "x": x,
            "y": y,
            "health": health,
            "sight_range": sight_range,
            "attack_range": attack_range,
            "last_action": last_action,
            "map_width": map_width,
            "map_height": map_height,
        },
    )
    return u


#: Types the isolated sandbox's wire (:mod:`compass.sandbox.wire`) pickles through a reducer of
#: its own (:func:`wire_plain`); the set is read per message.
WIRE_PLAIN: set[type] = set()


def wire_plain(*classes: type) -> None:
    """Let the isolated sandbox pickle instances of ``classes`` (a family's observation types,
    sent with every view) on a shorter path to the same bytes.

    Python's pickle finds how to pickle such an object by a generic ``__reduce_ex__`` that looks
    for hooks the class does not have; the wire's reducer returns the answer it would (the class,
    the instance dict): the same pickle, for about 60 % of the CPU. So a class registered here
    must pickle by its instance dict: no ``__slots__``, ``__reduce__``, ``__reduce_ex__``,
    ``__getstate__`` or ``__getnewargs(_ex)__`` of its own (``TypeError`` otherwise).
    """
    for cls in classes:
        own = [
            name
            for name in ("__reduce__", "__reduce_ex__", "__getstate__", "__getnewargs__", "__getnewargs_ex__")
            if getattr(cls, name, None) is not getattr(object, name, None)
        ]
        if own or any("__slots__" in vars(c) for c in cls.__mro__[:-1]):
            raise TypeError(
                f"{cls.__qualname__} does not pickle by its instance dict ({', '.join(own) or '__slots__'})"
            )
        WIRE_PLAIN.add(cls)


wire_plain(OwnUnit)

#: Types the wire sends as the changes since it last sent the object (:func:`wire_journaled`).
WIRE_JOURNALED: set[type] = set()


def wire_journaled(*classes: type) -> None:
    """Let the isolated sandbox send instances of ``classes`` (large state a view carries and a
    step changes a little, such as ALEM's map memory) as the changes they journal.

    Comparing large arrays with the copy last sent reads them whole every step, out of cache
    after the env's step; an object that knows what it wrote can say so instead. A class
    registered here keeps its state in its instance dict (numpy arrays and plain values) and
    changes only through methods that journal the change; it has ``wire_version() -> int`` (how
    many changes it has made), ``wire_since(version) -> tuple | None`` (the changes after
    ``version``, None when no longer kept) and ``wire_apply(changes)`` (makes them on a copy
    whose arrays are read-only, in the worker); instance attributes named ``_wire*`` (the
    journal) stay behind. The first time, or when the journal no longer reaches back, the wire
    sends the object whole.
    """
    for cls in classes:
        missing = [
            m for m in ("wire_version", "wire_since", "wire_apply") if not callable(getattr(cls, m, None))
        ]
        if missing:
            raise TypeError(f"{cls.__qualname__} cannot be journaled: no {', '.join(missing)}")
        WIRE_JOURNALED.add(cls)


ObsT = TypeVar("ObsT")

#: What every family's ``parse_obs`` accepts for the calling agent's own observation (served from
#: its view's data, not parsed). The sandbox passes it instead of the text to skills that do
#: nothing with their argument but ``parse_obs`` it (:func:`compass.sandbox.runtime.reads_text`).
CURRENT_OBS = "current"


@dataclass
class AgentView(Generic[ObsT]):
    """What one agent perceives at one step.

    ``text`` is derived from ``own`` and ``entities`` by the family's text function, so the text a
    VLM reads and the data a skill parses always agree. ``frame()`` renders lazily, and so does
    ``text`` when it is given as ``None`` with a ``text_fn``: it is written on first read (a
    planner, a recorder, a skill that reads its argument), never on a step nobody reads it.
    """

    agent_id: int
    family: str
    step: int
    alive: bool
    own: OwnUnit
    entities: tuple[Entity, ...]
    avail_actions: tuple[int, ...]
    text: str | None  # None: text_fn(view) on first read (see _LazyText below)
    #: the family's typed observation (combat: ``CombatObs``; ALEM: its ``ObsData``)
    obs: ObsT | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # Called with the view itself, so a copy with relayed entities renders them too.
    render: Callable[[AgentView], np.ndarray] | None = field(default=None, repr=False, compare=False)
    text_fn: Callable[[AgentView], str] | None = field(default=None, repr=False, compare=False)

    @property
    def enemies(self) -> list[Entity]:
        return [e for e in self.entities if e.team == "enemy"]

    @property
    def allies(self) -> list[Entity]:
        return [e for e in self.entities if e.team == "ally"]

    def frame(self) -> np.ndarray:
        """RGB ego frame (H, W, 3) uint8."""
        if self.render is None:
            raise RuntimeError(f"agent {self.agent_id}: this environment renders no frames")
        return self.render(self)

    def with_entities(self, entities: tuple[Entity, ...]) -> AgentView:
        """A copy with another entity set (e.g. plus relayed reports), text rebuilt (lazily)."""
        # Not dataclasses.replace: it would read (and so write) this view's text.
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.entities = tuple(entities)
        if self.text_fn is not None:
            view.__dict__["text"] = None
        return view


def new_view(
    agent_id: int,
    family: str,
    step: int,
    alive: bool,
    own: OwnUnit,
    entities: tuple[Entity, ...],
    avail_actions: tuple[int, ...],
    text: str | None,
    obs: Any,
    extra: dict[str, Any],
    render: Callable[[AgentView], np.ndarray] | None,
    text_fn: Callable[[AgentView], str] | None,
) -> AgentView:
    """``AgentView(...)`` with every field given, about 2x cheaper (one per agent per step): the
    instance dict set at once, its keys in the order ``__init__`` writes them, so the view is
    the same (equality, repr, pickles)."""
    view = _new(AgentView)
    _set_attr(
        view,
        "__dict__",
        {
            "agent_id": agent_id,
            "family": family,
            "step": step,
            "alive": alive,
            "own": own,
            "entities": entities,
            "avail_actions": avail_actions,
            "text": text,
            "obs": obs,
            "extra": extra,
            "render": render,
            "text_fn": text_fn,
        },
    )
    return view


class _LazyText:
    """``AgentView.text``: the stored string, or ``text_fn(view)`` written on first read.

    Rendering every agent's text every step cost more than the game step (ALEM's harness text
    ~1 ms per agent); most steps nobody reads it (skills that only ``parse_obs`` their argument
    are served from the view's data, see ``compass.sandbox.runtime``).
    """

    def __get__(self, view: AgentView | None, owner: type | None = None) -> Any:
        if view is None:
            return self
        d = view.__dict__
        text = d.get("text")
        if text is None:
            fn = d.get("text_fn")
            text = d["text"] = fn(view) if fn is not None else ""
        return text

    def __set__(self, view: AgentView, value: str | None) -> None:
        view.__dict__["text"] = value


# Installed after @dataclass so the generated __init__, __eq__ and replace() go through it.
AgentView.text = _LazyText()  # type: ignore[assignment]


class StepEvent(TypedDict):
    """Something worth finding again in a replay (a kill, say), as a family reports it.

    ``kind`` is a short word (``kill``, ``death``...), ``text`` a line a person reads; ``agent``
    is the agent it is about (for a kill: the killer), when one of ours is. A family may add
    JSON-serialisable fields of its own (combat: ``by``, ``target``).
    """

    kind: str
    text: str
    agent: NotRequired[int | None]


#: ``StepResult.info[EVENTS]``: the step's :class:`StepEvent` list (the runner traces it with the step).
EVENTS = "events"


@dataclass(frozen=True)
class StepResult:
    """The outcome of one joint step; ``info[EVENTS]`` may list the step's :class:`StepEvent` records."""

    views: list[AgentView]
    rewards: list[float]
    done: bool
    outcome: Outcome
    info: dict[str, Any]


class BatchStep(Protocol):
    """What an env adds to play many episodes in one batched step (``GameFamily.batch_envs``).

    :meth:`MultiAgentEnv.step` split in three: host work before the device step
    (``step_begin``), one device call for the envs of a batch (``step_batch``, called on any one of
    them with every env's input, in order), host work after (``step_end``). An ended episode's
    env gives ``step_idle()`` (its state, frozen: the output is dropped), so the batch keeps its
    shape (one compile per batch size). ``step_begin`` + ``step_batch`` + ``step_end`` must give
    the same result as ``step`` (``compass.games.conformance`` checks it).
    """

    #: False where this env cannot (e.g. its enemy team is driven from outside)
    can_batch: bool
    #: envs with equal keys can step in one batch
    batch_key: Any

    def step_begin(self, actions: list[int]) -> Any: ...

    def step_idle(self) -> Any: ...

    def step_batch(self, inputs: list[Any]) -> list[Any]: ...

    def step_end(self, out: Any) -> StepResult: ...


class MultiAgentEnv(Protocol):
    """What the runner needs from an adapter.

    Optional: ``checkpoint() -> Any`` and ``restore(cp) -> list[AgentView]`` (the state of an
    episode and going back to it), which the viewer uses to seek long episodes.
    """

    family: str
    n_agents: int
    n_actions: int
    scenario: str

    def reset(self, seed: int) -> list[AgentView]: ...

    def step(self, actions: list[int]) -> StepResult: ...

    def render_global(self) -> np.ndarray: ...
