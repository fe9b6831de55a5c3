"""The scripted LLM HTTP server on 127.0.0.1: Anthropic Messages, OpenAI Chat Completions,
the OpenAI Responses API and the Gemini API, all on one port.

It runs `http.server.ThreadingHTTPServer` in a background thread, so it works the same from
synchronous code, async tests and the CLI. Every request is recorded; each model call
(``POST /v1/messages``, ``/v1/chat/completions``, ``/v1/responses``,
``/v1beta/models/M:generateContent`` or ``:streamGenerateContent``) consumes one turn of
the `Script`.

Streams use HTTP/1.1 chunked transfer encoding like the real APIs, so a scripted truncation
(the connection dropped before the final chunk) is visible to clients as an incomplete body.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import anthropic_wire, gemini_wire, openai_wire
from .api_frames import WHOLE_ANSWER, model_entry, models_listing, stream_frames
from .planned import PlannedResponse, plan_response
from .recorded_request import Api, RecordedRequest
from .request_views import (
    GEMINI_MODEL_METHODS,
    gemini_call,
    gemini_wants_json,
)
from .script import Script, ScriptExhausted

# Bytes collected before one chunk is written when no chunk delay is scripted: large
# writes keep the server cheap when a benchmark asks for tens of thousands of deltas.
_WRITE_BATCH = 64 * 1024


class ScriptedLLMServer:
    """A fake LLM endpoint driven by a script of turns.

    >>> with ScriptedLLMServer(["Hello"]) as srv:  # doctest: +SKIP
    ...     client = AsyncAnthropic(api_key="x", base_url=srv.url)

    `url` is the base URL without ``/v1`` (what ``ANTHROPIC_BASE_URL`` expects);
    `openai_base_url` adds ``/v1`` (what OpenAI clients expect).
    """

    def __init__(
        self,
        script: Script
        | Iterable[Any]
        | dict[str, Any]
        | Callable[[dict[str, Any]], Any]
        | None = None,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
    ) -> None:
        self.script = Script.coerce(script)
        self._host = host
        self._port = port
        self._requests: list[RecordedRequest] = []
        self._changed = threading.Condition()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def next_script(self, script: Script | Iterable[Any] | None) -> Script:
        """Serve ``script`` from the next model call on, routing as the current one did
        (see `Script.continue_routing`); returns the new script."""
        following = Script.coerce(script)
        following.continue_routing(self.script)
        self.script = following
        return following

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> ScriptedLLMServer:
        if self._httpd is not None:
            return self
        httpd = _HTTPServer((self._host, self._port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving: end running streams, drop open connections, join the thread."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.closing.set()
        httpd.shutdown()
        httpd.drop_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- addresses ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    # -- recording ----------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._changed:
            return list(self._requests)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """Only the requests that consumed a turn (Messages and Chat Completions calls)."""
        return [r for r in self.requests if r.is_model_call]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `count` requests were recorded (or raise TimeoutError)."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"expected {count} requests, saw {len(self._requests)}")
            return list(self._requests)

    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # A burst of connections (100 sessions prompting at once) must not overflow the
    # socketserver default backlog of 5, which real API endpoints do not have.
    request_queue_size = 512
    owner: ScriptedLLMServer

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.closing = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # An agent that is stopped, or that gives up on a call, resets its connection while
        # a handler reads or writes: the normal end of a checker run, not a fault. The
        # default would print a traceback per connection into the checker's log.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)

    def drop_connections(self) -> None:
        """Shut down every open connection so blocked handler threads return at once."""
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _ClientGone(Exception):
    """The peer closed the connection or the server is closing: stop writing."""


class _ChunkedBody:
    """Writes an HTTP/1.1 chunked body, batching small pieces unless told to flush."""

    def __init__(self, handler: _Handler) -> None:
        self._handler = handler
        self._buffer: list[bytes] = []
        self._size = 0

    def write(self, data: bytes, *, flush: bool) -> None:
        self._buffer.append(data)
        self._size += len(data)
        if flush or self._size >= _WRITE_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self._size:
            return
        payload = b"".join(self._buffer)
        self._buffer.clear()
        self._size = 0
        self._send(b"%x\r\n%s\r\n" % (len(payload), payload))

    def finish(self) -> None:
        self.flush()
        self._send(b"0\r\n\r\n")

    def _send(self, data: bytes) -> None:
        try:
            self._handler.wfile.write(data)
            self._handler.wfile.flush()
        except OSError as exc:  # BrokenPipe, ConnectionReset, or our own shutdown
            raise _ClientGone from exc


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Streams are written as many small chunks; with Nagle's algorithm each response would
    # wait ~40 ms for the client's delayed ACK, a latency no real endpoint adds.
    disable_nagle_algorithm = True
    server: _HTTPServer
    server_version = "ScriptedLLM/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests and the checker read `requests` instead of a log."""

    # -- dispatch -----------------------------------------------------------------------

    def do_GET(self) -> None:
        request = self._read_request()
        if request.path in ("/v1/models", "/models"):
            self._send_json(200, models_listing())
        elif request.path.startswith("/v1/models/"):
            model = request.path.rsplit("/", 1)[-1]
            self._send_json(200, model_entry(model))
        else:
            self._send_not_found(request.path)

    def do_POST(self) -> None:
        request = self._read_request()
        if request.path == "/v1/messages":
            self._answer_model_call("anthropic", request)
        elif request.path == "/v1/chat/completions":
            self._answer_model_call("openai", request)
        elif request.path == "/v1/responses":
            self._answer_model_call("openai-responses", request)
        elif (gemini := gemini_call(request.path)) is not None:
            self._answer_gemini(gemini[1], request)
        elif request.path == "/v1/messages/count_tokens":
            body = request.body if isinstance(request.body, dict) else {}
            text = json.dumps([body.get("system"), body.get("messages"), body.get("tools")])
            self._send_json(200, {"input_tokens": max(1, len(text) // 4)})
        else:
            self._send_not_found(request.path)

    def do_PUT(self) -> None:
        self._send_not_found(self._read_request().path)

    do_DELETE = do_PATCH = do_PUT

    # -- request ------------------------------------------------------------------------

    def _read_request(self) -> RecordedRequest:
        started, started_mono = time.time(), time.monotonic()
        parts = urlsplit(self.path)
        raw = self._read_body()
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        request = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            timestamp=started,
            monotonic=started_mono,
        )
        self.server.owner._record(request)
        return request

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            pieces: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(pieces)
                pieces.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    # -- model calls --------------------------------------------------------------------

    def _answer_gemini(self, method: str, request: RecordedRequest) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        if method == "countTokens":
            text = json.dumps([body.get("contents"), body.get("generateContentRequest")])
            self._send_json(200, {"totalTokens": max(1, len(text) // 4)})
        elif method not in GEMINI_MODEL_METHODS:
            self._send_not_found(request.path)
        elif gemini_wants_json(body) and not request.tools:
            # A routing or next-speaker guess: answered with an empty JSON object, consuming
            # no turn (the agent falls back to its defaults).
            plan = plan_response({"content": [{"type": "text", "text": "{}"}]}, {})
            if request.streaming:
                self._stream_or_drop("gemini", plan, body)
            else:
                self._send_json(200, gemini_wire.whole_response(plan))
        else:
            self._answer_model_call("gemini", request)

    def _answer_model_call(self, api: Api, request: RecordedRequest) -> None:
        if not isinstance(request.body, dict):
            self._send_api_error(
                api, 400, "invalid_request_error", "The body must be a JSON object."
            )
            return
        body = request.chat_view
        try:
            plan = plan_response(self.server.owner.script.next_turn(body), body)
        except ScriptExhausted as exc:
            self._send_api_error(api, 400, "invalid_request_error", str(exc))
            return
        except Exception as exc:  # a broken script or responder: say so on the wire
            self._send_api_error(api, 500, "api_error", f"Scripted turn failed: {exc!r}")
            return
        if plan.latency and self.server.closing.wait(plan.latency):
            return
        if plan.error is not None:
            error = plan.error
            headers = {}
            if error.get("retry_after") is not None:
                headers["retry-after"] = str(error["retry_after"])
            self._send_api_error(api, error["status"], error["type"], error["message"], headers)
        elif plan.garbage is not None:
            content_type = "text/event-stream" if request.streaming else "application/json"
            self._send_bytes(200, plan.garbage.encode("utf-8"), content_type)
        elif not request.streaming:
            self._send_json(200, WHOLE_ANSWER[api](plan))
        else:
            self._stream_or_drop(api, plan, request.body)

    def _stream_or_drop(self, api: Api, plan: PlannedResponse, body: dict[str, Any]) -> None:
        try:
            self._stream(api, plan, body)
        except _ClientGone:
            self.close_connection = True

    def _stream(self, api: Api, plan: PlannedResponse, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_scripted_{id(plan):x}")
        self.end_headers()
        out = _ChunkedBody(self)
        delay = plan.chunk_delay
        closing = self.server.closing
        for count, (frame, is_delta) in enumerate(stream_frames(api, plan, body)):
            if plan.truncate_after is not None and count >= plan.truncate_after:
                self._drop_mid_stream(out)
                return
            if closing.is_set():
                raise _ClientGone
            if delay and is_delta and closing.wait(delay):
                raise _ClientGone
            out.write(frame, flush=bool(delay) or not is_delta)
        out.finish()

    def _drop_mid_stream(self, out: _ChunkedBody) -> None:
        """Send what is buffered, then cut the connection without the final chunk."""
        with contextlib.suppress(_ClientGone):
            out.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    # -- responses ----------------------------------------------------------------------

    def _send_bytes(
        self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(data).encode("utf-8"), "application/json", headers)

    def _send_api_error(
        self,
        api: Api,
        status: int,
        error_type: str,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        if api == "anthropic":
            body = anthropic_wire.error_body(error_type, message)
        elif api == "gemini":
            body = gemini_wire.error_body(status, message)
        else:
            body = openai_wire.error_body(error_type, message)
        self._send_json(status, body, headers)

    def _send_not_found(self, path: str) -> None:
        api: Api = (
            "gemini"
            if gemini_call(path) is not None
            else "openai"
            if path.startswith(("/v1/chat", "/v1/completions", "/v1/responses"))
            else "anthropic"
        )
        self._send_api_error(api, 404, "not_found_error", f"No scripted endpoint at {path}.")
