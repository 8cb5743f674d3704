"""The disk response cache, alone and behind VLMClient."""

from __future__ import annotations

import json
import logging

import pytest

from compass.vlm import ResponseCache, VLMClient, VLMRequest
from tests.fakes.fake_vlm_server import Reply

KEY = "ab" + "0" * 62
RECORD = {"text": "hello", "prompt_tokens": 3, "completion_tokens": 1}


def test_round_trip_sharded_and_atomic(tmp_path):
    cache = ResponseCache(tmp_path)
    assert cache.get(KEY) is None
    cache.put(KEY, RECORD)
    assert cache.path(KEY) == tmp_path / "ab" / f"{KEY}.json"
    stored = cache.get(KEY)
    assert stored is not None and {k: stored[k] for k in RECORD} == RECORD and stored["key"] == KEY
    assert [p.name for p in (tmp_path / "ab").iterdir()] == [f"{KEY}.json"]  # no temp files left
    cache.put(KEY, {**RECORD, "text": "again"})
    assert cache.get(KEY)["text"] == "again"


@pytest.mark.parametrize("content", ['{"text": "hel', "", "[1, 2]", '{"text": 3}', "\x00\xff garbage"])
def test_corrupt_entry_is_a_miss_with_a_warning(tmp_path, caplog, content):
    cache = ResponseCache(tmp_path)
    cache.path(KEY).parent.mkdir(parents=True)
    cache.path(KEY).write_text(content, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="compass.vlm.cache"):
        assert cache.get(KEY) is None
    assert "treating as a miss" in caplog.text


def test_unwritable_cache_only_warns(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = ResponseCache(blocker)  # a file where the directory should be
    with caplog.at_level(logging.WARNING, logger="compass.vlm.cache"):
        cache.put(KEY, RECORD)
    assert "cannot write" in caplog.text


async def test_cache_hit_is_free_and_skips_the_server(fake_vlm_server, fast_config, tmp_path, png):
    fake_vlm_server.script = [Reply("move west", prompt_tokens=500, completion_tokens=5)]
    config = fast_config(cache_dir=tmp_path / "cache", prices={"gpt-4o-mini": (0.15, 0.6)})
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "gpt-4o-mini"), config)
    request = VLMRequest(prompt="where?", images=(png,), tag="planner")

    first = await client.complete(request)
    second = await client.complete(request)
    assert len(fake_vlm_server.requests) == 1
    assert not first.cached and first.cost_usd > 0
    assert second.cached and second.cost_usd == 0.0 and second.attempts == 0
    assert (second.text, second.prompt_tokens, second.key) == ("move west", 500, first.key)

    # A fresh client over the same directory (a later run) is served from disk too.
    other = VLMClient.from_spec(fake_vlm_server.spec("openai", "gpt-4o-mini"), config)
    assert (await other.complete(request)).cached
    assert len(fake_vlm_server.requests) == 1

    stats = client.usage.tag("planner")
    assert (stats.calls, stats.cached, stats.prompt_tokens) == (2, 1, 1000)
    assert stats.cost_usd == pytest.approx(first.cost_usd)


async def test_settings_and_servers_are_part_of_the_key(fake_vlm_server, fast_config, tmp_path):
    config = fast_config(cache_dir=tmp_path)
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "m"), config)
    await client.complete(VLMRequest(prompt="x"))
    await client.complete(VLMRequest(prompt="x", temperature=0.5))
    await client.complete(VLMRequest(prompt="x", max_tokens=3))
    await VLMClient.from_spec(fake_vlm_server.spec("anthropic", "m"), config).complete(VLMRequest(prompt="x"))
    assert len(fake_vlm_server.requests) == 4
    await client.complete(VLMRequest(prompt="x", max_tokens=1024, tag="other"))  # explicit default, other tag
    assert len(fake_vlm_server.requests) == 4


async def test_corrupt_cache_file_means_a_new_call(fake_vlm_server, fast_config, tmp_path, caplog):
    fake_vlm_server.script = ["one", "two"]
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "m"), fast_config(cache_dir=tmp_path))
    first = await client.complete(VLMRequest(prompt="x"))
    client.cache.path(first.key).write_text('{"text": "on', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="compass.vlm.cache"):
        second = await client.complete(VLMRequest(prompt="x"))
    assert not second.cached and second.text == "two"
    assert len(fake_vlm_server.requests) == 2
    assert "corrupt" in caplog.text
    assert json.loads(client.cache.path(first.key).read_text())["text"] == "two"  # repaired
    assert (await client.complete(VLMRequest(prompt="x"))).cached


async def test_errors_are_not_cached(fake_vlm_server, fast_config, tmp_path):
    fake_vlm_server.script = [400, "ok"]
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "m"), fast_config(cache_dir=tmp_path))
    with pytest.raises(Exception, match="status 400"):
        await client.complete(VLMRequest(prompt="x"))
    assert (await client.complete(VLMRequest(prompt="x"))).text == "ok"
