"""The dispatcher over in-memory streams, driven by a raw NDJSON peer."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from acp_bindings.errors import InvalidParamsError, MethodNotFoundError, RpcError
from iac_code.rpc import ConnectionClosedError, RequestContext, current_request
from iac_code.rpc.connection import Connection
from iac_code.rpc.framing import decode_line
from iac_code.rpc.memory import RawPeer, memory_connection_pair, raw_peer_connection

pytestmark = pytest.mark.anyio

V = {"jsonrpc": "2.0"}


class ScriptedHandler:
    """A handler whose behaviour is chosen by the method name."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.hook_registered = anyio.Event()
        self.notifications: list[tuple[str, object]] = []
        self.notified = anyio.Event()
        self.closed_hook_called = False

    async def handle_request(self, ctx: RequestContext, method: str, params: Any) -> object:
        if method == "echo":
            return {"params": params}
        if method == "slow":
            await self.release.wait()
            return {"slow": True}
        if method == "updates_then_answer":
            for index in range(params["count"]):
                await ctx.connection.send_notification("update", {"index": index})
            return {"done": True}
        if method == "hang":
            await anyio.sleep_forever()
        if method == "graceful":
            stop = anyio.Event()
            ctx.on_cancel(stop.set)
            self.hook_registered.set()
            await stop.wait()
            return {"stopReason": "cancelled", "flag": ctx.cancel_requested}
        if method == "boom":
            raise RuntimeError("secret-traceback-text")
        if method == "rpc_error":
            raise InvalidParamsError(data={"sessionId": "unknown session"})
        if method == "grouped_rpc_error":
            async with anyio.create_task_group() as group:
                group.start_soon(self._raise_not_found)
        if method == "unserialisable":
            return {"value": object()}
        if method == "ask":
            try:
                return {"answer": await ctx.connection.send_request("client/ask", params)}
            except RpcError as exc:
                return {
                    "code": exc.code,
                    "type": type(exc).__name__,
                    "message": exc.message,
                    "data": exc.data,
                }
            except ConnectionClosedError:
                return {"closed": True}
        if method == "whoami":
            return {"same": current_request() is ctx, "id": ctx.request_id, "method": ctx.method}
        raise MethodNotFoundError(data={"method": method})

    async def _raise_not_found(self) -> None:
        raise MethodNotFoundError(data={"method": "inner"})

    async def handle_notification(self, method: str, params: object) -> None:
        if method == "explode":
            raise ValueError("notification failure")
        self.notifications.append((method, params))
        self.notified.set()

    async def on_close(self) -> None:
        self.closed_hook_called = True


@asynccontextmanager
async def serving(
    handler: ScriptedHandler, **options: Any
) -> AsyncIterator[tuple[Connection, RawPeer]]:
    connection, peer = raw_peer_connection(handler, **options)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            yield connection, peer
            peer.close_input()


def request(request_id: object, method: str, params: object = None) -> dict[str, Any]:
    message: dict[str, Any] = {**V, "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


async def test_request_ids_are_echoed_unchanged_for_int_and_string_ids() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request(7, "echo", {"a": 1}))
        assert await peer.receive() == {**V, "id": 7, "result": {"params": {"a": 1}}}
        await peer.send(request("req-1", "echo"))
        assert await peer.receive() == {**V, "id": "req-1", "result": {"params": None}}
        await peer.send(request(0, "echo", [1, 2]))
        assert await peer.receive() == {**V, "id": 0, "result": {"params": [1, 2]}}


async def test_handlers_see_their_own_request_context() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request("w", "whoami"))
        assert (await peer.receive())["result"] == {"same": True, "id": "w", "method": "whoami"}


async def test_a_slow_request_does_not_block_another_one() -> None:
    handler = ScriptedHandler()
    async with serving(handler) as (_, peer):
        await peer.send(request(1, "slow"))
        await peer.send(request(2, "echo", {"fast": True}))
        assert (await peer.receive())["id"] == 2
        handler.release.set()
        assert await peer.receive() == {**V, "id": 1, "result": {"slow": True}}


