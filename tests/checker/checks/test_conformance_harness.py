"""Harness pieces in isolation: line parsing, bounded stderr, client policies, validation
routing, templates."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp_conformance.config import RunConfig, agent_environment, fill_template
from acp_conformance.harness.agent_client import NO_ANSWER, HandlerError
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.recorder import BoundedBuffer, Frame, parse_line
from acp_conformance.validation import validate_frames

OPTIONS = [
    {"optionId": "a1", "name": "Allow", "kind": "allow_once"},
    {"optionId": "a2", "name": "Always", "kind": "allow_always"},
    {"optionId": "r1", "name": "Reject", "kind": "reject_once"},
]


def test_parse_line_tells_invalid_utf8_from_invalid_json() -> None:
    assert parse_line(b'{"a": 1}') == ({"a": 1}, None)
    assert parse_line(b"\xff")[1].startswith("invalid UTF-8")  # type: ignore[union-attr]
    assert parse_line(b"{oops")[1].startswith("invalid JSON")  # type: ignore[union-attr]


def test_bounded_buffer_keeps_head_and_tail() -> None:
    buffer = BoundedBuffer(limit=10)
    buffer.write(b"0123456789abcdefghij")
    value = buffer.getvalue()
    assert value.startswith(b"01234") and value.endswith(b"fghij") and b"skipped" in value


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "expected"),
    [("allow", "a1"), ("allow_always", "a2"), ("reject", "r1"), ("reject_always", "r1")],
)
async def test_permission_policies_select_by_option_kind(
    tmp_path: Path, mode: str, expected: str
) -> None:
    client = ClientSide(tmp_path, permission=mode)  # type: ignore[arg-type]
    answer = await client.handle(
        "session/request_permission", {"options": OPTIONS, "toolCall": {"toolCallId": "t"}}
    )
    assert answer == {"outcome": {"outcome": "selected", "optionId": expected}}


@pytest.mark.anyio
async def test_never_policy_leaves_the_request_unanswered(tmp_path: Path) -> None:
    client = ClientSide(tmp_path, permission="never")
    assert await client.handle("session/request_permission", {"options": OPTIONS}) is NO_ANSWER


@pytest.mark.anyio
async def test_fs_is_sandboxed_to_the_scenario_directory(tmp_path: Path) -> None:
    client = ClientSide(tmp_path)
    await client.handle(
        "fs/write_text_file",
        {"sessionId": "s", "path": str(tmp_path / "a.txt"), "content": "x\ny\n"},
    )
    assert await client.handle(
        "fs/read_text_file", {"sessionId": "s", "path": str(tmp_path / "a.txt"), "line": 2}
    ) == {"content": "y\n"}
    with pytest.raises(HandlerError):
        await client.handle("fs/read_text_file", {"sessionId": "s", "path": "/etc/passwd"})


@pytest.mark.anyio
async def test_terminal_runs_commands_in_the_sandbox(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    client = ClientSide(work)
    created = await client.handle("terminal/create", {"sessionId": "s", "command": "pwd"})
    ref = {"sessionId": "s", "terminalId": created["terminalId"]}
    with anyio.fail_after(60):
        status = await client.handle("terminal/wait_for_exit", ref)
    assert status["exitCode"] == 0
    output = await client.handle("terminal/output", ref)
    assert output["output"].strip() == str(work)
    await client.handle("terminal/release", ref)
    client.close()


def test_templates_fill_known_placeholders_only() -> None:
    assert (
        fill_template('{"url": "{llm_url}/x"}', {"llm_url": "http://h"}) == '{"url": "http://h/x"}'
    )
    config = RunConfig(argv=["a"], agent_env=[("BASE", "{llm_url_v1}"), ("H", "{home}")])
    env = agent_environment(config, home=Path("/h"), tmp=Path("/t"), llm_url="http://127.0.0.1:5/")
    assert env["BASE"] == "http://127.0.0.1:5/v1" and env["H"] == "/h" and env["HOME"] == "/h"


def _frame(seq: int, direction: str, message: dict[str, object]) -> Frame:
    import json

    return Frame(seq, 0.0, direction, json.dumps(message).encode(), message)  # type: ignore[arg-type]


def test_responses_are_validated_against_their_requests_method() -> None:
    frames = [
        _frame(
            0,
            "c2a",
            {
                "jsonrpc": "2.0",
                "id": "x",
                "method": "session/new",
                "params": {"cwd": "/w", "mcpServers": []},
            },
        ),
        _frame(1, "a2c", {"jsonrpc": "2.0", "id": "x", "result": {}}),
        _frame(
            2,
            "a2c",
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "fs/read_text_file",
                "params": {"sessionId": "s"},
            },
        ),
        _frame(3, "c2a", {"jsonrpc": "2.0", "id": 7, "result": {"content": 5}}),
    ]
    found = {(v.seq, v.direction, v.method, v.part) for v in validate_frames(frames)}
    assert found == {
        (1, "a2c", "session/new", "result"),
        (2, "a2c", "fs/read_text_file", "params"),
        (3, "c2a", "fs/read_text_file", "result"),
    }
