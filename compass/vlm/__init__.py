"""One async ``complete()`` for every vision-language-model backend.

>>> client = VLMClient.from_spec("openai:gpt-4o-mini", VLMConfig(cache_dir="~/.cache/compass/vlm"))
>>> completion = await client.complete(VLMRequest(prompt="Where is the enemy?", images=(png,), tag="planner"))

See ``docs/vlm.md`` for backends, spec strings, caching, replay and accounting.
"""

from compass.vlm.backends.base import Backend, BackendReply
from compass.vlm.backends.fake import FakeBackend
from compass.vlm.cache import ResponseCache
from compass.vlm.client import VLMClient
from compass.vlm.config import VLMConfig
from compass.vlm.errors import BackendError, EmptyReply, MalformedReply, VLMError, VLMFatalError
from compass.vlm.images import to_png
from compass.vlm.keys import image_hash, prompt_key, request_key
from compass.vlm.pricing import DEFAULT_PRICES, price_for
from compass.vlm.spec import PREFIXES, parse_spec
from compass.vlm.tokens import count_tokens
from compass.vlm.trace import read_vlm_records, vlm_trace_record
from compass.vlm.types import Completion, UsageMeter, UsageStats, VLMRequest

__all__ = [
    "DEFAULT_PRICES",
    "PREFIXES",
    "Backend",
    "BackendError",
    "BackendReply",
    "Completion",
    "EmptyReply",
    "FakeBackend",
    "MalformedReply",
    "ResponseCache",
    "UsageMeter",
    "UsageStats",
    "VLMClient",
    "VLMConfig",
    "VLMError",
    "VLMFatalError",
    "VLMRequest",
    "count_tokens",
    "image_hash",
    "parse_spec",
    "price_for",
    "prompt_key",
    "read_vlm_records",
    "request_key",
    "to_png",
    "vlm_trace_record",
]