async def test_notifications_sent_by_a_handler_precede_its_response() -> None:
    async with serving(ScriptedHandler(), max_queued_frames=4) as (_, peer):
        await peer.send(request(1, "updates_then_answer", {"count": 50}))
        frames = [await peer.receive() for _ in range(51)]
    assert [frame["params"]["index"] for frame in frames[:50]] == list(range(50))
    assert all(frame["method"] == "update" and "id" not in frame for frame in frames[:50])
    assert frames[50] == {**V, "id": 1, "result": {"done": True}}


async def test_cancel_request_cancels_the_task_and_answers_minus_32800() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request(5, "hang"))
        await peer.send({**V, "method": "$/cancel_request", "params": {"requestId": 5}})
        reply = await peer.receive()
        assert reply["id"] == 5
        assert reply["error"]["code"] == -32800
        await peer.send(request(6, "echo"))
        assert (await peer.receive())["id"] == 6


async def test_cancel_request_with_a_hook_lets_the_handler_answer_normally() -> None:
    handler = ScriptedHandler()
    async with serving(handler) as (_, peer):
        await peer.send(request("p", "graceful"))
        with anyio.fail_after(60):
            await handler.hook_registered.wait()
        await peer.send({**V, "method": "$/cancel_request", "params": {"requestId": "p"}})
        assert await peer.receive() == {
            **V,
            "id": "p",
            "result": {"stopReason": "cancelled", "flag": True},
        }


async def test_cancel_for_unknown_or_finished_requests_is_ignored() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request(1, "echo"))
        assert (await peer.receive())["id"] == 1
        for params in ({"requestId": 1}, {"requestId": 99}, {"requestId": None}, {}, None):
            message: dict[str, Any] = {**V, "method": "$/cancel_request"}
            if params is not None:
                message["params"] = params
            await peer.send(message)
        await peer.send(request(2, "echo"))
        assert await peer.receive() == {**V, "id": 2, "result": {"params": None}}


async def test_unexpected_exceptions_answer_minus_32603_with_an_error_id_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="iac_code.rpc")
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request(3, "boom"))
        with anyio.fail_after(60):
            line = await peer.from_connection.receive()
    assert b"secret-traceback-text" not in line
    assert b"Traceback" not in line and b"RuntimeError" not in line
    message = decode_line(line.rstrip(b"\n"))
    assert isinstance(message, dict)
    error = message["error"]
    assert message["id"] == 3
    assert error["code"] == -32603
    assert set(error["data"]) == {"errorId"}
    error_id = error["data"]["errorId"]
    assert any(error_id in record.getMessage() and record.exc_info for record in caplog.records)
    assert "secret-traceback-text" in caplog.text


async def test_rpc_errors_are_answered_as_themselves_even_inside_task_groups() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request(1, "rpc_error"))
        reply = await peer.receive()
        assert reply["error"] == {
            "code": -32602,
            "message": "Invalid params",
            "data": {"sessionId": "unknown session"},
        }
        await peer.send(request(2, "grouped_rpc_error"))
        assert (await peer.receive())["error"]["code"] == -32601


async def test_a_result_that_is_not_json_becomes_an_internal_error() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request(1, "unserialisable"))
        reply = await peer.receive()
        assert reply["id"] == 1
        assert reply["error"]["code"] == -32603


BAD_LINES: list[tuple[bytes, int, object]] = [
    (b"{not json\n", -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"echo"\xff}\n', -32700, None),
    (b"[]\n", -32600, None),
    (b'[{"jsonrpc":"2.0","id":1,"method":"echo"}]\n', -32600, None),
    (b"42\n", -32600, None),
    (b'"text"\n', -32600, None),
    (b"null\n", -32600, None),
    (b'{"jsonrpc":"1.0","id":5,"method":"echo"}\n', -32600, 5),
    (b'{"id":"s","method":"echo"}\n', -32600, "s"),
    (b'{"jsonrpc":"2.0","id":true,"method":"echo"}\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"echo"}\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":6}\n', -32600, 6),
    (b'{"jsonrpc":"2.0","id":7,"method":"echo","params":"x"}\n', -32600, 7),
    (b"x" * 300 + b"\n", -32600, None),
]


@pytest.mark.parametrize(("line", "code", "echo_id"), BAD_LINES)
async def test_each_bad_line_gets_its_error_and_the_connection_stays_usable(
    line: bytes, code: int, echo_id: object
) -> None:
    async with serving(ScriptedHandler(), max_line_bytes=200) as (_, peer):
        await peer.send_bytes(line)
        reply = await peer.receive()
        assert reply["id"] == echo_id
        assert reply["error"]["code"] == code
        assert isinstance(reply["error"]["message"], str)
        await peer.send(request(100, "echo"))
        assert (await peer.receive())["id"] == 100


