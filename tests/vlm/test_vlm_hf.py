"""The hf: backend with a tiny randomly initialised LLaVA built offline (tests/fakes/tiny_vlm.py)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from compass.vlm import VLMClient, VLMConfig, VLMError, VLMRequest
from tests.fakes.images import tiny_png

pytest.importorskip("transformers")
pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_vlm_dir(tmp_path_factory):
    from tests.fakes.tiny_vlm import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("tiny-vlm"))


async def test_hf_backend_answers_with_an_image(tiny_vlm_dir):
    client = VLMClient.from_spec(f"hf:{tiny_vlm_dir}", VLMConfig(max_tokens=6))
    request = VLMRequest(
        prompt="attack or move?", system="You are unit 1.", images=(tiny_png(),), tag="planner"
    )
    first, second = await asyncio.gather(client.complete(request), client.complete(request))
    assert isinstance(first.text, str)
    assert first.text == second.text  # greedy decoding at temperature 0
    assert first.backend == "hf" and first.model == str(tiny_vlm_dir) and first.cost_usd == 0.0
    # 4 image patch tokens plus the chat template's text tokens.
    assert first.prompt_tokens > 4
    assert 1 <= first.completion_tokens <= 6
    assert client.usage.tag("planner").calls == 2
    text_only = await client.complete(VLMRequest(prompt="status?", max_tokens=3))
    assert text_only.completion_tokens <= 3 and text_only.prompt_tokens < first.prompt_tokens
    await client.aclose()


async def test_hf_backend_bad_path_is_a_vlm_error(tmp_path):
    client = VLMClient.from_spec(f"hf:{tmp_path / 'no-model'}", VLMConfig(max_retries=0))
    with pytest.raises(VLMError, match="cannot load"):
        await client.complete(VLMRequest(prompt="x"))


def test_missing_transformers_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # makes `import transformers` fail
    with pytest.raises(VLMError, match=r"pip install 'compass-agents\[hf\]'"):
        VLMClient.from_spec("hf:/models/anything")
