"""Agent memory: a bounded local history per agent and the team's global entity memory."""

from compass.memory.global_memory import EntityKey, GlobalEntityMemory, Record
from compass.memory.graph import complete_graph, flood, hop_distances, link_graph
from compass.memory.local import KINDS, Entry, LocalMemory

__all__ = [
    "KINDS",
    "Entry",
    "EntityKey",
    "GlobalEntityMemory",
    "LocalMemory",
    "Record",
    "complete_graph",
    "flood",
    "hop_distances",
    "link_graph",
]
