"""Atomic ALEM actions: each helper returns one action index (0..55) and needs no observation."""

from __future__ import annotations

from compass.games.alem.names import (
    BUILD_ACTIONS,
    CRAFT_ACTIONS,
    DESCEND,
    DIRECTION_ACTIONS,
    DO,
    NOOP,
    PLACE_ACTIONS,
    REQUEST_FOOD,
    REQUESTABLE,
    REST,
    SLEEP,
    action_index,
)

ASCEND = 19


def noop() -> int:
    """Do nothing."""
    return NOOP


def do() -> int:
    """Interact with the faced tile: chop/mine, attack, drink, eat, revive, hit a coordination target."""
    return DO


def sleep() -> int:
    """Sleep (restores energy; the agent cannot act until energy is full; 2.5x damage taken)."""
    return SLEEP


def rest() -> int:
    """Rest to recover health (needs food, drink and energy above 0)."""
    return REST


def descend() -> int:
    """Go down a level (stand on a ``ladder down`` of a cleared level); all teammates come along."""
    return DESCEND


def ascend() -> int:
    """Go up a level (stand on a ``ladder up``)."""
    return ASCEND


def move(direction: str) -> int:
    """Move one tile ``north|south|east|west``; a blocked move only turns the agent to face that way."""
    try:
        return DIRECTION_ACTIONS[direction.lower()]
    except KeyError:
        raise ValueError(f"unknown direction {direction!r}; use north, south, east or west") from None


def face(direction: str) -> int:
    """Turn toward ``direction`` (same action as ``move``: it only turns when the tile is blocked)."""
    return move(direction)


def place(block: str) -> int:
    """Place ``stone``, ``table``, ``furnace``, ``plant`` (sapling) or ``torch`` on the faced tile."""
    try:
        return PLACE_ACTIONS[block.lower()]
    except KeyError:
        raise ValueError(f"cannot place {block!r}; one of {', '.join(PLACE_ACTIONS)}") from None


def craft(item: str) -> int:
    """Craft ``wood_pickaxe``, ``stone_sword``, ``iron_armour``, ``arrow``, ``torch``... (next to a table)."""
    key = item.lower().replace(" ", "_")
    try:
        return CRAFT_ACTIONS[key]
    except KeyError:
        raise ValueError(f"cannot craft {item!r}; one of {', '.join(CRAFT_ACTIONS)}") from None


def build(structure: str) -> int:
    """Build ``shelter``, ``forge`` or ``beacon`` on the faced construction site."""
    try:
        return BUILD_ACTIONS[structure.lower()]
    except KeyError:
        raise ValueError(f"cannot build {structure!r}; one of {', '.join(BUILD_ACTIONS)}") from None


def request(resource: str) -> int:
    """Ask teammates for one of food, drink, wood, stone, iron, coal, diamond, ruby, sapphire (10 steps)."""
    try:
        return REQUEST_FOOD + REQUESTABLE.index(resource.lower())
    except ValueError:
        raise ValueError(f"cannot request {resource!r}; one of {', '.join(REQUESTABLE)}") from None


def action(name: str, agent_id: int) -> int:
    """Index of a harness label (``"Make Wood Pickaxe"``, ``"Give to Agent 2"``) for ``agent_id``."""
    return action_index(name, agent_id)
