"""Communication modes and the parser for mode strings such as ``multihop`` or ``lossy:0.3:2``."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from compass.core.errors import CompassError

ModeName = Literal["multihop", "onehop", "full", "none", "lossy"]
Topology = Literal["sight", "complete", "none"]

VALID_MODES = ("multihop", "multihop:K", "onehop", "full", "none", "lossy:P", "lossy:P:DELAY")
_NAMES = ("multihop", "onehop", "full", "none", "lossy")


class CommModeError(CompassError, ValueError):
    """A mode string that does not parse."""


@dataclass(frozen=True)
class CommMode:
    """Who hears whom.

    ``topology`` is the link graph messages travel on, ``max_hops`` how far they travel, ``loss``
    the probability that one message on one link is dropped and ``delay`` how many steps relayed
    information takes to arrive.
    """

    name: ModeName
    max_hops: int
    loss: float = 0.0
    delay: int = 0

    @property
    def topology(self) -> Topology:
        return {"full": "complete", "none": "none"}.get(self.name, "sight")

    def __str__(self) -> str:
        if self.name == "lossy":
            return f"lossy:{self.loss:g}" + (f":{self.delay}" if self.delay else "")
        if self.name == "multihop":
            return f"multihop:{self.max_hops}"
        return self.name


def _fail(spec: str, why: str) -> CommModeError:
    head = spec.split(":", 1)[0].strip().lower()
    close = difflib.get_close_matches(head, _NAMES, n=1)
    hint = f" Did you mean {close[0]!r}?" if close and close[0] != head else ""
    return CommModeError(
        f"invalid comm mode {spec!r}: {why}.{hint} Valid modes: {', '.join(VALID_MODES)} "
        "(K = max hops >= 1, 0 <= P <= 1 drop probability per message per link, DELAY >= 0 steps)."
    )


def parse_mode(spec: str, max_hops: int = 3) -> CommMode:
    """Parse a mode string; ``max_hops`` is the hop limit of ``multihop`` and ``lossy``.

    ``multihop:K`` overrides the hop limit; ``onehop`` is ``multihop:1``; ``full`` reaches every
    alive ally in one hop regardless of distance; ``none`` shares nothing; ``lossy:P[:DELAY]`` is
    ``multihop`` where each message on each link is lost with probability P and relayed
    information arrives DELAY steps late.
    """
    if max_hops < 1:
        raise CommModeError(f"max_hops must be >= 1, got {max_hops}")
    parts = [p.strip() for p in str(spec).strip().lower().split(":")]
    name, args = parts[0], parts[1:]
    if name not in _NAMES:
        raise _fail(spec, f"unknown mode {name!r}")
    if name in ("onehop", "full", "none"):
        if args:
            raise _fail(spec, f"{name!r} takes no parameters")
        return CommMode(name, {"onehop": 1, "full": 1, "none": 0}[name])
    if name == "multihop":
        if len(args) > 1:
            raise _fail(spec, "multihop takes at most one parameter, the hop limit")
        hops = _int(spec, args[0], "K") if args else max_hops
        if hops < 1:
            raise _fail(spec, f"K must be >= 1, got {hops}")
        return CommMode("multihop", hops)
    if not args or len(args) > 2:
        raise _fail(spec, "lossy needs a drop probability and optionally a delay, e.g. 'lossy:0.3:2'")
    try:
        loss = float(args[0])
    except ValueError:
        raise _fail(spec, f"P must be a number, got {args[0]!r}") from None
    if not 0.0 <= loss <= 1.0:
        raise _fail(spec, f"P must be in [0, 1], got {loss:g}")
    delay = _int(spec, args[1], "DELAY") if len(args) == 2 else 0
    if delay < 0:
        raise _fail(spec, f"DELAY must be >= 0, got {delay}")
    return CommMode("lossy", max_hops, loss, delay)


def _int(spec: str, text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _fail(spec, f"{what} must be an integer, got {text!r}") from None
