"""The shared wire client (``iac_code_dev.wire_client``) on its own, against a scripted agent.

The agent end is a pair of in-memory byte streams the test writes and reads by hand, so each
test decides exactly what the "agent" says and checks exactly what the client wrote.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from iac_code_dev.wire_client import (
    NO_ANSWER,
    ErrorAnswer,
    Frame,
    Handler,
    WireClient,
    WireError,
    open_pipe_client,
)

pytestmark = pytest.mark.anyio

WAIT_S = 60.0
SHORT_S = 0.05  # a wait meant to run out


@dataclass
class ScriptedAgent:
    """The agent's end of the pipe: write frames or bytes, read what the client wrote."""

    output: MemoryObjectSendStream[bytes]
    input: MemoryObjectReceiveStream[bytes]
    chunks: list[bytes] = field(default_factory=list)
    _buffer: bytes = b""

    async def write(self, data: bytes) -> None:
        await self.output.send(data)

    async def send(self, *messages: Any) -> None:
        await self.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    async def read(self) -> Any:
        """The next message the client wrote."""
        with anyio.fail_after(WAIT_S):
            while b"\n" not in self._buffer:
                chunk = await self.input.receive()
                self.chunks.append(chunk)
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    async def close(self) -> None:
        await self.output.aclose()


@asynccontextmanager
async def scripted(
    handlers: dict[str, Handler] | None = None, *, refuse_unhandled: bool = True
) -> AsyncIterator[tuple[WireClient, ScriptedAgent]]:
    to_agent, agent_input = anyio.create_memory_object_stream[bytes](64)
    agent_output, from_agent = anyio.create_memory_object_stream[bytes](64)
    async with open_pipe_client(
        to_agent.send,
        from_agent.receive,
        handlers=handlers,
        refuse_unhandled=refuse_unhandled,
        wait_s=WAIT_S,
    ) as client:
        yield client, ScriptedAgent(agent_output, agent_input)


def result(request_id: Any, value: Any) -> Frame:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def update(session_id: str, kind: str) -> Frame:
    params = {"sessionId": session_id, "update": {"sessionUpdate": kind}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


# --- Requests and their answers -----------------------------------------------------------------


async def test_an_answer_comes_with_the_updates_sent_since_its_request() -> None:
    async with scripted() as (client, agent):
        await agent.send(update("s", "before"))
        await client.wait_update("before")
        request_id = await client.start_request("session/prompt", {"sessionId": "s"})
        assert (await agent.read())["id"] == request_id
        await agent.send(update("s", "one"), result("other", {}), update("s", "two"))
        await agent.send(result(request_id, {"stopReason": "end_turn"}))
        reply = await client.reply(request_id)
    assert reply.result == {"stopReason": "end_turn"}
    assert reply.kinds() == ["one", "two"]
    assert reply.index == 4 and client.frames[reply.index] is reply.frame


async def test_each_answer_is_handed_out_once() -> None:
    async with scripted() as (client, agent):
        await agent.send(result(7, "first"), result(7, "second"))
        assert (await client.reply(7)).result == "first"
        assert (await client.reply(7)).result == "second"
        with pytest.raises(TimeoutError):
            await client.reply(7, SHORT_S)
        # Answers to unparsable input carry id null; each one is its own.
        await agent.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}})
        await agent.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "y"}})
        assert (await client.reply(None)).error["code"] == -32700
        assert (await client.reply(None)).error["code"] == -32600


async def test_an_agent_request_is_not_mistaken_for_an_answer() -> None:
    async with scripted(refuse_unhandled=False) as (client, agent):
        request_id = await client.start_request("session/list", {})
        await agent.read()
        await agent.send({"jsonrpc": "2.0", "id": request_id, "method": "x/ping"})
        await agent.send(result(request_id, {"sessions": []}))
        reply = await client.reply(request_id)
    assert reply.index == 1 and reply.result == {"sessions": []}


