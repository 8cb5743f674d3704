"""The openai/anthropic backends, driving the real SDK clients at the fake wire-format server."""

from __future__ import annotations

import time

import pytest

from compass.vlm import VLMClient, VLMError, VLMRequest
from tests.fakes.fake_vlm_server import FakeVLMServer, Reply

APIS = ["openai", "anthropic"]
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-3-haiku-20240307"}


def client_for(server: FakeVLMServer, api: str, config) -> VLMClient:
    return VLMClient.from_spec(server.spec(api, MODELS[api]), config)


@pytest.mark.parametrize("api", APIS)
async def test_well_formed_reply_with_images(api, fake_vlm_server, fast_config, png, monkeypatch):
    # The hosted spec (no @URL: priced, key required), redirected by the SDK's own base-URL variable.
    monkeypatch.setenv(f"{api.upper()}_API_KEY", "sk-test-123")
    url = fake_vlm_server.openai_url if api == "openai" else fake_vlm_server.base_url
    monkeypatch.setenv(f"{api.upper()}_BASE_URL", url)
    fake_vlm_server.script = [Reply("attack 3", prompt_tokens=1000, completion_tokens=10)]
    client = VLMClient.from_spec(f"{api}:{MODELS[api]}", fast_config())
    other = png + b""  # same bytes, distinct object: images are sent in order
    completion = await client.complete(
        VLMRequest(
            prompt="Which enemy?", system="You are unit 1.", images=(png, other), max_tokens=64, tag="planner"
        )
    )

    assert completion.text == "attack 3"
    assert (completion.prompt_tokens, completion.completion_tokens) == (1000, 10)
    assert completion.backend == api and completion.model == MODELS[api]
    assert not completion.cached and completion.attempts == 1 and completion.latency_s > 0
    price_in, price_out = (0.15, 0.60) if api == "openai" else (0.25, 1.25)
    assert completion.cost_usd == pytest.approx((1000 * price_in + 10 * price_out) / 1e6)
    assert len(completion.key) == 64

    (request,) = fake_vlm_server.requests
    assert request.api == api and request.model == MODELS[api]
    assert request.api_key == "sk-test-123"
    assert request.system == "You are unit 1."
    assert request.text == "Which enemy?"
    assert request.images == [png, png]
    if api == "openai":
        assert request.image_parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
        assert request.body["max_completion_tokens"] == 64  # the OpenAI API's current name
    else:
        assert request.image_parts[0]["source"]["media_type"] == "image/png"
        assert request.image_parts[0]["source"]["type"] == "base64"
        assert request.body["max_tokens"] == 64
    if api == "openai" or client.backend.sends_temperature:
        assert request.body["temperature"] == 0.0
    assert request.headers.get("x-stainless-retry-count") == "0"  # SDK retries are off
    await client.aclose()


@pytest.mark.parametrize("api", APIS)
async def test_rate_limit_then_success_counts_the_retry(api, fake_vlm_server, fast_config):
    fake_vlm_server.script = [Reply.error(429, retry_after=0.2), "ok"]
    client = client_for(fake_vlm_server, api, fast_config())
    start = time.perf_counter()
    completion = await client.complete(VLMRequest(prompt="hi", tag="comm"))
    assert completion.text == "ok"
    assert completion.attempts == 2
    assert time.perf_counter() - start >= 0.2  # Retry-After honoured over the 1 ms backoff
    assert len(fake_vlm_server.requests) == 2
    assert client.usage.tag("comm").retries == 1
    assert client.usage.summary()["total"]["retries"] == 1


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_exhaust_retries(api, status, fake_vlm_server, fast_config):
    fake_vlm_server.responder = lambda request: Reply.error(status)
    client = client_for(fake_vlm_server, api, fast_config(max_retries=2))
    with pytest.raises(VLMError) as info:
        await client.complete(VLMRequest(prompt="hi", tag="planner"))
    message = str(info.value)
    assert api in message and MODELS[api] in message
    assert f"status {status}" in message
    assert "after 3 attempts" in message
    assert len(fake_vlm_server.requests) == 3
    stats = client.usage.tag("planner")
    assert (stats.errors, stats.retries, stats.calls) == (1, 2, 0)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("status", [400, 401])
async def test_client_errors_are_not_retried(api, status, fake_vlm_server, fast_config):
    fake_vlm_server.responder = lambda request: Reply.error(status)
    client = client_for(fake_vlm_server, api, fast_config())
    with pytest.raises(VLMError, match=rf"after 1 attempt \(not retryable\) \(status {status}\)"):
        await client.complete(VLMRequest(prompt="hi"))
    assert len(fake_vlm_server.requests) == 1


async def test_auth_error_names_the_key_variable(fake_vlm_server, fast_config):
    fake_vlm_server.script = [401]
    client = client_for(fake_vlm_server, "openai", fast_config())
    with pytest.raises(VLMError, match="OPENAI_API_KEY"):
        await client.complete(VLMRequest(prompt="hi"))


