"""Message accounting: per-step and cumulative counts of what the protocol put on the air."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Traffic:
    """Counts of link transmissions; one message crossing one link counts once.

    ``sent`` includes dropped messages, ``delivered = sent - dropped`` includes duplicates the
    receiver already knew, ``bytes`` sums the compact-JSON size of every sent message.
    """

    sent: int = 0
    delivered: int = 0
    dropped: int = 0
    bytes: int = 0
    entity_messages: int = 0
    intent_messages: int = 0

    def add(self, other: Traffic) -> None:
        self.sent += other.sent
        self.delivered += other.delivered
        self.dropped += other.dropped
        self.bytes += other.bytes
        self.entity_messages += other.entity_messages
        self.intent_messages += other.intent_messages


@dataclass
class CommStats:
    """The last exchange's traffic and the totals since reset."""

    step: int = -1
    last: Traffic = field(default_factory=Traffic)
    total: Traffic = field(default_factory=Traffic)

    def record(self, step: int, traffic: Traffic) -> None:
        """Book one exchange."""
        self.step = step
        self.last = traffic
        self.total.add(traffic)

    def as_dict(self) -> dict[str, float | int]:
        """Flat dict: last step's counts as-is, cumulative ones prefixed ``total_``."""
        out: dict[str, float | int] = {"step": self.step}
        out.update(asdict(self.last))
        out.update({f"total_{k}": v for k, v in asdict(self.total).items()})
        out["drop_rate"] = self.total.dropped / self.total.sent if self.total.sent else 0.0
        return out
