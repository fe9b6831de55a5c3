"""One prompt turn: user message → model ↔ tools loop → stop reason (SPEC §4.2, §4.3).

The turn owns a cancel scope. ``session/cancel`` and ``$/cancel_request`` call
:meth:`Turn.cancel`, which cancels the scope; whatever was streamed so far is persisted
(marked interrupted), every announced tool call gets a result, and the prompt answers
``stopReason: "cancelled"``. All updates of the turn are queued on the connection before the
handler returns, so none can follow the prompt's response.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from acp_bindings.errors import AuthRequiredError, InternalError
from acp_bindings.models import PromptResponse

from iac_code.agent import info
from iac_code.agent.compaction import maybe_compact
from iac_code.agent.content import check_prompt, title_from_prompt
from iac_code.agent.history import interrupted_result_event, missing_tool_results, model_messages
from iac_code.agent.partial_replies import REPLAY_KIND, partial_event
from iac_code.agent.system_prompt import build_system_prompt
from iac_code.agent.timestamps import utc_now
from iac_code.credentials import CredentialError
from iac_code.llm.contract import (
    NO_API_KEY_MESSAGE,
    ModelAuthError,
    ModelError,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ThinkingDelta,
    Usage,
)

if TYPE_CHECKING:
    from iac_code.agent.port import AgentPort
    from iac_code.agent.session import Session
    from iac_code.agent.tool_runner import ToolRunner
    from iac_code.llm.contract import ModelClient

log = logging.getLogger(__name__)

MCP_READY_TIMEOUT_S = 10.0
# Automatic iac_check rounds with findings per turn (each gives the model one more step).
MAX_AUTO_CHECKS = 2

_STOP_REASONS = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "pause_turn": "end_turn",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
}


@dataclass(frozen=True)
class TurnDependencies:
    port: AgentPort
    tools: ToolRunner


def close_open_tool_calls(port: AgentPort, session: Session) -> list[dict[str, Any]]:
    """Give every orphaned tool_use an "interrupted" result, in memory and on disk (§4.3)."""
    repairs = [
        interrupted_result_event(tool_id) for tool_id in missing_tool_results(session.events)
    ]
    for event in repairs:
        port.persist(session, event)
    return repairs


@dataclass
class _Streamed:
    """What the current model response has produced so far (persisted on interruption)."""

    message_id: str
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)

    def blocks(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if self.thinking:
            # Without its signature a thinking block cannot go back to the model; it is kept
            # for replay only (history drops unsigned thinking from model requests).
            blocks.append({"type": "thinking", "thinking": "".join(self.thinking)})
        if self.text:
            blocks.append({"type": "text", "text": "".join(self.text)})
        return blocks


def wants_unstable_fields(client_capabilities: Mapping[str, Any]) -> bool:
    """Whether the client opted into root fields of ACP's unstable schema.

    The opt-in is ``clientCapabilities._meta.iac_code.unstable: true`` on ``initialize``;
    without it results carry only what the stable schema defines (the same numbers are
    always in ``_meta.iac_code``).
    """
    meta = client_capabilities.get("_meta")
    house = meta.get("iac_code") if isinstance(meta, Mapping) else None
    return isinstance(house, Mapping) and house.get("unstable") is True


class Turn:
    def __init__(self, session: Session, deps: TurnDependencies) -> None:
        self.session = session
        self.port = deps.port
        self.tools = deps.tools
        self._scope: anyio.CancelScope | None = None
        self._cancel_requested = False
        self._done = anyio.Event()
        self._streamed: _Streamed | None = None
        self.usage = Usage(0, 0, 0, 0)
        self._closed_calls: list[dict[str, Any]] = []
        #: Set once the user message is persisted: only then does the session change.
        self.started = False
        self.updated_at: str | None = None
        self._auto_checks = 0

    # -------------------------------------------------------------- cancellation

    def cancel(self) -> None:
        self._cancel_requested = True
        if self._scope is not None:
            self._scope.cancel()

    def cancelled_before_start(self) -> PromptResponse:
        """The answer for a prompt cancelled before its turn began (history untouched)."""
        self._cancel_requested = True
        self._done.set()
        return self._response("cancelled")

    async def cancel_and_wait(self) -> None:
        self.cancel()
        with anyio.move_on_after(5):
            await self._done.wait()

    # -------------------------------------------------------------- the turn

    async def run(
        self, prompt: list[dict[str, Any]], *, message_id: str | None = None
    ) -> PromptResponse:
        try:
            return await self._run(prompt, message_id)
        finally:
            self._done.set()

    async def _run(self, prompt: list[dict[str, Any]], message_id: str | None) -> PromptResponse:
        check_prompt(prompt)
        try:
            client = await self.port.model.ready_client()
        except CredentialError as exc:
            raise AuthRequiredError(
                str(exc),
                data={"authMethods": info.auth_method_ids(self.port.client_capabilities())},
            ) from None
        if client is None:
            log.warning("prompt in session %s failed: no API key", self.session.session_id)
            raise AuthRequiredError(
                NO_API_KEY_MESSAGE,
                data={"authMethods": info.auth_method_ids(self.port.client_capabilities())},
            )
        session = self.session
        first_prompt = session.untitled
        self.started = True
        self.port.persist(
            session,
            {
                "type": "user_message",
                "messageId": message_id or uuid.uuid4().hex,
                "content": prompt,
            },
        )
        if first_prompt:
            session.title = title_from_prompt(prompt)
            if session.title:
                await self.port.notify(
                    session.session_id,
                    {"sessionUpdate": "session_info_update", "title": session.title},
                )
        stop_reason = "cancelled"
        with anyio.CancelScope() as scope:
            self._scope = scope
            if self._cancel_requested:
                scope.cancel()
            try:
                stop_reason = await self._loop(client)
            except ModelAuthError as exc:
                _log_failed(session.session_id, exc)
                # A key saved by a later terminal login is picked up by the next prompt.
                self.port.model.forget_client()
                raise AuthRequiredError(
                    f"The model endpoint rejected the API key: {exc}",
                    data={"authMethods": info.auth_method_ids(self.port.client_capabilities())},
                ) from exc
            except ModelError as exc:
                _log_failed(session.session_id, exc)
                raise InternalError(f"The model request failed: {exc}") from exc
            finally:
                self._persist_interrupted()
        if scope.cancelled_caught or self._cancel_requested:
            stop_reason = "cancelled"
        await self._report_closed_calls()
        self.updated_at = utc_now()
        await self.port.notify(
            session.session_id,
            {"sessionUpdate": "session_info_update", "updatedAt": self.updated_at},
        )
        return self._response(stop_reason)

    async def _report_closed_calls(self) -> None:
        """Tell the client how interrupted tool calls ended, before the prompt answers."""
        for event in self._closed_calls:
            await self.port.notify(
                self.session.session_id,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": event["toolCallId"],
                    "status": "failed",
                    "content": event["content"],
                    "rawOutput": event["rawOutput"],
                },
            )
        self._closed_calls = []

    async def _loop(self, client: ModelClient) -> str:
        limit = self.port.settings.max_turn_requests
        if self.session.mcp is not None:
            # Servers start in the background at session/new; give slow ones a moment to
            # list their tools before the first request of the turn (cancellable).
            await self.session.mcp.ready(MCP_READY_TIMEOUT_S)
        for _ in range(limit):
            self.usage = self.usage + await maybe_compact(self.port, self.session, client)
            response = await self._model_step(client)
            if response.stop_reason != "tool_use":
                # Edited IaC files are checked before the turn ends (issue 33); findings
                # give the model another step.
                if self._auto_checks < MAX_AUTO_CHECKS and await self.tools.check_edits(self):
                    self._auto_checks += 1
                    continue
                return _STOP_REASONS.get(response.stop_reason or "end_turn", "end_turn")
            await self.tools.run(self, response)
        return "max_turn_requests"

    def _request(self) -> ModelRequest:
        session = self.session
        messages = model_messages(session.events, images=True)
        return ModelRequest(
            model=session.config.model,
            system=build_system_prompt(session.cwd, session.roots),
            messages=messages,
            tools=self.tools.specs(session),
            max_tokens=self.port.settings.max_tokens,
            # The automatic check's tool_use carries no thinking block, which a request with
            # thinking enabled would reject: the rest of such a turn runs without thinking.
            thinking_budget=(session.config.thinking_budget or None)
            if not self._auto_checks
            else None,
        )

    async def _model_step(self, client: ModelClient) -> ModelResponse:
        session_id = self.session.session_id
        streamed = _Streamed(message_id=uuid.uuid4().hex)
        self._streamed = streamed
        response: ModelResponse | None = None
        await self.port.model.ready(client)
        async with self.port.model.silence_watch() as watch:
            async for event in self.port.model.stream(client, self._request()):
                watch.heard()
                if isinstance(event, TextDelta):
                    streamed.text.append(event.text)
                    await self._relay(session_id, "text", event.text, streamed)
                elif isinstance(event, ThinkingDelta):
                    streamed.thinking.append(event.text)
                    await self._relay(session_id, "thinking", event.text, streamed)
                elif isinstance(event, ModelResponse):
                    response = event
        if response is None:
            raise InternalError("The model stream ended without a response.")
        self._streamed = None
        self.port.persist(
            self.session,
            {
                "type": "assistant_message",
                "messageId": streamed.message_id,
                "blocks": response.content,
                "stopReason": response.stop_reason,
            },
        )
        self.usage = self.usage + response.usage
        self.session.last_context_tokens = response.usage.context_tokens
        await self.port.notify(
            session_id,
            {
                "sessionUpdate": "usage_update",
                "used": response.usage.context_tokens,
                "size": self.port.settings.context_window,
            },
        )
        return response

    async def _relay(self, session_id: str, kind: str, text: str, streamed: _Streamed) -> None:
        """One streamed delta as a chunk; chunks of one model message share its messageId.

        The delta is stored before its chunk is written to the client (write-ahead, in one
        append per written batch), so a process killed mid-reply still has every chunk the
        client saw.
        """
        failure = self.session.store_failure_again()
        if failure is not None:  # fenced or unreachable: relay nothing more
            raise failure
        if text:
            self.port.persist_ahead(self.session, partial_event(streamed.message_id, kind, text))
        await self.port.notify(
            session_id,
            {
                "sessionUpdate": REPLAY_KIND[kind],
                "content": {"type": "text", "text": text},
                "messageId": streamed.message_id,
            },
        )

    def _persist_interrupted(self) -> None:
        """Keep what was streamed before an interruption, and close open tool calls."""
        streamed, self._streamed = self._streamed, None
        if streamed is not None and (streamed.text or streamed.thinking):
            self.port.persist(
                self.session,
                {
                    "type": "assistant_message",
                    "messageId": streamed.message_id,
                    "blocks": streamed.blocks(),
                    "stopReason": None,
                    "interrupted": True,
                },
            )
        self._closed_calls = close_open_tool_calls(self.port, self.session)

    def _response(self, stop_reason: str) -> PromptResponse:
        usage = self.usage
        result: dict[str, Any] = {"stopReason": stop_reason}
        if wants_unstable_fields(self.port.client_capabilities()):
            # The unstable ACP ``usage`` field (an extra to the v1 model): stable ACP allows
            # only ``stopReason`` and ``_meta`` here, so only clients that asked get it.
            result["usage"] = {
                "totalTokens": usage.total_tokens,
                "inputTokens": usage.input_tokens,
                "outputTokens": usage.output_tokens,
                "cachedReadTokens": usage.cache_read_tokens,
                "cachedWriteTokens": usage.cache_write_tokens,
            }
        return PromptResponse.model_validate(
            {
                **result,
                "_meta": {
                    "iac_code": {
                        "usage": {
                            "inputTokens": usage.input_tokens,
                            "outputTokens": usage.output_tokens,
                            "cacheReadTokens": usage.cache_read_tokens,
                            "cacheWriteTokens": usage.cache_write_tokens,
                            "totalTokens": usage.total_tokens,
                        }
                    }
                },
            }
        )


def _log_failed(session_id: str, error: ModelError) -> None:
    """One WARNING line per failed prompt, visible at the default log level. The text is the
    error's own message (URLs, statuses, never the key: the SDK's messages do not carry it)."""
    log.warning("prompt in session %s failed: %s", session_id, " ".join(str(error).split()))
