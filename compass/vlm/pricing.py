"""USD prices per million tokens, and the cost of one call."""

from __future__ import annotations

from collections.abc import Mapping

Price = tuple[float, float]  # (USD per 1M prompt tokens, USD per 1M completion tokens)

#: List prices; a model name matches its exact entry, else the longest entry it starts with
#: (so ``gpt-4o-mini-2024-07-18`` is priced as ``gpt-4o-mini``, not ``gpt-4o``).
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "claude-3-haiku-20240307": (0.25, 1.25),
    "claude-3-haiku": (0.25, 1.25),
    "claude-3-5-haiku": (0.80, 4.00),
}


def _free_backends() -> frozenset[str]:
    """Backends that run on our own hardware or answer from a recording (``BackendKind.free``);
    ``local`` is kept for usage records written before the registry."""
    from compass.vlm.spec import BACKENDS

    return frozenset({p for p, b in BACKENDS.items() if b.free} | {"local"})


def _lookup(model: str, table: Mapping[str, Price]) -> Price | None:
    if model in table:
        return table[model]
    matches = [name for name in table if model.startswith(name)]
    return table[max(matches, key=len)] if matches else None


def price_for(backend: str, model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model`` on ``backend``: overrides first, then free backends, then the list.

    ``None`` means unknown (the caller decides whether that deserves a warning).
    """
    if overrides:
        price = _lookup(model, overrides)
        if price is not None:
            return price
    if backend in _free_backends():
        return (0.0, 0.0)
    return _lookup(model, DEFAULT_PRICES)


def cost_usd(price: Price | None, prompt_tokens: int, completion_tokens: int) -> float:
    """Cost of one call; an unknown price counts as free."""
    if price is None:
        return 0.0
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