@pytest.mark.parametrize("api", APIS)
async def test_slow_reply_times_out_and_is_retried(api, fake_vlm_server, fast_config):
    # Spare "on time" replies: on a busy machine a retry may itself miss the 0.3 s deadline.
    fake_vlm_server.script = [Reply.slow(3.0, "late"), "on time", "on time", "on time"]
    client = client_for(fake_vlm_server, api, fast_config(timeout_s=0.3))
    completion = await client.complete(VLMRequest(prompt="hi"))
    # The late reply was abandoned at the timeout and the retry answered (no upper time bound
    # here: a busy machine must not fail this test).
    assert completion.text == "on time" and completion.attempts >= 2
    assert 2 <= len(fake_vlm_server.requests) <= completion.attempts  # an attempt may time out unsent


@pytest.mark.parametrize("api", APIS)
async def test_timeouts_exhaust_retries(api, fake_vlm_server, fast_config):
    fake_vlm_server.responder = lambda request: Reply.slow(3.0)
    client = client_for(fake_vlm_server, api, fast_config(timeout_s=0.2, max_retries=1))
    with pytest.raises(VLMError, match=r"after 2 attempts \(no HTTP status\): timed out"):
        await client.complete(VLMRequest(prompt="hi"))


@pytest.mark.parametrize("api", APIS)
async def test_truncated_json_is_retried(api, fake_vlm_server, fast_config):
    fake_vlm_server.script = [Reply.truncated(), "fine"]
    client = client_for(fake_vlm_server, api, fast_config())
    completion = await client.complete(VLMRequest(prompt="hi"))
    assert completion.text == "fine" and completion.attempts == 2


@pytest.mark.parametrize("api", APIS)
async def test_truncated_json_every_time_is_a_clear_error(api, fake_vlm_server, fast_config):
    fake_vlm_server.responder = lambda request: Reply.truncated()
    client = client_for(fake_vlm_server, api, fast_config(max_retries=1))
    with pytest.raises(VLMError, match=r"after 2 attempts .*not valid JSON"):
        await client.complete(VLMRequest(prompt="hi"))


async def test_connection_refused_is_retried_then_reported(fast_config):
    with FakeVLMServer() as server:
        spec = server.spec("openai", "gpt-4o-mini")
    client = VLMClient.from_spec(spec, fast_config(max_retries=1))  # server is gone now
    with pytest.raises(VLMError, match=r"after 2 attempts .*connection error"):
        await client.complete(VLMRequest(prompt="hi"))


@pytest.mark.parametrize("api", APIS)
def test_missing_api_key_names_the_env_var(api, fast_config):
    var = f"{api.upper()}_API_KEY"
    with pytest.raises(VLMError, match=var):
        VLMClient.from_spec(f"{api}:{MODELS[api]}", fast_config())


@pytest.mark.parametrize("api", APIS)
def test_hosted_api_with_key_builds(api, fast_config, monkeypatch):
    monkeypatch.setenv(f"{api.upper()}_API_KEY", "sk-x")
    client = VLMClient.from_spec(f"{api}:{MODELS[api]}", fast_config())
    assert client.backend.cache_id == api and client.label == f"{api}:{MODELS[api]}"


async def test_local_server_needs_no_key(fake_vlm_server, fast_config):
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "qwen2-vl"), fast_config())
    completion = await client.complete(VLMRequest(prompt="hi", max_tokens=7))
    assert fake_vlm_server.requests[0].api_key == "EMPTY"
    assert fake_vlm_server.requests[0].body["max_tokens"] == 7  # what compatible servers understand
    assert completion.cost_usd == 0.0  # self-hosted: free unless VLMConfig.prices names the model


async def test_anthropic_base_url_with_v1_is_tolerated(fake_vlm_server, fast_config):
    client = VLMClient.from_spec(
        f"anthropic:claude-3-haiku-20240307@{fake_vlm_server.base_url}/v1", fast_config()
    )
    assert (await client.complete(VLMRequest(prompt="hi"))).text == "OK"
    assert fake_vlm_server.requests[0].path == "/v1/messages"


@pytest.mark.parametrize("api", APIS)
async def test_missing_usage_is_counted_locally(api, fake_vlm_server, fast_config):
    fake_vlm_server.script = [Reply("12345678", usage=False)]
    client = client_for(fake_vlm_server, api, fast_config())
    completion = await client.complete(VLMRequest(prompt="a" * 40, system="b" * 19))
    # tiktoken cannot load offline (the conftest forces that), so chars/4 rounded up is used.
    assert completion.prompt_tokens == 15  # ceil((19 + 1 + 40) / 4)
    assert completion.completion_tokens == 2


async def test_a_broken_responder_is_reported_not_hung(fake_vlm_server, fast_config):
    fake_vlm_server.responder = lambda request: 1 / 0
    client = client_for(fake_vlm_server, "openai", fast_config(max_retries=0))
    with pytest.raises(VLMError, match="FakeVLMServer responder error: ZeroDivisionError"):
        await client.complete(VLMRequest(prompt="hi"))
    assert isinstance(fake_vlm_server.errors[0], ZeroDivisionError)
