"""The scripted LLM server over plain HTTP (urllib): wire shapes, recording, lifecycle, CLI."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import (
    Script,
    ScriptedLLMServer,
    Turn,
    http_server,
    split_pieces,
    text_turn,
    tool_turn,
)
from iac_code_dev.wire_client.sse_events import iter_sse


def post(url: str, body: dict[str, Any], timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def sse_events(raw: bytes) -> list[tuple[str | None, str]]:
    """(event name, data) pairs of an SSE body."""
    return [(event.event, event.data) for event in iter_sse(raw.decode().split("\n"))]


MESSAGES = [{"role": "user", "content": "Plan the VPC"}]


def test_split_pieces_keeps_text_and_counts() -> None:
    assert split_pieces("abcdefg", chunks=3) == ["abc", "de", "fg"]
    assert split_pieces("abcdefg", chunk_size=2) == ["ab", "cd", "ef", "g"]
    assert split_pieces("ab", chunks=5) == ["a", "b"]
    assert split_pieces("", chunks=3) == []


def test_anthropic_stream_event_sequence(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(
        Turn()
        .thinking("Think", signature="sig-1", chunks=2)
        .text("Hello there", chunks=4)
        .tool_use("read_file", {"path": "main.tf"}, id="toolu_1", chunks=3)
        .usage(input_tokens=11, output_tokens=22, cache_read_input_tokens=3)
    )
    status, headers, raw = post(
        f"{llm_server.url}/v1/messages?beta=true",
        {"model": "m", "max_tokens": 5, "stream": True, "messages": MESSAGES},
    )
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    events = sse_events(raw)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    datas = [json.loads(data) for _, data in events]
    assert all(d["type"] == n for d, (n, _) in zip(datas, events, strict=True))
    deltas = [d["delta"] for d in datas if d["type"] == "content_block_delta"]
    assert [d["type"] for d in deltas] == (
        ["thinking_delta"] * 2 + ["signature_delta"] + ["text_delta"] * 4 + ["input_json_delta"] * 3
    )
    assert "".join(d.get("text", "") for d in deltas) == "Hello there"
    tool_json = "".join(d.get("partial_json", "") for d in deltas)
    assert json.loads(tool_json) == {"path": "main.tf"}
    starts = [d["content_block"] for d in datas if d["type"] == "content_block_start"]
    assert starts[2] == {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}
    assert datas[0]["message"]["usage"]["input_tokens"] == 11
    assert datas[0]["message"]["usage"]["cache_read_input_tokens"] == 3
    assert datas[-2]["delta"]["stop_reason"] == "tool_use"
    assert datas[-2]["usage"]["output_tokens"] == 22
    assert llm_server.requests[0].query == {"beta": ["true"]}


def test_anthropic_non_streaming_message(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().text("Done.").stop("max_tokens"))
    status, _, raw = post(
        f"{llm_server.url}/v1/messages",
        {"model": "claude-x", "max_tokens": 5, "messages": MESSAGES},
    )
    message = json.loads(raw)
    assert status == 200
    assert message["type"] == "message" and message["model"] == "claude-x"
    assert message["content"] == [{"type": "text", "text": "Done."}]
    assert message["stop_reason"] == "max_tokens"


def test_http_error_turn_has_api_shape_and_retry_after(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(
        Turn().http_error(429, "Slow down", retry_after=7), Turn().http_error(529)
    )
    status, headers, raw = post(
        f"{llm_server.url}/v1/messages",
        {"model": "m", "max_tokens": 5, "stream": True, "messages": MESSAGES},
    )
    assert status == 429
    assert headers["retry-after"] == "7"
    assert json.loads(raw) == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Slow down"},
    }
    status, _, raw = post(
        f"{llm_server.url}/v1/chat/completions",
        {"model": "m", "stream": True, "messages": MESSAGES},
    )
    assert status == 529
    assert json.loads(raw)["error"]["type"] == "overloaded_error"


def test_stream_error_event_after_partial_text(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().text("part", chunks=2).stream_error("api_error", "boom"))
    _, _, raw = post(
        f"{llm_server.url}/v1/messages",
        {"model": "m", "max_tokens": 5, "stream": True, "messages": MESSAGES},
    )
    events = sse_events(raw)
    assert events[-1][0] == "error"
    assert json.loads(events[-1][1])["error"] == {"type": "api_error", "message": "boom"}
    assert "message_stop" not in [name for name, _ in events]


def test_truncated_stream_drops_the_connection(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().text("abcdef", chunks=6).truncate_after(4))
    with pytest.raises(Exception) as caught:  # http.client.IncompleteRead
        post(
            f"{llm_server.url}/v1/messages",
            {"model": "m", "max_tokens": 5, "stream": True, "messages": MESSAGES},
        )
    assert (
        "IncompleteRead" in type(caught.value).__name__ or "incomplete" in str(caught.value).lower()
    )


def test_garbage_body(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().garbage("\x00 not sse at all"))
    status, _, raw = post(
        f"{llm_server.url}/v1/messages",
        {"model": "m", "max_tokens": 5, "stream": True, "messages": MESSAGES},
    )
    assert status == 200 and raw == b"\x00 not sse at all"


def test_openai_streaming_text_and_tool_calls(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(
        Turn()
        .text("Hi there", chunks=2)
        .tool_use("glob", {"pattern": "*.tf"}, id="call_1", chunks=2)
        .usage(input_tokens=5, output_tokens=6),
        Turn().text("cut").stop("max_tokens"),
    )
    body = {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "system", "content": "be brief"}, *MESSAGES],
        "tools": [{"type": "function", "function": {"name": "glob", "parameters": {}}}],
    }
    status, headers, raw = post(f"{llm_server.openai_base_url}/chat/completions", body)
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = sse_events(raw)
    assert events[-1] == (None, "[DONE]")
    chunks = [json.loads(data) for _, data in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("content") or "" for d in deltas) == "Hi there"
    calls = [call for d in deltas for call in d.get("tool_calls", [])]
    assert calls[0]["id"] == "call_1" and calls[0]["function"]["name"] == "glob"
    arguments = "".join(call["function"]["arguments"] for call in calls)
    assert json.loads(arguments) == {"pattern": "*.tf"}
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finishes[-1] == "tool_calls"
    assert chunks[-1]["usage"] == {
        "prompt_tokens": 5,
        "completion_tokens": 6,
        "total_tokens": 11,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    recorded = llm_server.requests[0]
    assert recorded.api == "openai" and recorded.system == "be brief"
    assert recorded.tool_names == ["glob"]

    _, _, raw = post(
        f"{llm_server.openai_base_url}/chat/completions",
        {"model": "m", "stream": True, "messages": MESSAGES},
    )
    chunks = [json.loads(data) for _, data in sse_events(raw)[:-1]]
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_openai_non_streaming(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(tool_turn("bash", {"command": "ls"}, id="call_9"))
    status, _, raw = post(
        f"{llm_server.openai_base_url}/chat/completions", {"model": "m", "messages": MESSAGES}
    )
    answer = json.loads(raw)
    assert status == 200 and answer["object"] == "chat.completion"
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"] == {
        "name": "bash",
        "arguments": '{"command": "ls"}',
    }


def test_echo_fallback_and_error_fallback() -> None:
    with ScriptedLLMServer([text_turn("scripted")]) as server:
        bodies = [
            json.loads(
                post(
                    f"{server.url}/v1/messages",
                    {"model": "m", "max_tokens": 5, "messages": MESSAGES},
                )[2]
            )
            for _ in range(2)
        ]
        assert [b["content"][0]["text"] for b in bodies] == ["scripted", "Echo: Plan the VPC"]
    with ScriptedLLMServer(Script([], fallback="error")) as server:
        status, _, raw = post(
            f"{server.url}/v1/messages", {"model": "m", "max_tokens": 5, "messages": MESSAGES}
        )
        assert status == 400 and "no turn left" in json.loads(raw)["error"]["message"]


def test_callable_responder_sees_the_request_body() -> None:
    def responder(body: dict[str, Any]) -> dict[str, Any]:
        return text_turn(f"{len(body['messages'])} message(s), tools={len(body.get('tools', []))}")

    with ScriptedLLMServer(responder) as server:
        _, _, raw = post(
            f"{server.url}/v1/messages",
            {"model": "m", "max_tokens": 5, "messages": MESSAGES, "tools": [{}]},
        )
        assert json.loads(raw)["content"][0]["text"] == "1 message(s), tools=1"


def test_other_endpoints_and_unknown_paths(llm_server: ScriptedLLMServer) -> None:
    status, _, raw = post(
        f"{llm_server.url}/v1/messages/count_tokens", {"model": "m", "messages": MESSAGES}
    )
    assert status == 200 and json.loads(raw)["input_tokens"] > 0
    with urllib.request.urlopen(f"{llm_server.url}/v1/models", timeout=60) as response:
        models = json.loads(response.read())
    assert models["data"] and all(m["id"] for m in models["data"])
    status, _, raw = post(f"{llm_server.url}/v1/complete", {})
    assert status == 404 and json.loads(raw)["type"] == "error"
    status, _, raw = post(f"{llm_server.url}/v1/chat/nothing", {})
    assert status == 404 and json.loads(raw)["error"]["type"] == "not_found_error"
    assert llm_server.model_requests == []  # none of these consumed a turn
    assert llm_server.script.remaining == 0


def test_recording_of_system_tools_cache_and_thinking(llm_server: ScriptedLLMServer) -> None:
    post(
        f"{llm_server.url}/v1/messages",
        {
            "model": "m",
            "max_tokens": 5,
            "messages": MESSAGES,
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "read_file", "input_schema": {}}],
            "thinking": {"type": "enabled", "budget_tokens": 2048},
        },
    )
    recorded = llm_server.wait_for_requests(1)[0]
    assert recorded.is_model_call and recorded.api == "anthropic" and not recorded.streaming
    assert recorded.system[0]["text"] == "sys"
    assert recorded.tool_names == ["read_file"]
    assert recorded.has_cache_control
    assert recorded.thinking == {"type": "enabled", "budget_tokens": 2048}
    assert recorded.headers["content-type"] == "application/json"
    assert recorded.timestamp > 0


def test_close_ends_a_slow_stream_promptly() -> None:
    server = ScriptedLLMServer([Turn().text("x" * 100, chunks=100).timing(chunk_delay=1.0)]).start()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    body = json.dumps(
        {"model": "m", "max_tokens": 5, "stream": True, "messages": MESSAGES}
    ).encode()
    sock.sendall(
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    assert sock.recv(100).startswith(b"HTTP/1.1 200")  # the stream is running
    started = time.monotonic()
    server.close()
    closed_in = time.monotonic() - started
    sock.settimeout(5)
    while sock.recv(65536):  # the server side drops the connection
        pass
    sock.close()
    print(f"close() took {closed_in * 1000:.0f} ms with a stream in progress")


def test_a_client_resetting_its_connection_prints_no_traceback(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # An agent the checker stops mid-call resets its model connection; that is how runs end,
    # and the checker's log must not get a traceback for each one.
    handled = threading.Event()
    original = http_server._HTTPServer.shutdown_request

    def shutdown_request(self: Any, request: Any) -> None:
        original(self, request)
        handled.set()

    monkeypatch.setattr(http_server._HTTPServer, "shutdown_request", shutdown_request)
    with ScriptedLLMServer([text_turn("still here")]) as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")  # headers never finish
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # linger 0: the kernel sends RST, the handler's read fails
        assert handled.wait(5), "the handler never finished the reset connection"
        body = {"model": "m", "max_tokens": 5, "messages": MESSAGES}
        status, _, raw = post(f"{server.url}/v1/messages", body)
    assert status == 200 and b"still here" in raw
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err


def test_a_handler_bug_is_still_reported(capfd: pytest.CaptureFixture[str]) -> None:
    with ScriptedLLMServer([]) as server:
        httpd = server._httpd
        assert httpd is not None
        try:
            raise ValueError("a bug in a handler")
        except ValueError:
            httpd.handle_error(None, ("127.0.0.1", 1))
    assert "ValueError: a bug in a handler" in capfd.readouterr().err


@pytest.mark.subprocess
def test_cli_serves_a_script_until_stdin_closes(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {"turns": [{"content": [{"type": "text", "text": "from file"}]}], "fallback": "error"}
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_scripted_llm", "--script", str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        _, _, raw = post(
            f"{url}/v1/messages", {"model": "m", "max_tokens": 5, "messages": MESSAGES}
        )
        assert json.loads(raw)["content"][0]["text"] == "from file"
        status, _, _ = post(
            f"{url}/v1/messages", {"model": "m", "max_tokens": 5, "messages": MESSAGES}
        )
        assert status == 400
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)


@pytest.mark.parametrize(
    ("path", "error_of"),
    [
        ("/v1beta/models/gemini-test:generateContent", lambda e: (e["code"], e["status"])),
        ("/v1/responses", lambda e: (400, e["type"])),
    ],
    ids=["gemini", "responses"],
)
def test_a_body_that_is_not_json_gets_the_api_s_400(
    llm_server: ScriptedLLMServer, path: str, error_of: Any
) -> None:
    llm_server.script.add("kept for the next call")
    request = urllib.request.Request(
        llm_server.url + path, data=b"{not json", headers={"content-type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=60)
    assert caught.value.code == 400
    error = json.loads(caught.value.read())["error"]
    assert error_of(error) in ((400, "INVALID_ARGUMENT"), (400, "invalid_request_error"))
    assert "JSON object" in error["message"]
    assert llm_server.script.remaining == 1  # the bad call consumed no turn
    status, _, raw = post(llm_server.url + path, {"model": "m", "input": "hi"})
    assert status == 200 and b"kept for the next call" in raw  # the server is still up


def test_unknown_gemini_method_is_a_google_404(llm_server: ScriptedLLMServer) -> None:
    status, _, raw = post(f"{llm_server.url}/v1beta/models/m:batchEmbedContents", {})
    assert status == 404
    assert json.loads(raw)["error"]["status"] == "NOT_FOUND"
