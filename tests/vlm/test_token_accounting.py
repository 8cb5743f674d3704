"""Like-for-like token accounting: reported usage wins, images are estimated by each provider's
published rule for the detail actually sent, ``detail`` goes on the wire, reports say which."""

from __future__ import annotations

import io
import math

import pytest
from PIL import Image

from compass.vlm import VLMClient, VLMRequest
from compass.vlm import tokens as vlm_tokens
from compass.vlm.image_tokens import anthropic_image_tokens, image_tokens, openai_image_tokens, png_size
from tests.fakes.fake_vlm_server import Reply

# Captured before the package conftest's autouse fixture replaces it for every test.
_REAL_ENCODING = vlm_tokens._encoding


def png_of(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (10, 20, 30)).save(buf, format="PNG")
    return buf.getvalue()


def test_png_size_reads_the_header_and_refuses_other_bytes():
    assert png_size(png_of(640, 360)) == (640, 360)
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(b"GIF89a" + b"\0" * 30)


@pytest.mark.parametrize(
    ("size", "model", "detail", "tokens"),
    [
        # OpenAI's worked examples: 1024x1024 high -> 768x768, 4 tiles; 2048x4096 -> 768x1536, 6 tiles.
        ((1024, 1024), "gpt-4o", "high", 85 + 170 * 4),
        ((2048, 4096), "gpt-4o", "high", 85 + 170 * 6),
        ((4096, 8192), "gpt-4o", "low", 85),
        # gpt-4o-mini bills images at 33x the tokens (and a 33x lower price).
        ((1024, 1024), "gpt-4o-mini", "high", 2833 + 5667 * 4),
        ((256, 256), "gpt-4o-mini-2024-07-18", "low", 2833),
        ((256, 256), "gpt-4o-mini", "auto", 2833 + 5667),  # auto: estimated as high (upper bound)
    ],
)
def test_openai_rule(size, model, detail, tokens):
    assert openai_image_tokens(*size, model, detail) == tokens


def test_anthropic_rule_caps_the_long_edge():
    assert anthropic_image_tokens(200, 200) == math.ceil(200 * 200 / 750)
    assert anthropic_image_tokens(3136, 1568) == math.ceil(1568 * 784 / 750)


def test_self_hosted_models_get_no_invented_image_cost():
    png = png_of(64, 64)
    assert image_tokens("openai", "Qwen2-VL-7B", png, "low", self_hosted=True) is None
    assert image_tokens("openai", "gpt-4o-mini", png, "low", self_hosted=True) == 2833
    assert image_tokens("hf", "tiny", png) is None


@pytest.mark.parametrize("detail", ["low", "high"])
async def test_detail_is_sent_and_estimated_when_usage_is_missing(fake_vlm_server, fast_config, detail):
    png = png_of(600, 600)
    fake_vlm_server.script = [Reply("done", usage=False)]
    client = VLMClient.from_spec(
        fake_vlm_server.spec("openai", "gpt-4o-mini"), fast_config(image_detail=detail)
    )
    completion = await client.complete(VLMRequest(prompt="a" * 40, images=(png,)))
    (part,) = fake_vlm_server.requests[0].image_parts
    assert part["image_url"]["detail"] == detail
    text = math.ceil(len("\n" + "a" * 40) / 4)
    image = 2833 if detail == "low" else 2833 + 5667 * 4  # 600x600 high: 4 tiles of 512
    assert completion.prompt_tokens == text + image
    assert completion.usage_source == "estimated"
    assert client.usage.total.estimated_calls == 1


async def test_reported_usage_wins_over_any_estimate(fake_vlm_server, fast_config):
    fake_vlm_server.script = [Reply("done", prompt_tokens=1234, completion_tokens=5)]
    client = VLMClient.from_spec(fake_vlm_server.spec("anthropic", "claude-3-haiku-20240307"), fast_config())
    completion = await client.complete(VLMRequest(prompt="hi", images=(png_of(1000, 1000),)))
    assert (completion.prompt_tokens, completion.completion_tokens) == (1234, 5)
    assert completion.usage_source == "reported" and client.usage.total.estimated_calls == 0


async def test_anthropic_images_are_estimated_by_pixels(fake_vlm_server, fast_config):
    fake_vlm_server.script = [Reply("done", usage=False)]
    client = VLMClient.from_spec(fake_vlm_server.spec("anthropic", "claude-3-haiku-20240307"), fast_config())
    completion = await client.complete(VLMRequest(prompt="abcd", images=(png_of(300, 150),)))
    assert completion.prompt_tokens == math.ceil(len("\nabcd") / 4) + 60  # 300*150/750


def test_default_counting_path_without_patches(monkeypatch, caplog):
    """The real tiktoken path: BPE counts where the encoding loads, else chars/4 with one warning."""
    monkeypatch.setattr(vlm_tokens, "_encoding", _REAL_ENCODING)
    text = "Enemy #0: stalker, distance 0.42, health 0.80, shield 0.50, can attack: yes"
    method = vlm_tokens.counting_method("gpt-4o")
    count = vlm_tokens.count_tokens(text, "gpt-4o")
    if method == vlm_tokens.APPROXIMATION:
        assert count == math.ceil(len(text) / 4)
    else:
        import tiktoken

        assert method == "o200k_base"
        assert count == len(tiktoken.get_encoding("o200k_base").encode(text))
    assert vlm_tokens.count_tokens(text, "gpt-4") > 0 and vlm_tokens.count_tokens("", "gpt-4o") == 0
