"""One error tree for every protocol version (issue 16, item 4).

The v1 and v2 bindings re-export the classes of ``acp_bindings.shared_errors``, so an error
raised with either version's class is answered with its code by the one connection, and an
error answer is caught by either version's class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_bindings import errors as v1_errors
from acp_bindings.v2 import errors as v2_errors
from iac_code.rpc.context import RequestContext
from iac_code.rpc.memory import memory_connection_pair

from tests.agent.protocol_v2.versioned_agent import open_versioned_agent

pytestmark = pytest.mark.anyio

V2_INIT = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}}


class _Raises:
    """A handler that answers every request with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        raise self.error

    async def handle_notification(self, method: str, params: object) -> None:
        raise self.error


async def _answer_to(error: Exception) -> BaseException:
    """What the calling side raises when the other side's handler raises ``error``."""
    server, client = memory_connection_pair(_Raises(error), _Raises(error))
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve)
            group.start_soon(client.serve)
            try:
                await client.send_request("x/y", {})
            except Exception as exc:
                caught: BaseException = exc
            else:
                raise AssertionError("the request was answered without an error")
            group.cancel_scope.cancel()
    return caught


@pytest.mark.parametrize(
    ("raised", "caught_as"),
    [
        (
            v2_errors.ResourceNotFoundError("gone", {"sessionId": "s"}),
            v1_errors.ResourceNotFoundError,
        ),
        (v1_errors.AuthRequiredError(), v2_errors.AuthRequiredError),
        (v2_errors.MethodNotFoundError(data={"method": "m"}), v1_errors.RpcError),
        (v1_errors.InvalidParamsError("bad"), v2_errors.RpcError),
    ],
)
async def test_an_error_of_either_version_crosses_with_its_code(
    raised: v1_errors.RpcError, caught_as: type[Exception]
) -> None:
    answer = await _answer_to(raised)
    assert isinstance(answer, caught_as)
    assert isinstance(answer, v1_errors.RpcError) and isinstance(answer, v2_errors.RpcError)
    assert answer.to_wire() == raised.to_wire()


async def test_a_v2_handler_error_reaches_the_v2_client_with_its_code(tmp_path: Path) -> None:
    async with open_versioned_agent(tmp_path) as client:
        assert (await client.call("initialize", V2_INIT)).result["protocolVersion"] == 2
        # session/load is v1 only: the v2 router answers the v2 bindings' MethodNotFoundError.
        stub = await client.call("session/load", {})
        assert stub.error["code"] == v2_errors.METHOD_NOT_FOUND
        assert stub.error["data"] == {"method": "session/load"}
        # The v1 agent raises -32602 for an unknown session; the v2 handler answers -32002.
        prompt = {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}
        unknown = await client.call("session/prompt", prompt)
        assert unknown.error["code"] == v2_errors.RESOURCE_NOT_FOUND
        assert unknown.error["data"] == {"sessionId": "nope"}
        # A notification v2 does not define is ignored; the connection stays up.
        await client.notify("session/load", {})
        assert (await client.call("session/list", {})).result["sessions"] == []


async def test_a_v1_client_gets_v1_codes_from_the_same_agent(tmp_path: Path) -> None:
    async with open_versioned_agent(tmp_path) as client:
        assert (await client.initialize()).result["protocolVersion"] == 1
        prompt = {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}
        unknown = await client.call("session/prompt", prompt)
        assert unknown.error["code"] == v1_errors.INVALID_PARAMS
        missing: dict[str, Any] = (await client.call("auth/logout", {})).error
        assert missing["code"] == v1_errors.METHOD_NOT_FOUND
