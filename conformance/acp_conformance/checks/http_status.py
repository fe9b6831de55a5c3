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
from ..requirements import Requirement, Tier
from ..scenarios.catalog import HTTP
from ..scenarios.check_context import CheckContext
from .families import register_family
from .http_steps import (
    RFD,
    SDK_HOUSE_RULE,
    connected,
    connected_session,
    new_session_request,
    probed,
    rfd_must,
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

    rule: Requirement
    status: int
    ask: Ask
    #: Applies only when the run was given ``--token`` (the endpoint then requires one).
    needs_token: bool = False


def _sdk_rule(id: str, statement: str, tier: Tier = Tier.MUST) -> Requirement:
    """A rule the RFD leaves to the SDK: a house rule citing the SDK's behaviour."""
    return Requirement(id, tier, statement, SDK_HOUSE_RULE, house=True)


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
        _sdk_rule(
            "http.missing-connection-id",
            "A POST other than initialize without Acp-Connection-Id is refused with 400.",
        ),
        400,
        _post_without_connection,
    ),
    Refusal(
        _sdk_rule(
            "http.unknown-connection-id",
            "A POST naming an unknown Acp-Connection-Id is refused with 404.",
        ),
        404,
        _post_to_unknown_connection,
    ),
    Refusal(
        Requirement(
            "http.content-type",
            Tier.MUST,
            "A POST whose Content-Type is not application/json is refused with 415.",
            rfd_must("POST Content-Type MUST be application/json (415 otherwise)"),
        ),
        415,
        _post_text_plain,
    ),
    Refusal(
        Requirement(
            "http.accept-event-stream",
            Tier.MUST,
            "A GET that does not accept text/event-stream is refused with 406.",
            rfd_must("GET Accept MUST include text/event-stream (406 otherwise)"),
        ),
        406,
        _get_accepting_json,
    ),
    Refusal(
        Requirement(
            "http.session-header",
            Tier.MUST,
            "A session-scoped request without Acp-Session-Id, or with one "
            "that differs from params.sessionId, is refused with 400.",
            rfd_must(
                "POST requests for session-scoped operations MUST include both "
                "Acp-Connection-Id and Acp-Session-Id headers"
            ),
        ),
        400,
        _prompt_without_session_header,
    ),
    Refusal(
        _sdk_rule(
            "http.single-reader",
            "A second GET of a stream that already has a reader is refused with 409.",
        ),
        409,
        _second_reader,
    ),
    Refusal(
        _sdk_rule(
            "http.token-required",
            "With a token configured (--token), requests without it or with "
            "a wrong one are refused with 401.",
        ),
        401,
        _initialize_without_token,
        needs_token=True,
    ),
    Refusal(
        Requirement(
            "http.origin-checked",
            Tier.SHOULD,
            "A request with a foreign Origin header is refused with 403.",
            RFD,
        ),
        403,
        _initialize_from_foreign_origin,
    ),
    Refusal(
        Requirement(
            "http.protocol-version-checked",
            Tier.SHOULD,
            "A request naming an unsupported Acp-Protocol-Version is refused with 400.",
            RFD,
        ),
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
