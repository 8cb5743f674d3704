"""Structured output on the wire (each backend's dialect, through the real SDKs against the fake
server), spec options, and the probe that runs before a run."""

from __future__ import annotations

import json

import pytest

from compass.planner.answers import answer_format
from compass.vlm import VLMClient, VLMError, VLMFatalError, VLMRequest, parse_spec, request_key
from compass.vlm.backends.openai_api import strict_schema
from tests.fakes.fake_vlm_server import Reply

TASK = answer_format("task_reasoning")
ANSWER = {"task_guidance": "Focus the weakest zealot", "reasoning_of_task": "it is low",
          "skill_guidance": False, "reasoning_of_skill": "no skill focuses"}  # fmt: skip


def _req() -> VLMRequest:
    return VLMRequest(prompt="plan", tag="task_reasoning", schema=TASK.schema(), schema_name="task_reasoning")


def test_spec_options_and_errors():
    spec = parse_spec("openai:smol@http://127.0.0.1:8080/v1?dialect=llamacpp")
    assert (spec.model, spec.base_url, spec.options) == (
        "smol",
        "http://127.0.0.1:8080/v1",
        {"dialect": "llamacpp"},
    )
    assert parse_spec("llamacpp:/m/x.gguf?n_ctx=4096").options == {"n_ctx": "4096"}
    with pytest.raises(VLMError, match="unknown option.*colour"):
        parse_spec("openai:m@http://h/v1?colour=red")
    with pytest.raises(VLMError, match="unknown dialect 'grpc'"):
        VLMClient.from_spec("openai:m@http://127.0.0.1:1/v1?dialect=grpc")


def test_schema_is_part_of_the_cache_key_only_when_set():
    plain = VLMRequest(prompt="plan", max_tokens=10, temperature=0.0)
    with_schema = VLMRequest(prompt="plan", max_tokens=10, temperature=0.0, schema={"type": "object"})
    assert request_key("openai", "m", plain) != request_key("openai", "m", with_schema)


@pytest.mark.parametrize(
    ("dialect", "check"),
    [
        ("openai", lambda b: b["response_format"]["type"] == "json_schema"
            and b["response_format"]["json_schema"]["strict"] is True
            and b["response_format"]["json_schema"]["schema"]["additionalProperties"] is False),
        ("vllm", lambda b: b["response_format"]["json_schema"]["schema"] == TASK.schema()),
        ("llamacpp", lambda b: b["response_format"] == {"type": "json_object", "schema": TASK.schema()}),
        ("ollama", lambda b: b["format"] == TASK.schema() and "response_format" not in b),
        ("text", lambda b: "response_format" not in b and "format" not in b),
    ],
)  # fmt: skip
async def test_openai_dialects_send_the_schema_their_way(fake_vlm_server, fast_config, dialect, check):
    fake_vlm_server.responder = lambda request: json.dumps(ANSWER)
    client = VLMClient.from_spec(f"openai:m@{fake_vlm_server.openai_url}?dialect={dialect}", fast_config())
    assert client.backend.structured == (dialect != "text")
    completion = await client.complete(_req())
    assert check(fake_vlm_server.requests[-1].body)
    assert TASK.parse(completion.text).subtask == "Focus the weakest zealot"


def test_strict_schema_requires_every_field_and_drops_lengths():
    schema = strict_schema(TASK.schema())
    assert set(schema["required"]) == set(ANSWER) and "maxLength" not in json.dumps(schema)


async def test_anthropic_uses_a_forced_tool_call(fake_vlm_server, fast_config):
    fake_vlm_server.responder = lambda request: json.dumps(ANSWER)
    client = VLMClient.from_spec(
        fake_vlm_server.spec("anthropic", "claude-x") + "?dialect=tools", fast_config()
    )
    completion = await client.complete(_req())
    body = fake_vlm_server.requests[-1].body
    assert body["tool_choice"] == {"type": "tool", "name": "task_reasoning"}
    assert body["tools"][0]["input_schema"] == TASK.schema()
    assert json.loads(completion.text) == ANSWER  # the tool input, as JSON text


async def test_servers_without_a_dialect_get_the_text_protocol(fake_vlm_server, fast_config):
    for spec in (fake_vlm_server.spec("openai", "m"), fake_vlm_server.spec("anthropic", "m")):
        assert VLMClient.from_spec(spec, fast_config()).backend.structured is False


async def test_probe_reports_a_dead_server_at_once(fast_config):
    client = VLMClient.from_spec("openai:m@http://127.0.0.1:9/v1", fast_config(max_retries=5))
    attempts = []
    generate = client.backend.generate

    async def counted(*args, **kwargs):
        attempts.append(args)
        return await generate(*args, **kwargs)

    client.backend.generate = counted
    with pytest.raises(VLMError, match=r"cannot reach openai:m@http://127.0.0.1:9/v1.*is the server running"):
        await client.probe()
    assert len(attempts) == 1  # reported after one attempt, not after max_retries of backoff


async def test_probe_names_the_key_when_refused(fake_vlm_server, fast_config):
    fake_vlm_server.script = [Reply.error(401, message="invalid api key")]
    client = VLMClient.from_spec(fake_vlm_server.spec("openai", "m"), fast_config())
    with pytest.raises(VLMError, match="refused the key.*check OPENAI_API_KEY"):
        await client.probe()
    assert fake_vlm_server.requests[0].body["max_tokens"] == 1  # one token, not a real prompt


async def test_replay_of_an_unrecorded_prompt_is_fatal(tmp_path, fast_config):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps({"kind": "vlm", "key_prompt": "0" * 64, "response": "x"}) + "\n")
    client = VLMClient.from_spec(f"replay:{tmp_path}", fast_config())
    await client.probe()  # has records: fine
    with pytest.raises(VLMFatalError, match="does not match the recording"):
        await client.complete(VLMRequest(prompt="never asked"))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "trace.jsonl").write_text("")
    with pytest.raises(VLMError, match="records no VLM calls"):
        await VLMClient.from_spec(f"replay:{tmp_path / 'empty'}", fast_config()).probe()
