"""A scripted local HTTP server that speaks the OpenAI and Anthropic chat wire formats.

Point the real ``openai``/``anthropic`` SDKs (or ``VLMClient``) at it to test everything that
calls a VLM without a network::

    with FakeVLMServer() as server:
        server.script = ["attack 2", Reply.error(429), Reply.slow(5.0), "move north"]
        client = VLMClient.from_spec(server.spec("openai", "gpt-4o-mini"), config)
        ...
        assert server.requests[0].images == [png_bytes]

Routes: ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages`` (Anthropic). Each request
is answered by, in order of precedence: the next item of ``server.script`` (a queue), else
``server.responder(request)``, else ``Reply(server.default_text)``. A script item or a responder
result may be a :class:`Reply`, a ``str`` (the reply text), an ``int`` (an error status) or a
callable taking the :class:`RecordedRequest` and returning one of those.

Every request is recorded in ``server.requests`` (parsed JSON body, lower-cased headers, and helpers
for the prompt text and the decoded images); ``server.max_in_flight`` is the largest number of
requests it was handling at once. A responder that raises gets the client an HTTP 500 whose message
names the exception, and the exception is kept in ``server.errors``.

The pytest fixture :func:`fake_vlm_server` yields a started server; import it into a
``conftest.py`` to use it (``from tests.fakes.fake_vlm_server import fake_vlm_server``).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import random
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest

Api = Literal["openai", "anthropic"]

ROUTES: dict[str, Api] = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}

_REASONS = {
    400: ("invalid_request_error", "bad request"),
    401: ("authentication_error", "invalid api key"),
    403: ("permission_error", "forbidden"),
    404: ("not_found_error", "not found"),
    408: ("timeout_error", "request timeout"),
    429: ("rate_limit_error", "rate limit exceeded"),
    500: ("api_error", "internal server error"),
    502: ("api_error", "bad gateway"),
    503: ("overloaded_error", "service unavailable"),
    529: ("overloaded_error", "overloaded"),
}


@dataclass
class Reply:
    """How the server answers one request.

    ``body`` (raw bytes or text) replaces the whole response body, e.g. for truncated JSON;
    otherwise a well-formed body of the request's wire format is built from ``text``/``status``.
    Token counts default to a deterministic estimate (characters / 4) and are left out entirely
    when ``usage`` is false.
    """

    text: str = "OK"
    status: int = 200
    delay_s: float = 0.0
    retry_after: float | None = None
    body: bytes | str | None = None
    usage: bool = True
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    reset: bool = False  # hang up without answering (the client sees a dropped connection)
    json_body: Any = None  # a whole JSON body of the caller's making (e.g. a wrong shape)

    @classmethod
    def error(cls, status: int, retry_after: float | None = None, message: str | None = None) -> Reply:
        """An error status with the API's error body (and a Retry-After header if given)."""
        return cls(
            text=message or _REASONS.get(status, ("api_error", "error"))[1],
            status=status,
            retry_after=retry_after,
        )

    @classmethod
    def slow(cls, delay_s: float, text: str = "OK") -> Reply:
        """A correct reply sent only after ``delay_s`` (use it to trigger client timeouts)."""
        return cls(text=text, delay_s=delay_s)

    @classmethod
    def truncated(cls, text: str = "OK") -> Reply:
        """A 200 response whose JSON body is cut off half way."""
        return cls(text=text, body='{"id": "trunc", "choices": [{"index": 0, "message": {"content": "' + text)

    @classmethod
    def html(cls, status: int = 200) -> Reply:
        """An HTML page where JSON was expected (a proxy's login or error page), status 200."""
        page = "<!doctype html><html><head><title>Gateway</title></head><body><h1>Sign in</h1></body></html>"
        return cls(status=status, body=page, content_type="text/html; charset=utf-8")

    @classmethod
    def bad_json(cls) -> Reply:
        """A 200 response whose body is not JSON at all."""
        return cls(body="{this is not json, at all]")

    @classmethod
    def hang_up(cls) -> Reply:
        """Close the connection without sending a response."""
        return cls(reset=True)


