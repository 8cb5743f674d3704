"""Keys, request/usage types, pricing, token counting and spec parsing."""

from __future__ import annotations

import json

import pytest

from compass.vlm import (
    Completion,
    UsageMeter,
    VLMClient,
    VLMConfig,
    VLMError,
    VLMRequest,
    parse_spec,
    price_for,
    prompt_key,
    request_key,
)
from compass.vlm.pricing import cost_usd
from compass.vlm.tokens import approx_tokens, count_tokens, encoding_name
from tests.fakes.images import tiny_png


def req(**kw) -> VLMRequest:
    base = {
        "prompt": "p",
        "system": "s",
        "images": (b"img",),
        "max_tokens": 10,
        "temperature": 0.0,
        "tag": "a",
    }
    return VLMRequest(**{**base, **kw})


def test_request_key_is_stable_and_content_sensitive():
    key = request_key("openai", "gpt-4o", req())
    assert key == request_key("openai", "gpt-4o", req()) and len(key) == 64
    assert key == request_key("openai", "gpt-4o", req(tag="other"))  # tag is accounting, not content
    assert key == request_key("openai", "gpt-4o", req(temperature=0))  # int 0 == float 0.0
    variants = [
        request_key("anthropic", "gpt-4o", req()),
        request_key("openai", "gpt-4o-mini", req()),
        request_key("openai", "gpt-4o", req(prompt="q")),
        request_key("openai", "gpt-4o", req(system=None)),
        request_key("openai", "gpt-4o", req(images=(b"img2",))),
        request_key("openai", "gpt-4o", req(images=(b"img", b"img"))),
        request_key("openai", "gpt-4o", req(max_tokens=11)),
        request_key("openai", "gpt-4o", req(temperature=0.7)),
    ]
    assert len({key, *variants}) == len(variants) + 1


def test_prompt_key_ignores_backend_settings():
    assert prompt_key(req()) == prompt_key(req(max_tokens=99, temperature=1.0, tag="x"))
    assert prompt_key(req()) != prompt_key(req(images=()))
    assert prompt_key(req()) != prompt_key(req(system="t"))
    assert VLMClient.prompt_key(req()) == prompt_key(req())


def test_request_accepts_a_list_and_rejects_arrays():
    assert VLMRequest(prompt="p", images=[b"a", b"b"]).images == (b"a", b"b")
    with pytest.raises(TypeError, match="PNG bytes"):
        VLMRequest(prompt="p", images=("not bytes",))


def test_defaults_fill_only_unset_fields():
    filled = VLMRequest(prompt="p", max_tokens=5).with_defaults(max_tokens=1024, temperature=0.0)
    assert (filled.max_tokens, filled.temperature) == (5, 0.0)


def completion(**kw) -> Completion:
    base = dict(
        text="t",
        prompt_tokens=100,
        completion_tokens=10,
        latency_s=0.5,
        cost_usd=0.01,
        cached=False,
        backend="openai",
        model="m",
        key="k",
        attempts=1,
    )
    return Completion(**{**base, **kw})


def test_usage_meter_aggregates_per_tag_and_is_json():
    meter = UsageMeter()
    meter.record(completion(), "planner")
    meter.record(completion(attempts=3, latency_s=1.5), "planner")
    meter.record(completion(cached=True, cost_usd=0.0, attempts=0, latency_s=0.001), "comm")
    meter.record_error("comm", attempts=5)
    summary = json.loads(json.dumps(meter.summary()))
    total, planner, comm = summary["total"], summary["by_tag"]["planner"], summary["by_tag"]["comm"]
    assert total["calls"] == 3 and total["cached"] == 1 and total["errors"] == 1
    assert total["retries"] == 2 + 4
    assert total["prompt_tokens"] == 300 and total["total_tokens"] == 330
    assert total["cost_usd"] == pytest.approx(0.02)
    assert planner["latency_s_mean"] == pytest.approx(1.0) and planner["latency_s_max"] == 1.5
    assert comm["calls"] == 1 and comm["cost_usd"] == 0 and comm["latency_s_mean"] == 0.0
    assert meter.tag("nobody").calls == 0
    meter.reset()
    assert meter.summary()["total"]["calls"] == 0


