"""Agent-side handlers of protocol v2, served by the same :class:`IacAgent` as v1.

Each handler receives params the router validated against the v2 bindings, turns them into
the v1 params of the matching agent method (validated again, against the v1 model, so the
agent never sees a shape it does not know), and answers in v2 shape. ``auth/login`` and
``auth/logout`` are v1's ``authenticate`` and ``logout``: the v2 draft asks an agent that
advertises auth methods to serve both. ``tool_call/cancel`` stops one running tool call and
the turn goes on; ``terminal/cancel`` always names the terminal unknown, because the agent
reports no terminals on v2. A method v2 defines that had no handler here would get -32601
from the generated base (today every one has one).

The one change of behaviour is ``session/prompt``: v2 answers as soon as the user message
is part of the conversation (with its ``messageId``), reports that message as a
``user_message`` update and the end of the turn as a ``state_update`` (``running`` ...
``idle`` with the stop reason). Because the turn starts only after that answer, a
``session/cancel`` or ``session/close`` may arrive before the v1 turn exists: the accepted
prompt is tracked here (:class:`_AcceptedPrompt`) so that either one still ends the work
``cancelled``, and ``session/close`` answers only after that idle.

``bash`` jobs a turn leaves running (``background: true``) are listed in the ``background``
field of the state updates, each as the tool call that started it; when one starts or ends
the state is sent again with the new full list (an empty list once the last one ended).

While a permission request or a form elicitation (``ask_user``) of a running turn waits for
the user, the whole turn is blocked on them: the state goes ``requires_action`` before the
request and back to ``running`` once the last pending one is answered (a cancelled turn goes
straight to its ``idle``), as the newest v2 draft's session states ask.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar, cast

import anyio
from acp_bindings.errors import (
    AuthRequiredError,
    InvalidParamsError,
    ResourceNotFoundError,
    RpcError,
)
from acp_bindings.models import AuthenticateRequest as V1AuthenticateRequest
from acp_bindings.models import CancelNotification as V1CancelNotification
from acp_bindings.models import CloseSessionRequest as V1CloseSessionRequest
from acp_bindings.models import DeleteSessionRequest as V1DeleteSessionRequest
from acp_bindings.models import InitializeRequest as V1InitializeRequest
from acp_bindings.models import ListSessionsRequest as V1ListSessionsRequest
from acp_bindings.models import LoadSessionRequest as V1LoadSessionRequest
from acp_bindings.models import LogoutRequest as V1LogoutRequest
from acp_bindings.models import NewSessionRequest as V1NewSessionRequest
from acp_bindings.models import PromptRequest as V1PromptRequest
from acp_bindings.models import ResumeSessionRequest as V1ResumeSessionRequest
from acp_bindings.models import SetSessionConfigOptionRequest as V1SetSessionConfigOptionRequest
from acp_bindings.v2.agent import AgentHandlers
from acp_bindings.v2.models import (
    CancelTerminalResponse,
    CancelToolCallResponse,
    CloseSessionResponse,
    DeleteSessionResponse,
    InitializeResponse,
    ListSessionsResponse,
    LoginAuthResponse,
    LogoutAuthResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
)

from iac_code.agent import info as v1_info
from iac_code.agent.commands import available_commands
from iac_code.agent.content import check_prompt
from iac_code.credentials import CredentialError, resolve_api_key_async
from iac_code.llm.contract import NO_API_KEY_MESSAGE
from iac_code.router import validate_params
from iac_code.rpc.connection import ConnectionClosedError
from iac_code.rpc.context import current_request
from iac_code.v2 import info as v2_info
from iac_code.v2 import translate

if TYPE_CHECKING:
    from acp_bindings.v2.models import (
        CancelSessionNotification,
        CancelTerminalRequest,
        CancelToolCallRequest,
        CloseSessionRequest,
        DeleteSessionRequest,
        InitializeRequest,
        ListSessionsRequest,
        LoginAuthRequest,
        LogoutAuthRequest,
        NewSessionRequest,
        PromptRequest,
        ResumeSessionRequest,
        SetSessionConfigOptionRequest,
    )
    from pydantic import BaseModel

    from iac_code.agent.acp_agent import IacAgent
    from iac_code.agent.turn import Turn
    from iac_code.v2.rewriter import V2Rewriter

log = logging.getLogger(__name__)

#: How the v1 agent reports a session id it does not hold open.
_UNKNOWN_SESSION_DATA = {"sessionId": "unknown session"}


#: Bound on how long ``session/close`` waits for a cancelled turn to report its idle.
_CLOSE_WAIT_S = 30.0


class _AcceptedPrompt:
    """A prompt answered with its ``messageId`` whose turn has not reported idle yet."""

    __slots__ = ("cancelled", "done", "started", "turn")

    def __init__(self) -> None:
        self.cancelled = False
        #: The turn began (its first update went out). Until then a session/close or delete
        #: withdraws it: in a batch, the close runs before the prompt's answer is written.
        self.started = False
        self.done = anyio.Event()
        self.turn: Turn | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.turn is not None:
            self.turn.cancel()

    def bind(self, turn: Turn) -> None:
        """The v1 turn now exists; a cancel that came first is handed on to it."""
        self.turn = turn
        if self.cancelled:
            turn.cancel()


def _wire(params: BaseModel) -> dict[str, Any]:
    return params.model_dump(by_alias=True, exclude_unset=True, mode="json")


_Params = TypeVar("_Params", bound="BaseModel")


def _v1(model: type[_Params], params: dict[str, Any]) -> _Params:
    """``params`` as the v1 ``model``, strictly validated like inbound v1 params."""
    return cast("_Params", validate_params(model, params))


@contextmanager
def _v2_errors(session_id: object) -> Iterator[None]:
    """v2 names an unknown session with -32002 and ``{sessionId}`` data, v1 with -32602."""
    try:
        yield
    except InvalidParamsError as exc:
        if exc.data == _UNKNOWN_SESSION_DATA:
            raise ResourceNotFoundError(
                "Unknown session.", data={"sessionId": session_id}
            ) from None
        raise


class V2Handlers(AgentHandlers):
    """The v2 methods the agent serves; the generated base answers -32601 for the rest."""

    def __init__(self, agent: IacAgent, peer: V2Rewriter) -> None:
        self.agent = agent
        self.peer = peer
        #: Sessions whose prompt was acknowledged and whose turn has not ended yet (the
        #: turn starts only after the answer is written, so ``session.turn`` lags behind).
        self._turns: dict[str, _AcceptedPrompt] = {}
        #: Sessions → their questions (permission requests, elicitations) waiting for the user.
        self._asking: dict[str, int] = {}
        # Background jobs starting or ending re-send the session's state with the new list.
        agent.tools.background.add_listener(self._background_changed)
        peer.add_asking_listener(self._asking_changed)

    async def initialize(self, params: InitializeRequest) -> InitializeResponse:
        # v2 clients cannot serve fs or terminal requests, so the agent is told the client
        # offers neither and works on the local file system. Notices and compaction updates
        # are plain update kinds of the v2 draft (no capability gates them), so every v2
        # client takes them: the agent is told so in v1 terms (with form elicitation when
        # the client advertised it).
        client = _wire(params).get("capabilities")
        v1_result = await self.agent.initialize(
            _v1(
                V1InitializeRequest,
                {
                    "protocolVersion": v1_info.PROTOCOL_VERSION,
                    "clientCapabilities": v2_info.v1_client_capabilities(client),
                },
            )
        )
        images = bool(_field(v1_result, "agentCapabilities", "promptCapabilities", "image"))
        return InitializeResponse.model_validate(
            v2_info.initialize_result(images=images, client_capabilities=client)
        )

    async def auth_login(self, params: LoginAuthRequest) -> LoginAuthResponse:
        await self.agent.authenticate(
            _v1(V1AuthenticateRequest, {"methodId": _wire(params)["methodId"]})
        )
        return LoginAuthResponse()

    async def auth_logout(self, params: LogoutAuthRequest) -> LogoutAuthResponse:
        # Forgets the key the terminal login saved, as v1 logout does (the environment's key
        # is not the agent's to remove).
        await self.agent.logout(_v1(V1LogoutRequest, {}))
        return LogoutAuthResponse()

    async def session_new(self, params: NewSessionRequest) -> NewSessionResponse:
        result = await self.agent.session_new(
            _v1(V1NewSessionRequest, translate.session_params(_wire(params)))
        )
        return NewSessionResponse.model_validate(
            translate.session_result(_as_dict(result), available_commands())
        )

    async def session_resume(self, params: ResumeSessionRequest) -> ResumeSessionResponse:
        raw = _wire(params)
        replay = raw.get("replayFrom")
        if replay is not None and replay.get("type") != "start":
            raise InvalidParamsError(
                "Unknown replay position.", data={"replayFrom": "only {type: start} is supported"}
            )
        v1_params = translate.session_params(raw)
        result: object
        with _v2_errors(raw["sessionId"]):
            if replay:
                # v1 ``session/load`` replays the stored history as updates; the peer turns
                # them into v2 updates on the way out.
                with self.peer.replay(raw["sessionId"]):
                    result = await self.agent.session_load(_v1(V1LoadSessionRequest, v1_params))
            else:
                result = await self.agent.session_resume(_v1(V1ResumeSessionRequest, v1_params))
        return ResumeSessionResponse.model_validate(
            translate.session_result(_as_dict(result), available_commands())
        )

    async def session_list(self, params: ListSessionsRequest) -> ListSessionsResponse:
        result = await self.agent.session_list(_v1(V1ListSessionsRequest, _wire(params)))
        return ListSessionsResponse.model_validate(_as_dict(result))

    async def session_delete(self, params: DeleteSessionRequest) -> DeleteSessionResponse:
        await self._end_accepted_turn(_wire(params)["sessionId"])
        await self.agent.session_delete(_v1(V1DeleteSessionRequest, _wire(params)))
        return DeleteSessionResponse()

    async def session_close(self, params: CloseSessionRequest) -> CloseSessionResponse:
        raw = _wire(params)
        # Work in flight is cancelled as ``session/cancel`` would (idle ``cancelled``), and
        # only then is the session freed.
        await self._end_accepted_turn(raw["sessionId"])
        with _v2_errors(raw["sessionId"]):
            await self.agent.session_close(_v1(V1CloseSessionRequest, raw))
        return CloseSessionResponse()

    async def _end_accepted_turn(self, session_id: str) -> None:
        accepted = self._turns.get(session_id)
        if accepted is None:
            return
        accepted.cancel()
        if not accepted.started:
            # Answered in the same batch and not begun: withdrawn, it will send nothing
            # (waiting for it would wait for this very batch's answer to be written).
            del self._turns[session_id]
            return
        with anyio.move_on_after(_CLOSE_WAIT_S):
            await accepted.done.wait()

    async def session_set_config_option(
        self, params: SetSessionConfigOptionRequest
    ) -> SetSessionConfigOptionResponse:
        raw = _wire(params)
        if raw.get("type") != "id":
            raise InvalidParamsError(
                "Only select options exist.", data={"type": "must be id: no boolean options"}
            )
        v1_params = {k: v for k, v in raw.items() if k != "type"}
        with _v2_errors(raw["sessionId"]):
            result = await self.agent.session_set_config_option(
                _v1(V1SetSessionConfigOptionRequest, v1_params)
            )
        options = translate.config_options(_as_dict(result)["configOptions"])
        return SetSessionConfigOptionResponse.model_validate({"configOptions": options})

    async def session_cancel(self, params: CancelSessionNotification) -> None:
        raw = _wire(params)
        accepted = self._turns.get(raw["sessionId"])
        if accepted is not None:
            accepted.cancel()  # also before the v1 turn exists (the SDK import, ``running``)
        await self.agent.session_cancel(_v1(V1CancelNotification, raw))

    async def tool_call_cancel(self, params: CancelToolCallRequest) -> CancelToolCallResponse:
        """Stop one running tool call; the turn goes on with the model told it was stopped."""
        raw = _wire(params)
        session_id, tool_call_id = raw["sessionId"], raw["toolCallId"]
        if session_id not in self.agent.sessions:
            raise ResourceNotFoundError("Unknown session.", data={"sessionId": session_id})
        # Only calls whose ``in_progress`` update offered ``capabilities.cancel`` can be
        # stopped; anything else (unknown, still asking for permission, already ended) is
        # not a running call of this session.
        if not self.agent.tools.stop_call(session_id, tool_call_id):
            raise ResourceNotFoundError(
                "No running tool call with this id.", data={"toolCallId": tool_call_id}
            )
        return CancelToolCallResponse()

    async def terminal_cancel(self, params: CancelTerminalRequest) -> CancelTerminalResponse:
        """The agent owns no terminals on a v2 connection, so no terminal id is known.

        Commands run inside their ``bash`` tool call (stopped with ``tool_call/cancel``) and
        are never reported as terminals, so no ``terminal_update`` ever offers
        ``capabilities.cancel``; the answer names the id it does not know.
        """
        raw = _wire(params)
        if raw["sessionId"] not in self.agent.sessions:
            raise ResourceNotFoundError("Unknown session.", data={"sessionId": raw["sessionId"]})
        raise ResourceNotFoundError("Unknown terminal.", data={"terminalId": raw["terminalId"]})

    async def session_prompt(self, params: PromptRequest) -> PromptResponse:
        raw = _wire(params)
        session_id = raw["sessionId"]
        self._check_prompt_can_start(session_id)
        # Everything that would fail the v1 prompt before its turn starts is checked here,
        # because after the answer a failure can only be reported as a stop reason.
        check_prompt(raw["prompt"])
        # The same lookup as v1 (environment, then the key saved by `iac-code login`).
        try:
            key = await resolve_api_key_async(self.agent.settings)
        except CredentialError as exc:
            raise AuthRequiredError(
                str(exc), data={"authMethods": [v1_info.API_KEY_AUTH_METHOD_ID]}
            ) from None
        if not key:
            log.warning("prompt in session %s failed: no API key", session_id)
            raise AuthRequiredError(
                NO_API_KEY_MESSAGE, data={"authMethods": [v1_info.API_KEY_AUTH_METHOD_ID]}
            )
        # The lookup awaited (a file read off the loop): the session may have closed, or
        # another prompt started, meanwhile.
        self._check_prompt_can_start(session_id)
        message_id = translate.new_message_id()
        v1_params = _v1(
            V1PromptRequest,
            # _meta goes on too: its traceparent is the parent of the turn's trace.
            {"sessionId": session_id, "prompt": raw["prompt"], "messageId": message_id}
            | ({"_meta": raw["_meta"]} if isinstance(raw.get("_meta"), dict) else {}),
        )
        accepted = self._turns[session_id] = _AcceptedPrompt()
        current_request().after_response(
            lambda: self._run_turn(session_id, v1_params, accepted, message_id, raw["prompt"])
        )
        return PromptResponse.model_validate({"messageId": message_id})

    def _check_prompt_can_start(self, session_id: str) -> None:
        session = self.agent.sessions.get(session_id)
        if session is None:
            raise ResourceNotFoundError("Unknown session.", data={"sessionId": session_id})
        if session.turn is not None or session_id in self._turns:
            raise InvalidParamsError(
                "A prompt is already running in this session.",
                data={"sessionId": "a prompt is already running"},
            )

    async def _run_turn(
        self,
        session_id: str,
        v1_params: V1PromptRequest,
        accepted: _AcceptedPrompt,
        message_id: str,
        prompt: list[dict[str, Any]],
    ) -> None:
        """Run the turn after the answer went out, framed by ``running`` and ``idle``."""
        try:
            if self._turns.get(session_id) is not accepted:
                return  # withdrawn by a close or delete before it began: nothing to report
            accepted.started = True
            await self._run_accepted(session_id, v1_params, accepted, message_id, prompt)
        finally:
            accepted.done.set()

    async def _run_accepted(
        self,
        session_id: str,
        v1_params: V1PromptRequest,
        accepted: _AcceptedPrompt,
        message_id: str,
        prompt: list[dict[str, Any]],
    ) -> None:
        idle: dict[str, Any] = {"state": "idle"}
        try:
            # Where the user message went in: the draft makes this update the source of
            # truth for the ``messageId`` the answer named.
            await self._update(
                session_id,
                {"sessionUpdate": "user_message", "messageId": message_id, "content": prompt},
            )
            await self._state(session_id, {"state": "running"} | self._background(session_id))
            if "anthropic" not in sys.modules and not accepted.cancelled:
                # The first model call imports the SDK, which holds the event loop for a
                # while; done in a worker thread, the answer already queued (and these
                # updates) reach the client meanwhile instead of after the import.
                await anyio.to_thread.run_sync(importlib.import_module, "anthropic")
            result = _as_dict(await self.agent.run_prompt(v1_params, on_turn=accepted.bind))
            idle["stopReason"] = result.get("stopReason", "end_turn")
        except ConnectionClosedError:
            return
        except RpcError as exc:
            if accepted.cancelled:
                idle["stopReason"] = "cancelled"
            else:
                idle.update(stopReason="error", error=exc.to_wire())
        except Exception:
            log.exception("v2 turn of session %s failed", session_id)
            idle.update(stopReason="error", error={"code": -32603, "message": "Internal error"})
        finally:
            self._turns.pop(session_id, None)
        await self._state(session_id, idle | self._background(session_id))

    def _background(self, session_id: str, *, always: bool = False) -> dict[str, Any]:
        """The ``background`` field: the session's running ``bash`` jobs, each named by the
        tool call that started it; left out while there are none, unless ``always``."""
        jobs = [job.to_wire() for job in self.agent.tools.background.running(session_id)]
        return {"background": jobs} if jobs or always else {}

    async def _background_changed(self, session_id: str) -> None:
        """A job of the session started or ended: the state again, with the full list.

        An idle update sent for this carries no ``stopReason``: no turn ended.
        """
        if session_id not in self.agent.sessions:
            return
        accepted = self._turns.get(session_id)
        state = "running" if accepted is not None and accepted.started else "idle"
        if state == "running" and self._asking.get(session_id):
            state = "requires_action"
        try:
            await self._state(
                session_id, {"state": state} | self._background(session_id, always=True)
            )
        except ConnectionClosedError:
            log.debug("background change of %s not reported: output closed", session_id)

    async def _asking_changed(self, session_id: str, asking: bool) -> None:
        """A question to the user went out (``asking``) or was answered: ``requires_action``
        while the first one waits, ``running`` again when the last one is answered.

        Resolving one of several requests leaves the state as it is (the draft's words), and a
        cancelled turn does not resume: its ``idle`` follows.
        """
        count = self._asking.get(session_id, 0) + (1 if asking else -1)
        if count > 0:
            self._asking[session_id] = count
        else:
            self._asking.pop(session_id, None)
        accepted = self._turns.get(session_id)
        if accepted is None or not accepted.started:
            return  # no foreground turn of this session is blocked
        if asking and count == 1:
            state = "requires_action"
        elif not asking and count <= 0 and not accepted.cancelled:
            state = "running"
        else:
            return
        try:
            await self._state(session_id, {"state": state} | self._background(session_id))
        except ConnectionClosedError:
            log.debug("state %s of %s not reported: output closed", state, session_id)

    async def _state(self, session_id: str, state: dict[str, Any]) -> None:
        await self._update(session_id, {"sessionUpdate": "state_update", **state})

    async def _update(self, session_id: str, update: dict[str, Any]) -> None:
        await self.peer.send_notification(
            "session/update", {"sessionId": session_id, "update": update}
        )


def _as_dict(result: object) -> dict[str, Any]:
    """Handler results may be models (typed runtime) or wire dicts; read them as dicts."""
    dump = getattr(result, "model_dump", None)
    if dump is not None:
        dumped: dict[str, Any] = dump(by_alias=True, exclude_unset=True, mode="json")
        return dumped
    if not isinstance(result, dict):
        raise TypeError(f"unexpected handler result {type(result).__name__}")
    return result


def _field(result: object, *path: str) -> object:
    node: object = _as_dict(result)
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node