def null_content_body(api: Api) -> dict[str, Any]:
    """A well-formed response whose answer is ``null`` (OpenAI) or has no content blocks (Anthropic)."""
    if api == "anthropic":
        return {
            "id": "msg_null",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 0},
        }
    return {
        "id": "chatcmpl-null",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "stop"}],
    }


def wrong_shape_body(api: Api) -> dict[str, Any]:
    """Valid JSON of the wrong shape: the fields a client reads are missing or of another type."""
    if api == "anthropic":
        return {"id": "msg_wrong", "type": "message", "content": "plain string, not blocks", "usage": 7}
    return {"id": "chatcmpl-wrong", "object": "chat.completion", "choices": [{"index": 0, "message": "text"}]}


#: The faults :class:`FaultInjector` draws from.
FAULTS = (
    "429",
    "500",
    "503",
    "timeout",
    "hang_up",
    "truncated",
    "bad_json",
    "html",
    "null",
    "empty",
    "wrong_shape",
)


def fault_reply(kind: str, api: Api, slow_s: float = 5.0) -> Reply:
    """The :class:`Reply` for one fault of :data:`FAULTS`."""
    if kind.isdigit():
        return Reply.error(int(kind), retry_after=0.01 if kind == "429" else None)
    if kind == "timeout":
        return Reply.slow(slow_s)
    if kind == "hang_up":
        return Reply.hang_up()
    if kind == "truncated":
        return Reply.truncated("half an ans")
    if kind == "bad_json":
        return Reply.bad_json()
    if kind == "html":
        return Reply.html()
    if kind == "null":
        return Reply(json_body=null_content_body(api))
    if kind == "empty":
        return Reply(text="")
    if kind == "wrong_shape":
        return Reply(json_body=wrong_shape_body(api))
    raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULTS)}")


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    api: Api
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]
    received_at: float

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str | None:
        """The system text (Anthropic's top-level ``system`` or OpenAI's system message)."""
        if self.api == "anthropic":
            system = self.body.get("system")
            if isinstance(system, list):
                return "".join(block.get("text", "") for block in system)
            return system
        texts = [_text_of(m.get("content")) for m in self.messages if m.get("role") == "system"]
        return "\n".join(texts) if texts else None

    @property
    def text(self) -> str:
        """All text of the user messages, joined by newlines."""
        return "\n".join(_text_of(m.get("content")) for m in self.messages if m.get("role") == "user")

    @property
    def image_parts(self) -> list[dict[str, Any]]:
        """The raw image content parts of the user messages, in order."""
        kinds = {"openai": "image_url", "anthropic": "image"}
        return [
            part
            for m in self.messages
            if m.get("role") == "user" and isinstance(m.get("content"), list)
            for part in m["content"]
            if part.get("type") == kinds[self.api]
        ]

    @property
    def images(self) -> list[bytes]:
        """The decoded image bytes sent with the user messages, in order."""
        out = []
        for part in self.image_parts:
            if self.api == "openai":
                url = part["image_url"]["url"]
                out.append(base64.b64decode(url.split(",", 1)[1]))
            else:
                out.append(base64.b64decode(part["source"]["data"]))
        return out

    @property
    def api_key(self) -> str | None:
        """The key the client sent (``x-api-key``, else ``Authorization: Bearer``).

        Anthropic SDKs have sent either header depending on version, so both are read.
        """
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") if auth else None


#: What a script item or a responder may produce.
ReplyLike = Reply | str | int | Callable[[RecordedRequest], Any]
Responder = Callable[[RecordedRequest], ReplyLike]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if part.get("type") == "text")
    return ""


