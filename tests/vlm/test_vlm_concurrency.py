"""The per-client concurrency limit and reuse across event loops."""

from __future__ import annotations

import asyncio
import time

from compass.vlm import FakeBackend, VLMClient, VLMConfig, VLMRequest
from tests.fakes.fake_vlm_server import Reply


async def test_server_never_sees_more_than_the_limit(fake_vlm_server, fast_config):
    fake_vlm_server.responder = lambda request: Reply.slow(0.15, request.text.upper())
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "m"), fast_config(concurrency=3))
    start = time.perf_counter()
    results = await asyncio.gather(*(client.complete(VLMRequest(prompt=f"q{i}")) for i in range(9)))
    elapsed = time.perf_counter() - start
    assert [r.text for r in results] == [f"Q{i}" for i in range(9)]
    assert fake_vlm_server.max_in_flight == 3
    assert elapsed > 0.4  # at least three waves of 0.15 s (no upper bound: busy machines are slow)
    assert client.usage.total.calls == 9


async def test_limit_applies_to_in_process_backends(fast_config):
    running = 0
    peak = 0

    async def tracked(req):
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return "ok"

    client = VLMClient(FakeBackend(tracked), fast_config(concurrency=2))
    await asyncio.gather(*(client.complete(VLMRequest(prompt=str(i))) for i in range(6)))
    assert peak == 2


def test_client_survives_several_event_loops(fake_vlm_server):
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "m"), VLMConfig(concurrency=1))
    for _ in range(3):  # e.g. a synchronous caller using asyncio.run per step
        assert asyncio.run(client.complete(VLMRequest(prompt="x"))).text == "OK"
    assert len(fake_vlm_server.requests) == 3