async def test_an_oversized_line_split_across_chunks_is_answered_once() -> None:
    async with serving(ScriptedHandler(), max_line_bytes=64) as (_, peer):
        for _ in range(10):
            await peer.send_bytes(b"y" * 50)
        await peer.send_bytes(b'\n{"jsonrpc":"2.0","id":1,"method":"echo"}\n')
        first = await peer.receive()
        assert first["error"]["code"] == -32600
        assert first["error"]["data"] == {"maxLineBytes": 64}
        assert (await peer.receive())["id"] == 1


async def test_notifications_reach_the_handler_and_are_never_answered() -> None:
    handler = ScriptedHandler()
    async with serving(handler) as (_, peer):
        await peer.send({**V, "method": "explode"})
        await peer.send({**V, "method": "note", "params": {"k": "v"}})
        with anyio.fail_after(60):
            await handler.notified.wait()
        await peer.send(request(1, "echo"))
        assert (await peer.receive())["id"] == 1  # no answer was written for either notification
    assert handler.notifications == [("note", {"k": "v"})]


async def test_a_second_request_with_an_in_flight_id_is_rejected() -> None:
    handler = ScriptedHandler()
    async with serving(handler) as (_, peer):
        await peer.send(request(1, "slow"))
        await peer.send(request(1, "echo"))
        reply = await peer.receive()
        assert reply["id"] == 1 and reply["error"]["code"] == -32600
        handler.release.set()
        assert (await peer.receive())["result"] == {"slow": True}


async def test_outbound_requests_are_matched_to_their_responses_by_id() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request("a", "ask", {"q": 1}))
        await peer.send(request("b", "ask", {"q": 2}))
        first = await peer.receive()
        second = await peer.receive()
        assert {first["id"], second["id"]} == {0, 1}
        assert first["method"] == second["method"] == "client/ask"
        by_question = {m["params"]["q"]: m["id"] for m in (first, second)}
        # Answer in reverse order: each waiter still gets its own answer.
        await peer.send({**V, "id": by_question[2], "result": {"for": 2}})
        await peer.send({**V, "id": by_question[1], "result": {"for": 1}})
        replies = {m["id"]: m["result"] for m in (await peer.receive(), await peer.receive())}
        assert replies == {"b": {"answer": {"for": 2}}, "a": {"answer": {"for": 1}}}


async def test_error_answers_raise_the_matching_rpc_error() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request(1, "ask"))
        outbound = await peer.receive()
        error = {"code": -32602, "message": "Bad thing", "data": {"path": "is required"}}
        await peer.send({**V, "id": outbound["id"], "error": error})
        assert (await peer.receive())["result"] == {
            "code": -32602,
            "type": "InvalidParamsError",
            "message": "Bad thing",
            "data": {"path": "is required"},
        }
        await peer.send(request(2, "ask"))
        outbound = await peer.receive()
        await peer.send({**V, "id": outbound["id"], "error": {"code": 1234, "message": "odd"}})
        assert (await peer.receive())["result"]["code"] == 1234


async def test_unknown_and_duplicate_responses_are_ignored() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send({**V, "id": 999, "result": {}})
        await peer.send({**V, "id": "nope", "result": {}})
        await peer.send({**V, "id": None, "error": {"code": -32700, "message": "Parse error"}})
        await peer.send(request(1, "ask"))
        outbound = await peer.receive()
        await peer.send({**V, "id": outbound["id"], "result": "first"})
        await peer.send({**V, "id": outbound["id"], "result": "second"})
        assert await peer.receive() == {**V, "id": 1, "result": {"answer": "first"}}
        await peer.send(request(2, "echo"))
        assert (await peer.receive())["id"] == 2  # nothing was written for the junk responses


async def test_a_malformed_response_is_not_answered_and_fails_its_waiter() -> None:
    async with serving(ScriptedHandler()) as (_, peer):
        await peer.send(request(1, "ask"))
        outbound = await peer.receive()
        await peer.send(
            {**V, "id": outbound["id"], "result": 1, "error": {"code": 1, "message": "x"}}
        )
        reply = await peer.receive()
        assert reply["id"] == 1
        assert reply["result"]["code"] == -32603