class FakeVLMServer:
    """A threaded HTTP server on 127.0.0.1 (random free port) playing a reply script."""

    def __init__(
        self, responder: Responder | None = None, script: Iterable[ReplyLike] = (), default_text: str = "OK"
    ) -> None:
        self.responder = responder
        self.default_text = default_text
        self.requests: list[RecordedRequest] = []
        self.errors: list[Exception] = []  # exceptions raised by script items / the responder
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[ReplyLike] = deque(script)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- script -----------------------------------------------------------------------------
    @property
    def script(self) -> deque[ReplyLike]:
        """Replies still queued; assign any iterable to replace the queue."""
        return self._script

    @script.setter
    def script(self, items: Iterable[ReplyLike]) -> None:
        with self._lock:
            self._script = deque(items)

    def reset(self) -> None:
        """Forget recorded requests, errors, the script and the in-flight maximum."""
        with self._lock:
            self.requests.clear()
            self.errors.clear()
            self._script.clear()
            self.max_in_flight = 0

    # --- addresses --------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeVLMServer is not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (what the Anthropic SDK takes as base_url)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (what the OpenAI SDK takes as base_url)."""
        return f"{self.base_url}/v1"

    def spec(self, api: Api = "openai", model: str = "gpt-4o-mini") -> str:
        """A ``VLMClient`` spec string pointing at this server, e.g. ``openai:gpt-4o-mini@http://...``."""
        url = self.openai_url if api == "openai" else self.base_url
        return f"{api}:{model}@{url}"

    # --- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeVLMServer:
        """Bind a free port and serve in a daemon thread."""
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-vlm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; replies still waiting on a delay are abandoned."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeVLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- used by the handler ----------------------------------------------------------------
    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            item: ReplyLike | None = self._script.popleft() if self._script else None
        if item is None:
            item = self.responder(request) if self.responder is not None else Reply(self.default_text)
        while callable(item) and not isinstance(item, Reply):
            item = item(request)
        if isinstance(item, Reply):
            return item
        if isinstance(item, bool):
            raise TypeError(f"cannot reply with {item!r}")
        if isinstance(item, int):
            return Reply.error(item)
        if isinstance(item, str):
            return Reply(item)
        raise TypeError(f"cannot reply with {item!r}: use a Reply, str, int or callable")

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)  # returns early when the server stops


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many agents connect at once; the default backlog of 5 drops SYNs

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is expected here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeVLMServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate small writes; with Nagle on, the client's delayed ACK
    # would add ~40 ms to every reply.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep test output clean

    def do_POST(self) -> None:
        api = ROUTES.get(self.path.split("?", 1)[0])
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        if api is None:
            self._send(404, {"error": {"message": f"no route {self.path}"}}, close=True)
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "request body is not JSON"}}, close=True)
            return
        request = RecordedRequest(
            api=api,
            path=self.path,
            body=body,
            received_at=time.monotonic(),
            headers={k.lower(): v for k, v in self.headers.items()},
        )
        if body.get("stream"):
            self._send(400, {"error": {"message": "FakeVLMServer does not stream"}}, close=True)
            return
        self.fake._enter()
        try:
            try:
                reply = self.fake._next_reply(request)
            except Exception as exc:  # a bug in the test's script/responder: make it loud, not a hang
                self.fake.errors.append(exc)
                reply = Reply.error(500, message=f"FakeVLMServer responder error: {exc!r}")
            if reply.delay_s:
                self.fake._sleep(reply.delay_s)
            if self.fake._stopping.is_set():
                self.close_connection = True
                return
            self._answer(request, reply)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (e.g. its timeout fired while we were "slow")
        finally:
            self.fake._leave()

    def _answer(self, request: RecordedRequest, reply: Reply) -> None:
        headers = dict(reply.headers)
        if reply.retry_after is not None:
            headers["retry-after"] = f"{reply.retry_after:g}"
        if reply.reset:
            self.close_connection = True
            return  # nothing written: the client sees the connection close
        if reply.json_body is not None:
            self._send(reply.status, reply.json_body, headers)
        elif reply.body is not None:
            raw = reply.body.encode() if isinstance(reply.body, str) else reply.body
            self._send(reply.status, raw, headers, close=True, content_type=reply.content_type)
        elif reply.status >= 400:
            self._send(reply.status, _error_body(request.api, reply), headers)
        else:
            self._send(reply.status, self._success_body(request, reply), headers)

    def _success_body(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        n = next(self.fake._ids)
        prompt_tokens = reply.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = max(1, (len(request.text) + len(request.system or "")) // 4) + 85 * len(
                request.images
            )
        completion_tokens = reply.completion_tokens
        if completion_tokens is None:
            completion_tokens = max(1, len(reply.text) // 4)
        if request.api == "anthropic":
            body: dict[str, Any] = {
                "id": f"msg_fake{n}",
                "type": "message",
                "role": "assistant",
                "model": request.model,
                "content": _anthropic_content(request, reply.text),
                "stop_reason": "tool_use" if _forced_tool(request) else "end_turn",
                "stop_sequence": None,
            }
            if reply.usage:
                body["usage"] = {"input_tokens": prompt_tokens, "output_tokens": completion_tokens}
            return body
        body = {
            "id": f"chatcmpl-fake{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
        }
        if reply.usage:
            body["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        return body

    def _send(
        self,
        status: int,
        body: dict[str, Any] | bytes,
        headers: dict[str, str] | None = None,
        close: bool = False,
        content_type: str = "application/json",
    ) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if close:
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()


def _forced_tool(request: RecordedRequest) -> str | None:
    """The tool an Anthropic request forces (``tool_choice: {"type": "tool"}``), if any."""
    choice = request.body.get("tool_choice")
    return choice.get("name") if isinstance(choice, dict) and choice.get("type") == "tool" else None


def _anthropic_content(request: RecordedRequest, text: str) -> list[dict[str, Any]]:
    """A forced tool call answers with a ``tool_use`` block whose input is the reply parsed as JSON
    (as the real API does); otherwise one text block."""
    tool = _forced_tool(request)
    if tool is None:
        return [{"type": "text", "text": text}]
    return [{"type": "tool_use", "id": "toolu_fake", "name": tool, "input": json.loads(text)}]


def _error_body(api: Api, reply: Reply) -> dict[str, Any]:
    kind = _REASONS.get(reply.status, ("api_error", "error"))[0]
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": reply.text}}
    return {"error": {"message": reply.text, "type": kind, "param": None, "code": str(reply.status)}}


class FaultInjector:
    """A responder that answers a fault instead of ``inner``'s reply at rate ``rate``.

    Whether a request gets a fault depends only on its body, how many times that same body was
    asked before and ``seed`` (not on arrival order), so concurrent agents see the same faults
    on every run. ``counts`` tallies the faults served, ``answered`` the good replies.
    """

    def __init__(
        self,
        inner: Responder,
        rate: float = 0.3,
        seed: int = 0,
        faults: Iterable[str] = FAULTS,
        slow_s: float = 5.0,
    ) -> None:
        self.inner = inner
        self.rate = rate
        self.seed = seed
        self.faults = tuple(faults)
        self.slow_s = slow_s
        self.counts: Counter[str] = Counter()
        self.answered = 0
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    def draw(self, request: RecordedRequest) -> str | None:
        """The fault for this request (None: answer it properly)."""
        body = json.dumps(request.body, sort_keys=True)
        with self._lock:
            nth = self._seen[body]
            self._seen[body] += 1
        digest = hashlib.sha256(f"{self.seed}:{nth}:{body}".encode()).digest()
        rng = random.Random(digest)
        return rng.choice(self.faults) if rng.random() < self.rate else None

    def __call__(self, request: RecordedRequest) -> ReplyLike:
        kind = self.draw(request)
        with self._lock:
            if kind is None:
                self.answered += 1
            else:
                self.counts[kind] += 1
        if kind is None:
            return self.inner(request)
        return fault_reply(kind, request.api, self.slow_s)


@pytest.fixture
def fake_vlm_server() -> Iterator[FakeVLMServer]:
    """A started :class:`FakeVLMServer`, stopped after the test."""
    with FakeVLMServer() as server:
        yield server
