"""Structured communication: typed messages, modes, the per-step protocol and its accounting."""

from compass.comm.accounting import CommStats, Traffic
from compass.comm.messages import EntityReport, Intent, Message, decode_message
from compass.comm.minimap import describe_relayed, minimap_text
from compass.comm.modes import VALID_MODES, CommMode, CommModeError, parse_mode
from compass.comm.protocol import CommProtocol, LossyLinks

__all__ = [
    "VALID_MODES",
    "CommMode",
    "CommModeError",
    "CommProtocol",
    "CommStats",
    "EntityReport",
    "Intent",
    "LossyLinks",
    "Message",
    "Traffic",
    "decode_message",
    "describe_relayed",
    "minimap_text",
    "parse_mode",
]
