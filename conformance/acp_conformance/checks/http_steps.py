"""The steps the Streamable HTTP checks share (``--url`` runs): a fresh probe whose exchanges
become the evidence, an initialized connection, a session on it, a prompt turn over it.

Every HTTP check body gets a fresh probe through :func:`probed`: :mod:`.http`'s checks
(answers, error bodies, streams and SSE resume) are bound by :func:`http_rule`, and
:mod:`.http_status`'s table of refusals (one status code each) by its family body. Every step
here is the harness's own: when it fails, that is a setup error, not the rule under test
failing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..harness.http_probe import Exchange, HttpProbe, SseReader, answers, rpc
from ..outcomes import Outcome, failed, not_applicable
from ..requirements import check
from ..scenarios.catalog import HTTP
from ..scenarios.check_context import CheckContext, SetupError
from ..scenarios.remote_endpoint import endpoint


def new_session_request(request_id: int, cwd: str) -> dict[str, Any]:
    return rpc(request_id, "session/new", {"cwd": cwd, "mcpServers": []})


#: An HTTP check's body: it drives the endpoint through ``probe``.
HttpBody = Callable[[HttpProbe, CheckContext], Awaitable[Outcome]]


def http_rule(id: str) -> Callable[[HttpBody], HttpBody]:
    """Bind ``body`` as the check of rule ``id`` in the HTTP scenario, run with a fresh probe
    (:func:`probed`)."""

    def register(body: HttpBody) -> HttpBody:
        async def run_probed(ctx: CheckContext) -> Outcome:
            return await probed(ctx, body)

        check(id, scenario=HTTP, like=body)(run_probed)
        return body

    return register


async def probed(ctx: CheckContext, body: HttpBody, *, needs_token: bool = False) -> Outcome:
    """``body`` run with a fresh probe, whose exchanges all go into the outcome's evidence.
    ``needs_token``: it applies only when the run was given ``--token`` (the endpoint is then
    expected to require one)."""
    if needs_token and not (ctx.config.remote and ctx.config.remote.token):
        return not_applicable("no --token given: the endpoint is not expected to need one")
    target = await endpoint(ctx)
    async with anyio.create_task_group() as tg:
        probe = HttpProbe(target, tg, timeout=ctx.timeout)
        try:
            outcome = await body(probe, ctx)
        finally:
            tg.cancel_scope.cancel()
            await probe.aclose()
    outcome.evidence.setdefault("exchanges", probe.evidence())  # every exchange is evidence
    return outcome


async def connected(probe: HttpProbe) -> tuple[str, SseReader]:
    """An initialized connection with its stream open."""
    exchange, connection = await probe.initialize()
    if exchange.status != 200 or not connection:
        raise SetupError(f"initialize over HTTP failed: {exchange.describe()}")
    stream = await probe.open_stream(connection)
    if stream.status != 200:
        raise SetupError(f"the connection stream could not be opened (HTTP {stream.status})")
    return connection, stream


async def new_session(probe: HttpProbe, connection: str, stream: SseReader, cwd: str) -> str:
    """A session opened on ``connection`` (its answer read from the connection stream)."""
    exchange = await probe.post(new_session_request(1, cwd), connection)
    event = await stream.wait_for(answers(1), probe.timeout)
    msg = event.message if event else None
    result = msg.get("result") if isinstance(msg, dict) else None
    if exchange.status != 202 or not isinstance(result, dict) or "sessionId" not in result:
        raise SetupError(f"session/new over HTTP failed: {exchange.describe()}; answer {msg!r}")
    return str(result["sessionId"])


async def connected_session(probe: HttpProbe, cwd: str) -> tuple[str, SseReader, str]:
    """A connection with its stream open and a session on it."""
    connection, stream = await connected(probe)
    return connection, stream, await new_session(probe, connection, stream, cwd)


def status_is(exchange: Exchange, status: int, what: str) -> Outcome | None:
    """A failure naming ``what`` when ``exchange`` did not get ``status``; None when it did."""
    if exchange.status != status:
        return failed(f"{what}: expected HTTP {status}, got {exchange.describe()}")
    return None


def error_code(value: Any) -> Any:
    """The ``error.code`` of a JSON-RPC answer, or None."""
    error = value.get("error") if isinstance(value, dict) else None
    return error.get("code") if isinstance(error, dict) else None


async def still_usable(probe: HttpProbe, connection: str, stream: SseReader, cwd: str) -> bool:
    """Whether the connection still answers session/new (after something bad was sent)."""
    since = len(stream.events)
    await probe.post(new_session_request(99, cwd), connection)
    return await stream.wait_for(answers(99), probe.timeout, since) is not None


async def send_prompt(
    probe: HttpProbe, connection: str, session: str, rid: int, text: str
) -> Exchange:
    """POST a one-text prompt turn on ``session`` (with its session header)."""
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    return await probe.post(rpc(rid, "session/prompt", prompt), connection, session)


async def prompt_answered(
    probe: HttpProbe, connection: str, session: str, reader: SseReader, rid: int
) -> bool:
    """Send a prompt turn on ``session``; whether its answer arrives on ``reader``."""
    await send_prompt(probe, connection, session, rid, f"turn {rid}")
    return await reader.wait_for(answers(rid), probe.timeout * 3) is not None