async def test_request_raises_on_an_error_answer() -> None:
    async with scripted() as (client, agent):

        async def refuse() -> None:
            request = await agent.read()
            error = {"code": -32602, "message": "no"}
            await agent.send({"jsonrpc": "2.0", "id": request["id"], "error": error})

        async with anyio.create_task_group() as group:
            group.start_soon(refuse)
            with pytest.raises(WireError, match="session/list failed"):
                await client.request("session/list", {})


# --- The agent's requests -------------------------------------------------------------------------


def fs_request(request_id: Any, method: str = "fs/read_text_file") -> Frame:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"path": "/x"}}


async def test_an_agent_request_without_a_handler_is_answered_method_not_found() -> None:
    async with scripted() as (client, agent):
        await agent.send(fs_request("a-1"))
        answer = await agent.read()
    assert answer == {
        "jsonrpc": "2.0",
        "id": "a-1",
        "error": {"code": -32601, "message": "Method not found"},
    }
    assert client.agent_requests == [fs_request("a-1")]
    assert client.sent == [answer]


async def test_handlers_answer_refuse_or_stay_silent() -> None:
    async def read(client: WireClient, frame: Frame) -> Any:
        return {"content": f"text of {frame['params']['path']}"}

    async def refuse(client: WireClient, frame: Frame) -> Any:
        return ErrorAnswer(-32000, "not here")

    async def silent(client: WireClient, frame: Frame) -> Any:
        return NO_ANSWER

    handlers: dict[str, Handler] = {
        "fs/read_text_file": read,
        "fs/write_text_file": refuse,
        "terminal/create": silent,
    }
    async with scripted(handlers) as (client, agent):
        await agent.send(fs_request(1))
        assert await agent.read() == result(1, {"content": "text of /x"})
        await agent.send(fs_request(2, "fs/write_text_file"))
        error = {"code": -32000, "message": "not here"}
        assert await agent.read() == {"jsonrpc": "2.0", "id": 2, "error": error}
        await agent.send(fs_request(3, "terminal/create"))
        await client.wait_for(lambda: len(client.agent_requests) == 3)
        request_id = await client.start_request("session/list", {})
        # Nothing was written for request 3: the next message is the client's own request.
        assert (await agent.read())["id"] == request_id
    assert client.requests_for("terminal/create") == [fs_request(3, "terminal/create")]


async def test_without_refuse_unhandled_an_agent_request_is_left_for_the_test() -> None:
    async with scripted(refuse_unhandled=False) as (client, agent):
        await agent.send(fs_request(5))
        await client.wait_for(lambda: client.agent_requests)
        await client.answer(5, {"content": "by hand"})
        assert await agent.read() == result(5, {"content": "by hand"})


# --- Bounded waits --------------------------------------------------------------------------------


async def test_a_bounded_wait_that_runs_out_raises_timeout_error() -> None:
    async with scripted() as (client, agent):
        await client.start_request("session/list", {})
        with pytest.raises(TimeoutError):
            await client.reply(1, SHORT_S)
        with pytest.raises(TimeoutError):
            await client.wait_update("agent_message_chunk", wait_s=SHORT_S)
        with pytest.raises(TimeoutError):
            await client.next_frame(SHORT_S)
        with pytest.raises(TimeoutError):
            await client.wait_closed(SHORT_S)
        # The client's own bound applies when a wait names none.
        client.wait_s = SHORT_S
        with pytest.raises(TimeoutError):
            await client.wait_for(lambda: False)
        # A wait that ran out leaves nothing behind: the answer is still handed out.
        await agent.send(result(1, "late"))
        assert (await client.reply(1, WAIT_S)).result == "late"


async def test_a_wait_fails_at_once_when_the_agent_output_ends() -> None:
    async with scripted() as (client, agent):
        await agent.write(b'{"jsonrpc":"2.0","id":1,"result":1}\n{"jsonrpc":"2.0","id":2,')
        await agent.close()
        await client.wait_closed()
        with pytest.raises(WireError, match="output ended"):
            await client.reply(3, WAIT_S)
        assert (await client.reply(1)).result == 1
    pipe = client.transport
    # The unterminated last line is kept as it was, and reaches the client as unparsable.
    assert pipe.raw_lines == [b'{"jsonrpc":"2.0","id":1,"result":1}\n', b'{"jsonrpc":"2.0","id":2,']
    assert client.frames[1] == {"__unparsable__": '{"jsonrpc":"2.0","id":2,'}


