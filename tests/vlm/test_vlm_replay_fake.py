"""The replay backend (recorded traces) and the in-process fake backend."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from compass.vlm import (
    BackendError,
    BackendReply,
    Completion,
    FakeBackend,
    VLMClient,
    VLMError,
    VLMRequest,
    prompt_key,
    vlm_trace_record,
)
from tests.fakes.images import tiny_png

RED, BLUE = tiny_png((255, 0, 0)), tiny_png((0, 0, 255))


def _requests() -> list[VLMRequest]:
    return [
        VLMRequest(prompt="what next?", system="unit 1", images=(RED,), tag="planner"),
        VLMRequest(prompt="tell allies", tag="comm"),
        VLMRequest(prompt="what next?", system="unit 1", images=(RED,), tag="planner"),  # asked again
        VLMRequest(prompt="what next?", system="unit 1", images=(BLUE,), tag="planner"),
    ]


async def _record_run(run_dir, fake_vlm_server, fast_config) -> list[Completion]:
    """A 'run' against the fake server, traced the way the runner does it."""
    fake_vlm_server.script = ["attack 1", "enemy at 3,4", "retreat", "attack 2"]
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "gpt-4o-mini"), fast_config())
    run_dir.mkdir()
    answers = []
    with open(run_dir / "trace.jsonl", "w", encoding="utf-8") as trace:
        trace.write(json.dumps({"kind": "step", "step": 0}) + "\n")  # other kinds are ignored
        for step, request in enumerate(_requests()):
            completion = await client.complete(request)
            answers.append(completion)
            trace.write(json.dumps(vlm_trace_record(request, completion, agent=1, step=step)) + "\n")
    return answers


async def test_replay_reproduces_a_recorded_run(tmp_path, fake_vlm_server, fast_config):
    recorded = await _record_run(tmp_path / "run", fake_vlm_server, fast_config)
    assert [c.text for c in recorded] == ["attack 1", "enemy at 3,4", "retreat", "attack 2"]

    # Another spec entirely, with a cache configured: replay still answers every call itself.
    client = VLMClient.from_spec(f"replay:{tmp_path / 'run'}", fast_config(cache_dir=tmp_path / "cache"))
    replayed = [await client.complete(request) for request in _requests()]
    assert [c.text for c in replayed] == [c.text for c in recorded]  # duplicates in recorded order
    assert [c.prompt_tokens for c in replayed] == [c.prompt_tokens for c in recorded]
    assert [c.completion_tokens for c in replayed] == [c.completion_tokens for c in recorded]
    assert all(c.backend == "replay" and c.cost_usd == 0 and not c.cached for c in replayed)
    assert client.usage.tag("planner").calls == 3 and client.usage.tag("comm").calls == 1
    assert len(fake_vlm_server.requests) == 4  # nothing new reached the server


async def test_replay_repeats_the_last_answer_when_asked_more_often(
    tmp_path, fake_vlm_server, fast_config, caplog
):
    await _record_run(tmp_path / "run", fake_vlm_server, fast_config)
    client = VLMClient.from_spec(f"replay:{tmp_path / 'run' / 'trace.jsonl'}", fast_config())
    request = _requests()[0]
    with caplog.at_level(logging.WARNING, logger="compass.vlm.backends.replay"):
        texts = [(await client.complete(request)).text for _ in range(3)]
    assert texts == ["attack 1", "retreat", "retreat"]
    assert "asked more often than recorded" in caplog.text
    assert (await client.complete(request)).text == "retreat"


async def test_replay_unknown_prompt_is_a_clear_error(tmp_path, fake_vlm_server, fast_config):
    await _record_run(tmp_path / "run", fake_vlm_server, fast_config)
    client = VLMClient.from_spec(f"replay:{tmp_path / 'run'}", fast_config())
    unknown = VLMRequest(prompt="never asked", tag="skills")
    with pytest.raises(VLMError) as info:
        await client.complete(unknown)
    message = str(info.value)
    assert message.startswith(f"replay: no recorded answer for prompt {prompt_key(unknown)[:12]}")
    assert "'skills'" in message
    assert client.usage.tag("skills").errors == 1


def test_replay_reads_trace_fields_written_by_hand(tmp_path):
    request = VLMRequest(prompt="p", system="s")
    lines = [
        json.dumps(
            {
                "kind": "vlm",
                "key_prompt": prompt_key(request),
                "response": "hand-written",
                "prompt_tokens": 7,
                "completion_tokens": 2,
            }
        ),
        "",
        json.dumps({"kind": "episode_end"}),
        '{"kind": "vlm", "key_prompt": "trunc',  # a run killed mid-write
    ]
    (tmp_path / "trace.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    completion = asyncio.run(VLMClient.from_spec(f"replay:{tmp_path}").complete(request))
    assert (completion.text, completion.prompt_tokens, completion.completion_tokens) == ("hand-written", 7, 2)


def test_replay_setup_errors(tmp_path):
    with pytest.raises(VLMError, match="no trace at"):
        VLMClient.from_spec(f"replay:{tmp_path / 'missing'}")
    (tmp_path / "trace.jsonl").write_text(json.dumps({"kind": "vlm", "response": "x"}) + "\n")
    with pytest.raises(VLMError, match="key_prompt"):
        VLMClient.from_spec(f"replay:{tmp_path}")


async def test_fake_backend_scripts_answers(fast_config):
    backend = FakeBackend(lambda req: f"seen {len(req.images)} image(s): {req.prompt}")
    client = VLMClient(backend, fast_config())
    completion = await client.complete(VLMRequest(prompt="hello", images=(RED,), tag="t"))
    assert completion.text == "seen 1 image(s): hello"
    assert completion.backend == "fake" and completion.cost_usd == 0.0 and completion.prompt_tokens > 0
    assert backend.calls[0].prompt == "hello"
    assert await client.ask("x") == "seen 0 image(s): x"


async def test_fake_backend_can_simulate_outages(fast_config):
    outcomes = [BackendError("overloaded", status=529, retryable=True), BackendReply("ok", 10, 1)]

    def flaky(req):
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    client = VLMClient(FakeBackend(flaky), fast_config())
    completion = await client.complete(VLMRequest(prompt="x"))
    assert (completion.text, completion.attempts, completion.prompt_tokens) == ("ok", 2, 10)


async def test_fake_backend_latency_hits_the_timeout(fast_config):
    client = VLMClient(FakeBackend("late", latency_s=1.0), fast_config(timeout_s=0.05, max_retries=1))
    with pytest.raises(VLMError, match=r"fake:fake failed after 2 attempts \(no HTTP status\): timed out"):
        await client.complete(VLMRequest(prompt="x"))


async def test_fake_spec_is_a_constant_reply():
    assert await VLMClient.from_spec("fake:hold position").ask("anything") == "hold position"
    assert await VLMClient.from_spec("fake:").ask("anything") == "OK"
