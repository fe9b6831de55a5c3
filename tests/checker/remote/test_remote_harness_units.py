"""In-memory unit tests of the remote harness pieces: SSE parsing, header rules, which
requirements a transport makes not applicable, and the CLI's --url options."""

from __future__ import annotations

import json

import pytest
from acp_conformance.catalogue import REQUIREMENTS
from acp_conformance.cli import main
from acp_conformance.config import RunConfig
from acp_conformance.harness.remote_http import (
    Rejection,
    RemoteTarget,
    SseParser,
    header_safe,
    refusal_answer,
    session_of,
)
from acp_conformance.harness.served import free_port, with_port
from acp_conformance.remote_scope import exemption


def _events(text: str) -> list[tuple[str, str | None]]:
    parser = SseParser()
    out = []
    for line in text.split("\n"):
        event = parser.feed_line(line)
        if event is not None:
            out.append((event.data, event.event_id))
    return out


def test_sse_parser_joins_data_lines_and_keeps_ids() -> None:
    text = 'id: 7\ndata: {"a":\ndata: 1}\n\n: keep-alive\n\ndata:plain\n\n'
    assert _events(text) == [('{"a":\n1}', "7"), ("plain", "7")]


def test_sse_parser_ignores_events_without_data_and_unknown_fields() -> None:
    assert _events("event: ping\nretry: 10\n\nid: 3\n\n") == []


def test_header_safe_session_ids() -> None:
    assert header_safe("sess-1")
    assert not header_safe("")
    assert not header_safe("caf\u00e9")
    assert not header_safe("a\r\nInjected: 1")
    assert session_of({"params": {"sessionId": "s1"}}) == "s1"
    assert session_of({"params": {"sessionId": "\U000197da"}}) is None
    assert session_of({"params": [1]}) is None


def test_refusal_answer_names_the_status() -> None:
    raw = refusal_answer(
        {"id": 4}, Rejection(frame_seq=2, status=400, body="Missing\nAcp-Session-Id")
    )
    message = json.loads(raw)
    assert message["id"] == 4
    assert message["error"]["code"] == -32600
    assert "HTTP 400" in message["error"]["message"]
    assert "Missing Acp-Session-Id" in message["error"]["message"]


def test_ws_url_follows_the_http_scheme() -> None:
    assert RemoteTarget("http://127.0.0.1:1/acp").ws_url == "ws://127.0.0.1:1/acp"
    assert RemoteTarget("https://h/acp").ws_url == "wss://h/acp"
    assert RemoteTarget("http://h/acp", token="t").headers() == {"Authorization": "Bearer t"}


@pytest.mark.parametrize(
    ("requirement", "remote", "applies"),
    [
        ("http.stream-routing", None, False),
        ("http.stream-routing", RemoteTarget("http://h/acp"), True),
        ("http.stream-routing", RemoteTarget("http://h/acp", websocket=True), False),
        ("ws.upgrade", RemoteTarget("http://h/acp"), False),
        ("ws.upgrade", RemoteTarget("http://h/acp", websocket=True), True),
        ("shutdown.no-orphans", RemoteTarget("http://h/acp"), False),
        ("shutdown.no-orphans", None, True),
        ("jsonrpc.parse-error", RemoteTarget("http://h/acp"), False),
        ("jsonrpc.parse-error", RemoteTarget("http://h/acp", websocket=True), True),
        ("turn.streamed-text", RemoteTarget("http://h/acp"), False),
        ("session.new-returns-id", RemoteTarget("http://h/acp"), True),
    ],
)
def test_transport_scope(requirement: str, remote: RemoteTarget | None, applies: bool) -> None:
    config = RunConfig(argv=[], remote=remote)
    assert (exemption(REQUIREMENTS[requirement], config) is None) is applies


def test_prompt_turns_apply_when_the_checker_serves_the_agent_itself() -> None:
    served = RunConfig(argv=["server", "{port}"], remote=RemoteTarget("http://h:{port}/acp"))
    assert exemption(REQUIREMENTS["turn.streamed-text"], served) is None
    assert exemption(REQUIREMENTS["shutdown.no-orphans"], served) is not None


def test_served_mode_fills_the_port_everywhere() -> None:
    assert with_port(["--port", "{port}", "x{port}y"], 4711) == ["--port", "4711", "x4711y"]
    assert 0 < free_port() < 65536


def test_cli_accepts_a_server_command_with_a_port_placeholder() -> None:
    from acp_conformance.cli import _config, build_parser

    args = build_parser().parse_args(
        ["run", "--url", "http://127.0.0.1:{port}/acp", "--ws", "--", "srv", "--port", "{port}"]
    )
    config = _config(args)
    assert config.argv == ["srv", "--port", "{port}"]
    assert config.remote == RemoteTarget("http://127.0.0.1:{port}/acp", websocket=True)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--ws"],
        ["run", "--token", "t", "--", "agent"],
        ["run", "--url", "http://127.0.0.1:1/acp", "--", "agent"],
        ["run", "--url", "ftp://host/acp"],
        ["run"],
    ],
)
def test_url_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "acp-conformance:" in capsys.readouterr().err
