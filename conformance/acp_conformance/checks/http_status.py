"""The Streamable HTTP refusals as one table (``--url`` runs): each row asks the endpoint
something it must refuse, and names the status code the refusal must carry.

The codes follow the ACP "Streamable HTTP & WebSocket" transport RFD and the official
TypeScript SDK's server, which defines them: 400 missing / 404 unknown connection id, 415
wrong content type, 406 a GET that does not accept an event stream, 409 a second reader of
one stream, 401 a missing or wrong token, 403 a foreign Origin. Each row is its own
requirement; one check body (:func:`_refused`) judges them all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..harness.http_probe import Exchange, HttpProbe, SseReader, rpc
from ..outcomes import Outcome, failed, passed
from ..scenarios.catalog import HTTP
from ..scenarios.check_context import CheckContext
from .families import register_family
from .http_steps import (
    connected,
    connected_session,
    new_session_request,
    probed,
)


@dataclass(frozen=True)
class Attempt:
    """One request the endpoint must refuse, and what it answered."""

    what: str
    status: int
    shown: str

    @classmethod
    def of(cls, what: str, answer: Exchange | SseReader) -> Attempt:
        if isinstance(answer, SseReader):
            answer.close()
            return cls(what, answer.status, f"HTTP {answer.status}")
        return cls(what, answer.status, answer.describe())


Ask = Callable[[HttpProbe, CheckContext], Awaitable[list[Attempt]]]


@dataclass(frozen=True)
class Refusal:
    """A row of the table: a rule, the requests that provoke it, the status expected."""

    #: The id of the rule the row judges.
    rule: str
    status: int
    ask: Ask
    #: Applies only when the run was given ``--token`` (the endpoint then requires one).
    needs_token: bool = False


async def _post_without_connection(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    exchange = await probe.post(new_session_request(1, str(ctx.work)))
    return [Attempt.of("session/new without Acp-Connection-Id", exchange)]


async def _post_to_unknown_connection(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    request = new_session_request(1, str(ctx.work))
    exchange = await probe.post(request, "acp-conformance-no-such-connection")
    return [Attempt.of("a POST naming an unknown connection", exchange)]


async def _post_text_plain(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    connection, _ = await connected(probe)
    request = new_session_request(3, str(ctx.work))
    exchange = await probe.post(request, connection, content_type="text/plain")
    return [Attempt.of("a text/plain POST", exchange)]


async def _get_accepting_json(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    connection, _ = await connected(probe)
    reader = await probe.open_stream(connection, accept="application/json")
    return [Attempt.of("a GET accepting only application/json", reader)]


async def _prompt_without_session_header(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    connection, _, session = await connected_session(probe, str(ctx.work))
    prompt = rpc(8, "session/prompt", {"sessionId": session, "prompt": []})
    missing = await probe.post(prompt, connection)
    mismatched = await probe.post(prompt, connection, "acp-conformance-other-session")
    return [
        Attempt.of("session/prompt without Acp-Session-Id", missing),
        Attempt.of("session/prompt with a mismatched Acp-Session-Id", mismatched),
    ]


async def _second_reader(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    connection, _ = await connected(probe)
    second = await probe.open_stream(connection)
    return [Attempt.of("a second reader of the connection stream", second)]


async def _initialize_without_token(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    without, _ = await probe.initialize(auth=False)
    wrong, _ = await probe.initialize(auth=False, Authorization="Bearer not-the-token")
    return [
        Attempt.of("initialize without the bearer token", without),
        Attempt.of("initialize with a wrong token", wrong),
    ]


async def _initialize_from_foreign_origin(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    exchange, _ = await probe.initialize(Origin="http://attacker.invalid")
    return [Attempt.of("initialize from a foreign Origin", exchange)]


async def _initialize_unknown_version(probe: HttpProbe, ctx: CheckContext) -> list[Attempt]:
    exchange, _ = await probe.initialize(Acp_Protocol_Version="65535")
    return [Attempt.of("initialize with Acp-Protocol-Version 65535", exchange)]


REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        "http.missing-connection-id",
        400,
        _post_without_connection,
    ),
    Refusal(
        "http.unknown-connection-id",
        404,
        _post_to_unknown_connection,
    ),
    Refusal(
        "http.content-type",
        415,
        _post_text_plain,
    ),
    Refusal(
        "http.accept-event-stream",
        406,
        _get_accepting_json,
    ),
    Refusal(
        "http.session-header",
        400,
        _prompt_without_session_header,
    ),
    Refusal(
        "http.single-reader",
        409,
        _second_reader,
    ),
    Refusal(
        "http.token-required",
        401,
        _initialize_without_token,
        needs_token=True,
    ),
    Refusal(
        "http.origin-checked",
        403,
        _initialize_from_foreign_origin,
    ),
    Refusal(
        "http.protocol-version-checked",
        400,
        _initialize_unknown_version,
    ),
)


async def _refused(ctx: CheckContext, row: Refusal) -> Outcome:
    """The one check body of the table: every attempt of the row got the row's status."""

    async def body(probe: HttpProbe, ctx: CheckContext) -> Outcome:
        attempts = await row.ask(probe, ctx)
        for attempt in attempts:
            if attempt.status != row.status:
                return failed(f"{attempt.what}: expected HTTP {row.status}, got {attempt.shown}")
        return passed(f"refused with {row.status}: " + "; ".join(a.what for a in attempts))

    return await probed(ctx, body, needs_token=row.needs_token)


register_family(REFUSALS, HTTP, _refused, module=__name__)