async def test_eof_fails_pending_outbound_requests_and_still_writes_their_answers() -> None:
    handler = ScriptedHandler()
    connection, peer = raw_peer_connection(handler, on_close=handler.on_close)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            await peer.send(request(1, "ask"))
            assert (await peer.receive())["method"] == "client/ask"
            peer.close_input()
            frames = await peer.receive_until_eof()
    assert frames == [{**V, "id": 1, "result": {"closed": True}}]
    assert handler.closed_hook_called
    with pytest.raises(ConnectionClosedError):
        await connection.send_request("late")


async def test_eof_cancels_handlers_that_outlive_the_grace_period() -> None:
    connection, peer = raw_peer_connection(ScriptedHandler(), shutdown_grace=0.05)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            await peer.send(request(1, "hang"))
            await peer.send({**V, "method": "hangs-not"})
            peer.close_input()
            frames = await peer.receive_until_eof()
    assert len(frames) == 1
    assert frames[0]["id"] == 1 and frames[0]["error"]["code"] == -32800


async def test_close_stops_serving_and_cancel_all_answers_in_flight_requests() -> None:
    connection, peer = raw_peer_connection(ScriptedHandler(), shutdown_grace=5)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            await peer.send(request(1, "hang"))
            await peer.send(request(2, "echo"))
            assert (await peer.receive())["id"] == 2
            connection.cancel_all()
            assert (await peer.receive())["error"]["code"] == -32800
            connection.close()
            assert await peer.receive_until_eof() == []


async def test_sending_after_the_peer_stopped_reading_raises_connection_closed() -> None:
    connection, peer = raw_peer_connection(ScriptedHandler())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            await peer.from_connection.aclose()
            with pytest.raises(ConnectionClosedError):
                for _ in range(10_000):
                    await connection.send_notification("update", {"x": 1})
                    await anyio.lowlevel.checkpoint()
    # serve() returned on its own: the broken output closed the connection.


async def test_two_connections_call_each_other_in_memory() -> None:
    server_handler = ScriptedHandler()
    client_handler = ScriptedHandler()
    client, server = memory_connection_pair(client_handler, server_handler)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(client.serve)
            group.start_soon(server.serve)
            assert await client.send_request("echo", {"n": 1}) == {"params": {"n": 1}}
            with pytest.raises(InvalidParamsError) as caught:
                await client.send_request("rpc_error", {})
            assert caught.value.data == {"sessionId": "unknown session"}
            await client.send_notification("note", {"from": "client"})
            await server_handler.notified.wait()
            # The server's handler calls back into the client while answering.
            assert await client.send_request("ask", {"q": 3}) == {
                "code": -32601,
                "type": "MethodNotFoundError",
                "message": "Method not found",
                "data": {"method": "client/ask"},
            }
            client.close()
    assert server_handler.notifications == [("note", {"from": "client"})]


async def test_a_waiting_outbound_request_cancelled_by_its_caller_is_forgotten() -> None:
    connection, peer = raw_peer_connection(ScriptedHandler())
    caller_scope = anyio.CancelScope()

    async def call() -> None:
        with caller_scope:
            await connection.send_request("client/never")

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            group.start_soon(call)
            outbound = await peer.receive()
            assert list(connection._pending) == [outbound["id"]]
            caller_scope.cancel()
            await peer.send({**V, "id": outbound["id"], "result": {}})  # late: ignored
            await peer.send(request(1, "echo"))
            assert (await peer.receive())["id"] == 1
            assert connection._pending == {}
            peer.close_input()


async def test_answers_of_handlers_cancelled_at_shutdown_survive_a_full_output_queue() -> None:
    connection, peer = raw_peer_connection(
        ScriptedHandler(), shutdown_grace=0.05, max_queued_frames=1
    )
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            for request_id in range(6):
                await peer.send(request(request_id, "hang"))
            await peer.send(request("e", "echo"))
            assert (await peer.receive())["id"] == "e"  # all six are in flight now
            peer.close_input()
            frames = await peer.receive_until_eof()
    assert sorted(frame["id"] for frame in frames) == list(range(6))
    assert {frame["error"]["code"] for frame in frames} == {-32800}
