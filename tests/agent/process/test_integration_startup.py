"""The start-up fast path hands the byte stream to the full runtime without losing or
re-ordering anything (``iac_code.prelude``, SPEC §1, §2 initialize)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.process.stdio_harness import spawn

pytestmark = pytest.mark.subprocess

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def test_the_fast_initialize_answer_equals_the_full_runtimes_answer(home: Path) -> None:
    with spawn(home, None) as agent:
        fast = agent.call("initialize", INITIALIZE["params"])
        full = agent.call("initialize", INITIALIZE["params"])
    assert fast.result == full.result


def test_requests_written_together_with_initialize_are_all_answered_in_order(
    home: Path, workspace: Path
) -> None:
    new = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "session/new",
        "params": {"cwd": str(workspace), "mcpServers": []},
    }
    listing = {"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": {}}
    with spawn(home, None) as agent:
        agent.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in (INITIALIZE, new, listing)))
        answers = [agent.reply(i) for i in (1, 2, 3)]
    assert answers[0].result["protocolVersion"] == 1
    session_id = answers[1].result["sessionId"]
    assert [s["sessionId"] for s in answers[2].result["sessions"]] == [session_id]
    assert answers[0].index < answers[1].index < answers[2].index


def test_an_initialize_split_across_writes_is_answered(home: Path) -> None:
    line = json.dumps(INITIALIZE).encode()
    with spawn(home, None) as agent:
        agent.write(line[:10])
        agent.send_raw(line[10:])
        assert agent.reply(1).result["protocolVersion"] == 1


def test_a_bad_first_line_gets_the_full_runtimes_error_and_initialize_still_works(
    home: Path,
) -> None:
    with spawn(home, None) as agent:
        agent.send_raw(b"{this is not json")
        error = agent.next_frame()
        init = agent.call("initialize", {"protocolVersion": 1})
        agent.close_stdin()
        assert agent.wait_exit(timeout=120) == 0
    assert error["id"] is None and error["error"]["code"] == -32700
    assert init.result["protocolVersion"] == 1


def test_an_unusual_first_initialize_is_validated_by_the_full_runtime(home: Path) -> None:
    with spawn(home, None) as agent:
        bad = agent.call("initialize", {"protocolVersion": "one"})
        good = agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": {}}})
    assert bad.error["code"] == -32602
    assert bad.error["data"] == {"protocolVersion": "must be an integer"}
    assert good.result["protocolVersion"] == 1


def test_initialize_followed_by_immediate_eof_is_answered_then_exits_zero(home: Path) -> None:
    with spawn(home, None) as agent:
        agent.send(INITIALIZE)
        agent.close_stdin()
        assert agent.wait_exit(timeout=120) == 0
        agent.drain_until_eof()
    assert [f.get("id") for f in agent.frames] == [1]
    assert agent.frames[0]["result"]["protocolVersion"] == 1


# Issue 19 item 7: these first lines made the fast path exit 1.
_SURROGATE_INITIALIZE = (
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"initialize","params":{"protocolVersion":1}}\n'
)
_DEEP_INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":'
    + b'{"a":' * 1200
    + b"1"
    + b"}" * 1200
    + b"}}\n"
)
_NAN_INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize",'
    b'"params":{"protocolVersion":1,"_meta":{"x":NaN}}}\n'
)


@pytest.mark.parametrize(
    ("first_line", "code"),
    [(_SURROGATE_INITIALIZE, -32600), (_DEEP_INITIALIZE, -32700), (_NAN_INITIALIZE, -32700)],
    ids=["lone-surrogate-id", "nested-1200-deep", "nan"],
)
def test_a_first_initialize_the_fast_path_cannot_answer_gets_the_runtimes_error(
    home: Path, first_line: bytes, code: int
) -> None:
    with spawn(home, None) as agent:
        agent.send_raw(first_line)
        error = agent.next_frame()
        init = agent.call("initialize", {"protocolVersion": 1})
        agent.close_stdin()
        assert agent.wait_exit(timeout=120) == 0
    assert error["id"] is None and error["error"]["code"] == code, error
    assert init.result["protocolVersion"] == 1
