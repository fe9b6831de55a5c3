"""WebSocket transport requirements (``--url ... --ws`` runs): the upgrade and its header.

The protocol itself over the socket is judged by every transport-independent check, which
runs through :class:`~..harness.remote.RemoteConnection` in WebSocket mode."""

from __future__ import annotations

import json
from typing import Any

import anyio

from ..harness.http_probe import initialize_request
from ..harness.remote_http import CONNECTION_HEADER, RemoteTarget
from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import check
from ..scenarios.catalog import WS
from ..scenarios.check_context import CheckContext
from ..scenarios.remote_endpoint import endpoint


async def _connect(target: RemoteTarget, headers: dict[str, str], bound: float) -> Any:
    from websockets.asyncio.client import connect

    return await connect(
        target.ws_url, additional_headers=headers, open_timeout=bound, max_size=None
    )


@check("ws.upgrade", scenario=WS)
async def upgrade_names_connection(ctx: CheckContext) -> Outcome:
    from websockets.exceptions import InvalidStatus

    target = await endpoint(ctx)
    try:
        socket = await _connect(target, target.headers(), ctx.timeout)
    except InvalidStatus as exc:
        return failed(f"the upgrade was refused with HTTP {exc.response.status_code}")
    try:
        response = socket.response
        connection = response.headers.get(CONNECTION_HEADER)
        if response.status_code != 101 or not connection:
            return failed(
                f"upgrade answered {response.status_code} without an Acp-Connection-Id header"
            )
        await socket.send(json.dumps(initialize_request(1)))
        with anyio.move_on_after(ctx.timeout):
            frame = await socket.recv()
            if not isinstance(frame, str):
                return failed("initialize was answered with a binary frame")
            answer = json.loads(frame)
            if isinstance(answer, dict) and answer.get("id") == 1 and "result" in answer:
                return passed(f"101 with Acp-Connection-Id {connection}; initialize answered")
            return failed(f"initialize was answered with {frame[:200]!r}")
        return failed(f"no answer to initialize within {ctx.timeout:g} s")
    finally:
        with anyio.CancelScope(shield=True):
            await socket.close()


@check("ws.token-required", scenario=WS)
async def upgrade_needs_token(ctx: CheckContext) -> Outcome:
    from websockets.exceptions import InvalidStatus

    if not ctx.config.remote or not ctx.config.remote.token:
        return not_applicable("no --token given: the endpoint is not expected to need one")
    target = await endpoint(ctx)
    try:
        socket = await _connect(target, {}, ctx.timeout)
    except InvalidStatus as exc:
        if exc.response.status_code == 401:
            return passed("an upgrade without the token was refused with 401")
        return failed(f"an upgrade without the token got HTTP {exc.response.status_code}")
    with anyio.CancelScope(shield=True):
        await socket.close()
    return failed("an upgrade without the token was accepted")