def test_prices():
    assert price_for("openai", "gpt-4o-mini") == (0.15, 0.60)
    assert price_for("openai", "gpt-4o-mini-2024-07-18") == (0.15, 0.60)  # longest prefix wins
    assert price_for("openai", "gpt-4o-2024-08-06") == (2.5, 10.0)
    assert price_for("anthropic", "claude-3-haiku-20240307") == (0.25, 1.25)
    assert price_for("anthropic", "claude-3-5-haiku-20241022") == (0.8, 4.0)
    assert price_for("hf", "gpt-4o") == (0.0, 0.0)
    assert price_for("replay", "x") == (0.0, 0.0)
    assert price_for("local", "qwen2-vl") == (0.0, 0.0)
    assert price_for("openai", "some-new-model") is None
    assert price_for("openai", "gpt-4o", {"gpt-4o": (1.0, 2.0)}) == (1.0, 2.0)
    assert price_for("local", "qwen2-vl", {"qwen2-vl": (0.1, 0.1)}) == (0.1, 0.1)
    assert cost_usd((2.5, 10.0), 1_000_000, 100_000) == pytest.approx(3.5)
    assert cost_usd(None, 10, 10) == 0.0


def test_price_override_from_config():
    client = VLMClient.from_spec("fake:", VLMConfig(prices={"fake": (1.0, 1.0)}))
    assert client._price == (1.0, 1.0)


def test_token_fallback_is_chars_over_four():
    # The conftest makes tiktoken unavailable, as it is offline without a cached BPE file.
    assert approx_tokens("abcde") == 2
    assert count_tokens("abcdefgh", "gpt-4o") == 2
    assert count_tokens("", "gpt-4o") == 0
    assert encoding_name("gpt-4o-mini") == "o200k_base"
    assert encoding_name("claude-3-haiku") == "cl100k_base"


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini", None)),
        (
            "openai:Qwen/Qwen2-VL-7B@http://localhost:8000/v1",
            ("openai", "Qwen/Qwen2-VL-7B", "http://localhost:8000/v1"),
        ),
        (
            "anthropic:claude-3-haiku-20240307@http://h:1",
            ("anthropic", "claude-3-haiku-20240307", "http://h:1"),
        ),
        ("hf:/models/with@sign", ("hf", "/models/with@sign", None)),
        ("replay:runs/a", ("replay", "runs/a", None)),
        ("fake:", ("fake", "", None)),
    ],
)
def test_parse_spec(spec, parsed):
    result = parse_spec(spec)
    assert (result.prefix, result.model, result.base_url) == parsed


@pytest.mark.parametrize("spec", ["gemini:pro", "gpt-4o", "", "openai:gpt-4o@localhost:8000"])
def test_bad_specs_list_the_valid_prefixes(spec):
    with pytest.raises(VLMError) as info:
        VLMClient.from_spec(spec)
    message = str(info.value)
    assert "openai:" in message or "http(s) URL" in message
    if not spec.startswith("openai"):
        for prefix in ("openai:", "anthropic:", "hf:", "replay:", "fake:"):
            assert prefix in message


def test_png_helper_round_trips():
    import numpy as np

    from compass.vlm import to_png
    from compass.vlm.images import to_pil

    frame = np.zeros((8, 6, 3), dtype=np.uint8)
    frame[2, 3] = (255, 0, 0)
    png = to_png(frame)
    assert png.startswith(b"\x89PNG") and to_png(png) == png
    assert np.array_equal(np.asarray(to_pil(png)), frame)
    assert to_png(to_pil(tiny_png())).startswith(b"\x89PNG")
