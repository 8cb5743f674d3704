"""Backends behind :class:`~compass.vlm.client.VLMClient`; SDK-backed ones import their SDK lazily."""

from compass.vlm.backends.base import Backend, BackendReply
from compass.vlm.backends.fake import FakeBackend

__all__ = ["Backend", "BackendReply", "FakeBackend"]