# --- What was seen, in order ----------------------------------------------------------------------


async def test_frames_are_kept_in_order_across_streams() -> None:
    sent: list[tuple[Any, str | None]] = []

    async def send(message: Any, stream: str | None) -> None:
        sent.append((message, stream))

    client = WireClient(send, wait_s=WAIT_S)
    async with anyio.create_task_group() as group:
        client.attach(group)
        request_id = await client.start_request("session/prompt", {"sessionId": "s1"}, stream="s1")
        client.deliver(update("s1", "a"), "s1")
        client.deliver(update("s2", "b"), "s2")
        client.deliver(fs_request("r", "x/ask"), "s2")
        client.deliver({"jsonrpc": "2.0", "method": "x/note"}, None)
        client.deliver(update("s1", "c"), "s1")
        client.deliver(result(request_id, {"stopReason": "end_turn"}), "s1")
        reply = await client.reply(request_id)
        # The unhandled request is refused on the stream it came on.
        await client.wait_for(lambda: len(sent) == 2)
    assert [f.get("method") for f in client.frames] == [
        "session/update",
        "session/update",
        "x/ask",
        "x/note",
        "session/update",
        None,
    ]
    assert client.frame_streams == ["s1", "s2", "s2", None, "s1", "s1"]
    assert [u["sessionUpdate"] for u in client.updates()] == ["a", "b", "c"]
    assert [u["sessionUpdate"] for u in client.updates("s1")] == ["a", "c"]
    assert reply.kinds() == ["a", "b", "c"]
    assert client.agent_request_streams == ["s2"]
    assert sent[0] == (client.sent[0], "s1")
    assert sent[1][1] == "s2" and sent[1][0]["error"]["code"] == -32601
    # The handler runs in its own task, so its answer comes after the frames delivered with
    # no pause in between.
    directions = [direction for direction, _ in client.transcript]
    assert directions == ["sent", *["received"] * 6, "sent"]


async def test_the_transcript_and_observers_see_both_directions_in_order() -> None:
    seen: list[tuple[str, Any]] = []
    async with scripted() as (client, agent):
        client.observers.append(lambda direction, message: seen.append((direction, message)))
        request_id = await client.start_request("session/list", {})
        await agent.read()
        await agent.send(update("s", "x"), result(request_id, {}))
        await client.reply(request_id)
        await client.notify("session/cancel", {"sessionId": "s"})
    assert [(d, m.get("method")) for d, m in seen] == [
        ("sent", "session/list"),
        ("received", "session/update"),
        ("received", None),
        ("sent", "session/cancel"),
    ]
    assert seen == client.transcript


# --- The NDJSON pipe ------------------------------------------------------------------------------


async def test_send_together_writes_one_chunk() -> None:
    async with scripted() as (client, agent):
        prompt = {"jsonrpc": "2.0", "id": "p", "method": "session/prompt", "params": {}}
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {}}
        await client.send_together(prompt, cancel)
        assert await agent.read() == prompt
        assert await agent.read() == cancel
        await agent.send(update("s", "y"), result("p", {}))
        assert (await client.reply("p")).kinds() == ["y"]
    assert len(agent.chunks) == 1
    assert client.sent == [prompt, cancel]


async def test_lines_that_are_not_strict_json_reach_the_client_as_unparsable() -> None:
    lines = [
        b'{"jsonrpc":"2.0","method":"x","params":{"v":NaN}}',
        b'{"v":Infinity}',
        b'{"text":"\xff"}',
        b"[" * 100_000,
        b"a log line",
    ]
    async with scripted() as (client, agent):
        await agent.write(b"\n".join(lines) + b'\n[1]\r\n{"ok":true}\n')
        await client.wait_for(lambda: len(client.frames) == 7)
    assert [list(frame) for frame in client.frames[:5]] == [["__unparsable__"]] * 5
    assert client.frames[5:] == [[1], {"ok": True}]
    assert client.transport.raw_lines[:5] == [line + b"\n" for line in lines]
