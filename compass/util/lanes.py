"""Device state of a batch of envs (one episode each), stacked on a leading axis.

Batched episodes (:class:`compass.core.types.BatchStep`) step N envs of one kind with one vmapped
call. Their states stay stacked on the device from step to step (:class:`Lanes`); an env in a
batch reads its own slice only when something asks (a checkpoint, a policy reading native
observations). :class:`InLanes` gives an env ``_key`` and ``_state`` attributes that are its own
or its slice, whichever holds; assigning either takes the env out of its batch.
"""

from __future__ import annotations

from functools import cache
from typing import Any


class Lanes:
    """The stacked ``(key, state)`` of ``envs`` (each an :class:`InLanes`), in their order."""

    def __init__(self, envs: list[Any]) -> None:
        import jax
        import jax.numpy as jnp

        self.envs = envs
        self.keys = jnp.stack([e._key for e in envs])
        self.states = jax.tree.map(lambda *xs: jnp.stack(xs), *[e._state for e in envs])
        self._sliced: dict[int, tuple] = {}
        for b, e in enumerate(envs):
            e._lane = (self, b)

    @classmethod
    def of(cls, envs: list[Any]) -> Lanes:
        """The batch ``envs`` are in (in this order), or a new one stacked from their states."""
        lane = envs[0]._lane
        lanes = lane[0] if lane is not None else None
        if lanes is None or lanes.envs != envs or any(e._lane != (lanes, b) for b, e in enumerate(envs)):
            return cls(envs)
        return lanes

    def advance(self, keys: Any, states: Any) -> None:
        """The keys and states after a batched step."""
        self.keys, self.states, self._sliced = keys, states, {}

    def slice(self, b: int) -> tuple:
        """Lane ``b``'s ``(key, state)``, as one env would hold them. The first ask after a step
        unstacks every lane in one call (asking envs, e.g. a policy reading native observations,
        ask for all of them)."""
        if not self._sliced:
            self._sliced = dict(enumerate(_unstack()(self.keys, self.states)))
        return self._sliced[b]


@cache
def _unstack():
    import jax

    @jax.jit
    def unstack(keys, states):
        return [(keys[b], jax.tree.map(lambda x, b=b: x[b], states)) for b in range(keys.shape[0])]

    return unstack


def keep_ended(live: Any, new: Any, old: Any) -> Any:
    """Inside jit: ``new`` where ``live`` (per lane), else ``old``: ended episodes stay frozen."""
    import jax
    import jax.numpy as jnp

    def keep(n, o):
        return jnp.where(live.reshape(live.shape + (1,) * (n.ndim - 1)), n, o)

    return jax.tree.map(keep, new, old)


class InLanes:
    """Mixin: ``_key`` and ``_state`` are the env's own, or its slice of a :class:`Lanes` batch."""

    _lane: tuple[Lanes, int] | None = None
    _device: tuple = (None, None)  # (key, state) while the env is in no batch

    @property
    def _key(self) -> Any:
        return self._lane[0].slice(self._lane[1])[0] if self._lane is not None else self._device[0]

    @_key.setter
    def _key(self, key: Any) -> None:
        self._device = (key, self._state)
        self._lane = None

    @property
    def _state(self) -> Any:
        return self._lane[0].slice(self._lane[1])[1] if self._lane is not None else self._device[1]

    @_state.setter
    def _state(self, state: Any) -> None:
        self._device = (self._key, state)
        self._lane = None

    @property
    def _has_state(self) -> bool:
        """Whether there is a state (without slicing it out of a batch: that copies it)."""
        return self._lane is not None or self._device[1] is not None

    def _leave_lanes(self) -> None:
        """Out of any batch, with nothing copied out of it (the caller sets key and state next)."""
        self._lane, self._device = None, (None, None)
