"""Outbound calls a layer above can manage itself, and input reported instead of answered.

What the MCP client needs of the connection: the id of a request it gives up on (to send MCP's
``notifications/cancelled``), a quiet drop of the late answer, and a peer whose stray output
is logged rather than answered.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from acp_bindings.errors import InvalidParamsError, RpcError
from iac_code.rpc import ConnectionClosedError, RequestContext
from iac_code.rpc.connection import Connection
from iac_code.rpc.memory import RawPeer, raw_peer_connection

pytestmark = pytest.mark.anyio

V = {"jsonrpc": "2.0"}


class _Quiet:
    """Answers every request with ``{}`` and ignores notifications."""

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        return {}

    async def handle_notification(self, method: str, params: object) -> None:
        return None


@asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[tuple[Connection, RawPeer]]:
    connection, peer = raw_peer_connection(_Quiet(), **options)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            yield connection, peer
            peer.close_input()


async def test_a_started_call_names_its_id_and_gets_its_answer() -> None:
    async with serving() as (connection, peer):
        call = await connection.start_request("tools/list", {"cursor": "c"})
        sent = await peer.receive()
        assert sent == {**V, "id": call.id, "method": "tools/list", "params": {"cursor": "c"}}
        assert not call.answered
        await peer.send({**V, "id": call.id, "error": {"code": -32602, "message": "no"}})
        with pytest.raises(InvalidParamsError):
            await call.result_or_error()
        assert call.answered
        call.forget()
        call.forget()  # idempotent


async def test_a_forgotten_call_drops_its_late_answer_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="iac_code.rpc")
    async with serving() as (connection, peer):
        call = await connection.start_request("slow")
        await peer.receive()
        call.forget()
        await peer.send({**V, "id": call.id, "result": "late"})
        await peer.send({**V, "id": 4242, "result": "never asked"})
        await peer.send({**V, "id": 7, "method": "ping"})
        assert (await peer.receive())["id"] == 7  # both responses were read by now
    late = [r for r in caplog.records if "late response" in r.getMessage()]
    unknown = [r for r in caplog.records if "unknown request id 4242" in r.getMessage()]
    assert [r.levelno for r in late] == [logging.DEBUG]
    assert [r.levelno for r in unknown] == [logging.WARNING]


async def test_a_call_fails_when_the_connection_ends_first() -> None:
    async with serving() as (connection, peer):
        call = await connection.start_request("slow")
        await peer.receive()
        peer.close_input()
        with pytest.raises(ConnectionClosedError):
            await call.result_or_error()
    with pytest.raises(ConnectionClosedError):
        await connection.start_request("after")


async def test_invalid_input_is_reported_instead_of_answered() -> None:
    reported: list[RpcError] = []
    async with serving(on_invalid_input=reported.append, max_line_bytes=64) as (_, peer):
        await peer.send_bytes(b"a log line\n")
        await peer.send_bytes(b"x" * 100 + b"\n")
        await peer.send({**V, "what": "no method, no id"})
        await peer.send({**V, "id": 1, "method": "ping"})
        assert await peer.receive() == {**V, "id": 1, "result": {}}  # the first frame written
    assert [error.code for error in reported] == [-32700, -32600, -32600]
