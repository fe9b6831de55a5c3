"""``IacAgent``: the implementation of every agent-side ACP method (SPEC §2).

Handlers receive params already validated by the router against the generated models and
answer with the generated response models, which the router dumps to the wire once.
``session/update`` notifications stay plain wire dicts built by the code that knows them:
they are the hot path (one per streamed chunk), and their shapes are covered by the schema
tests and the conformance checker instead. Session state
lives in :class:`~iac_code.agent.session.Session` objects held here while a session is
active on this connection; everything durable goes through the session store.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
from acp_bindings.agent import AgentHandlers
from acp_bindings.errors import AuthRequiredError, InternalError, InvalidParamsError
from acp_bindings.models import (
    AuthenticateRequest,
    AuthenticateResponse,
    CancelNotification,
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ForkSessionRequest,
    ForkSessionResponse,
    InitializeRequest,
    InitializeResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    LogoutRequest,
    LogoutResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)

from iac_code import telemetry
from iac_code.agent import info
from iac_code.agent.commands import available_commands
from iac_code.agent.history import replay_updates
from iac_code.agent.limits import check_session_capacity
from iac_code.agent.model_access import ModelAccess, log_quiet, log_retry
from iac_code.agent.options import (
    SessionConfig,
    apply_config_value,
    check_mode,
    config_options,
    modes_state,
)
from iac_code.agent.partial_replies import extend_partial
from iac_code.agent.port import AgentPort
from iac_code.agent.retry_notices import (
    client_accepts_notices,
    current_turn_session,
    quiet_update,
    retry_update,
    turn_of,
)
from iac_code.agent.session import Session
from iac_code.agent.store_errors import session_in_use
from iac_code.agent.timestamps import utc_now
from iac_code.agent.tool_runner import ToolRunner
from iac_code.agent.turn import Turn, TurnDependencies, close_open_tool_calls
from iac_code.child_env import child_env_policy
from iac_code.credentials import CredentialError, remove_api_key, resolve_api_key_async
from iac_code.llm.contract import NO_API_KEY_MESSAGE
from iac_code.llm.retry import RetryNotice
from iac_code.rpc.context import current_request
from iac_code.rpc.errors import ConnectionClosedError
from iac_code.store import (
    InvalidCursorError,
    SessionLockedError,
    SessionNotFoundError,
    SessionTakenOverError,
    StoreUnreachableError,
    StoreWriteError,
    new_session_id,
)
from iac_code.store.backend import SessionStoreBackend
from iac_code.store.open_store import open_store
from iac_code.unicode_text import clean_json

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from pydantic import BaseModel

    from iac_code.llm.contract import ModelClient
    from iac_code.rpc.peer import Peer
    from iac_code.settings import Settings

log = logging.getLogger(__name__)

UNKNOWN_SESSION = "unknown session"


def wire(params: BaseModel) -> dict[str, Any]:
    """A validated model as a camelCase dict (only the fields the client sent)."""
    return params.model_dump(by_alias=True, exclude_unset=True, mode="json")


def _fold_events(session: Session, events: list[dict[str, Any]]) -> None:
    for event in events:
        # Sessions stored before lone surrogates were replaced recover on load.
        event = clean_json(event)
        session.events.append(event)
        session.apply_event(event)


def _absolute_dir(value: object, field: str, *, must_exist: bool = True) -> Path:
    if not isinstance(value, str) or not os.path.isabs(value):
        raise InvalidParamsError(
            "Paths must be absolute.", data={field: "must be an absolute path"}
        )
    path = Path(os.path.normpath(value))
    if must_exist and not path.is_dir():
        raise InvalidParamsError(
            "The directory does not exist.", data={field: "directory does not exist"}
        )
    return path


def _extra_dirs(values: object) -> list[Path]:
    """``additionalDirectories``: every entry an absolute, existing directory (-32602)."""
    if not values:
        return []
    if not isinstance(values, (list, tuple)):
        raise InvalidParamsError(data={"additionalDirectories": "must be a list of paths"})
    return [_absolute_dir(d, f"additionalDirectories[{i}]") for i, d in enumerate(values)]


class IacAgent(AgentHandlers):
    #: ACP v1 requires ``mcpServers``; clients that leave it out get an empty list (SPEC §2).
    PARAM_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = {
        method: {"mcpServers": []}
        for method in ("session/new", "session/load", "session/resume", "session/fork")
    }

    def __init__(
        self,
        settings: Settings,
        connection: Peer,
        store: SessionStoreBackend | None = None,
        *,
        model_client: ModelClient | None = None,
        background: TaskGroup | None = None,
    ) -> None:
        self.settings = settings
        self.connection = connection
        self.store = store or open_store(settings)
        self.sessions: dict[str, Session] = {}
        #: Sessions with streamed partials not yet stored (see persist_ahead).
        self._unstored_sessions: dict[str, Session] = {}
        call_before_writing = getattr(connection, "call_before_writing", None)
        if call_before_writing is not None:
            call_before_writing(self.flush_ahead)
        self.client_capabilities: dict[str, Any] = {}
        self.models = ModelAccess(
            settings, model_client, on_retry=self._on_retry, on_quiet=self._on_quiet
        )
        #: Everything a turn and its tools may ask of this agent; they get nothing else.
        self.port = AgentPort(
            settings=settings,
            persist=self.persist,
            persist_ahead=self.persist_ahead,
            notify=self.notify,
            request_client=telemetry.client_requests(connection.send_request),
            client_capabilities=lambda: self.client_capabilities,
            model=self.models,
            child_environment=self.child_environment,
        )
        self.tools = ToolRunner(self.port)
        #: Lives as long as the connection; MCP servers of every session run in it.
        self.background = background
        self._uncount_connection = telemetry.connection_opened()

    # ------------------------------------------------------------------ helpers

    async def notify(self, session_id: str, update: dict[str, Any]) -> None:
        await self.connection.send_notification(
            "session/update", {"sessionId": session_id, "update": update}
        )

    def _active(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise InvalidParamsError("Unknown session.", data={"sessionId": UNKNOWN_SESSION})
        return session

    def _session_state(self, session: Session) -> dict[str, Any]:
        return {
            "modes": modes_state(session.mode),
            "configOptions": config_options(session.config, session.models),
        }

    def _models_accept_images(self) -> bool:
        return True  # every Claude model offered in the model option accepts images

    def persist(self, session: Session, event: dict[str, Any]) -> None:
        """Append an event to memory and disk; a failing disk is logged, never fatal (§12).

        Lone surrogates (from the model, a tool or an MCP server) are replaced here, where
        everything enters the history: stored, one would break every later model request.
        """
        event = clean_json(event)
        session.events.append(event)
        session.apply_event(event)
        self._store_events(session, [event])

    def persist_ahead(self, session: Session, event: dict[str, Any]) -> None:
        """Append a streamed delta's ``partial_reply`` to memory now, and to the store just
        before the frames queued after it are written (:meth:`flush_ahead`): one append per
        written batch of chunks rather than one per chunk, still ahead of the client."""
        event = clean_json(event)
        self._unstored_sessions[session.session_id] = session
        if extend_partial(session.unstored, event):
            return  # joined to the unstored partial before it: one line per written batch
        session.events.append(event)
        session.unstored.append(event)

    def flush_ahead(self) -> None:
        """Store every buffered partial (called by the connection's writer before it writes)."""
        if not self._unstored_sessions:  # the usual case: nothing streamed since the last batch
            return
        sessions, self._unstored_sessions = self._unstored_sessions, {}
        for session in sessions.values():
            if session.unstored:
                try:
                    self._store_events(session, [])
                except (SessionTakenOverError, StoreUnreachableError):
                    pass  # logged and kept on the session: the turn's next persist raises it

    def _store_events(self, session: Session, events: list[dict[str, Any]]) -> None:
        """Write the session's buffered partials, then ``events``, in memory order."""
        failure = session.store_failure_again()
        if failure is not None:
            # The store is behind memory already: nothing more is written from here, and
            # the turn (or request) ends with the same error.
            session.unstored.clear()
            raise failure
        batch = [*session.unstored, *events]
        session.unstored.clear()
        try:
            if len(batch) == 1:
                self.store.append(session.session_id, batch[0])
            else:
                self.store.append_many(session.session_id, batch)
        except (SessionTakenOverError, StoreUnreachableError) as exc:
            # A database store that did not take the event (another replica took the
            # session over, or the database is unreachable) must not get later events of
            # this turn after a gap: the request ends with this error and the session is
            # closed here (run_prompt); loading it again reads what was stored.
            log.error("could not persist an event of session %s: %s", session.session_id, exc)
            session.store_failure = exc
            raise
        except (StoreWriteError, SessionNotFoundError) as exc:
            # SessionNotFoundError: the directory vanished under us (removed by hand or by
            # another process); the live session keeps working from memory.
            log.error("could not persist an event of session %s: %s", session.session_id, exc)

    def _open(
        self, session_id: str, cwd: Path, extra_dirs: list[Path], events: list[dict[str, Any]]
    ) -> Session:
        session = self._new_session(session_id, cwd, extra_dirs)
        _fold_events(session, events)
        self.sessions[session_id] = session
        telemetry.session_opened()
        return session

    def _new_session(self, session_id: str, cwd: Path, extra_dirs: list[Path]) -> Session:
        try:
            lock = self.store.lock(session_id)
        except SessionLockedError as exc:
            raise session_in_use(session_id) from exc
        return Session(
            session_id=session_id,
            cwd=cwd,
            additional_directories=extra_dirs,
            config=SessionConfig(model=self.settings.model),
            models=self.settings.models,
            lock=lock,
        )

    async def _open_stored(self, session_id: str, cwd: Path, extra_dirs: list[Path]) -> Session:
        """Open a stored session, its log read and folded in a worker thread: a long log
        (hundreds of MiB) would otherwise hold the event loop, every other session, for
        seconds. The session is registered only once it is complete."""
        session = self._new_session(session_id, cwd, extra_dirs)
        try:
            await anyio.to_thread.run_sync(self._replay_stored, session)
        except BaseException:
            session.release()
            raise
        self.sessions[session_id] = session
        telemetry.session_opened()
        return session

    def _replay_stored(self, session: Session) -> None:
        try:
            events = self.store.load_events(session.session_id)
        except SessionNotFoundError as exc:
            raise InvalidParamsError(
                "Unknown session.", data={"sessionId": UNKNOWN_SESSION}
            ) from exc
        _fold_events(session, events)

    def _persisted_meta(self, session_id: object, cwd_value: object) -> Any:
        cwd = _absolute_dir(cwd_value, "cwd", must_exist=False)
        meta = self.store.get_meta(session_id) if isinstance(session_id, str) else None
        if meta is None:
            raise InvalidParamsError("Unknown session.", data={"sessionId": UNKNOWN_SESSION})
        if os.path.normpath(meta.cwd) != str(cwd):
            raise InvalidParamsError(
                "The session belongs to another working directory.",
                data={"cwd": f"does not match the session's cwd {meta.cwd}"},
            )
        return meta

    def _repair(self, session: Session) -> list[dict[str, Any]]:
        return close_open_tool_calls(self.port, session)

    async def _start_mcp(self, session: Session, servers: Sequence[BaseModel] | None) -> None:
        """Start the client's MCP servers for this session, in the background."""
        if not servers or session.mcp is not None:
            return
        if self.background is None:
            log.warning("MCP servers ignored: this agent has no background task group")
            return
        from iac_code.mcp import McpSessionServers

        session.mcp = await McpSessionServers.start(
            [wire(server) for server in servers],
            session.cwd,
            logger=logging.getLogger("iac_code.mcp"),
            task_group=self.background,
            base_env=self.child_environment(),
        )

    def adopt_fast_session(self, session_id: str, cwd: str) -> None:
        """The start-up fast path created this session on disk (fsync-ed, see
        :mod:`iac_code.session_files`) and answered ``session/new``: open it here."""
        try:
            self._open(session_id, Path(cwd), [], [])
        except Exception:
            log.exception("cannot open session %s answered at start-up", session_id)

    async def announce_commands(self, session_id: str) -> None:
        """``available_commands_update`` of a session answered by the fast path."""
        try:
            await self._after_response(session_id)
        except ConnectionClosedError:
            log.debug("commands of %s not announced: output closed", session_id)

    async def _after_response(self, session_id: str) -> None:
        await self.notify(
            session_id,
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": available_commands(),
            },
        )

    async def _close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is None:
            return
        telemetry.session_closed()
        try:
            if session.turn is not None:
                await session.turn.cancel_and_wait()
        finally:
            # Also when the wait is cancelled ($/cancel_request, shutdown): a lock left held
            # would make the session unusable ("in use by another process") until exit.
            session.release()
            if session.mcp is not None:
                await session.mcp.aclose()  # shielded and bounded
            # Background jobs end with their session (closed, deleted or the agent exiting).
            with anyio.CancelScope(shield=True):
                await self.tools.background.stop_session(session_id)

    async def shutdown(self) -> None:
        """Stdin closed or SIGTERM: end turns (their history is persisted), release locks."""
        for session_id in list(self.sessions):
            await self._close(session_id)
        await self.tools.background.stop_all()  # none should be left; be sure
        await self.models.aclose()
        self._uncount_connection()

    def child_environment(self) -> dict[str, str]:
        """The environment for bash and MCP servers: ours minus the agent's credentials."""
        return child_env_policy(self.settings).environment()

    # ------------------------------------------------------------------ model

    def model_client(self) -> ModelClient | None:
        """The model client, created on first use (``anthropic`` is imported only then)."""
        return self.models.client()

    async def _on_retry(self, notice: RetryNotice) -> None:
        """Log a retry and show it to the client of the turn that waits for it."""
        log_retry(notice)
        session_id = current_turn_session()
        if session_id is None:
            return
        update = retry_update(notice, notices=client_accepts_notices(self.client_capabilities))
        try:
            await self.notify(session_id, update)
        except ConnectionClosedError:
            log.debug("retry notice for %s dropped: output closed", session_id)

    async def _on_quiet(self, seconds: float, deadline: float) -> None:
        """Show the client of the waiting turn that the model has been silent (once per
        silence; the turn ends with an error at ``deadline``)."""
        log_quiet(seconds, deadline)
        session_id = current_turn_session()
        if session_id is None:
            return
        notices = client_accepts_notices(self.client_capabilities)
        try:
            await self.notify(session_id, quiet_update(seconds, deadline, notices=notices))
        except ConnectionClosedError:
            log.debug("quiet-model notice for %s dropped: output closed", session_id)

    # ------------------------------------------------------------------ methods
    # Each handler has the exact signature of its ``AgentHandlers`` stub (mypy checks the
    # overrides; tests/agent/test_agent_handler_signatures.py compares them at runtime) and
    # answers with the generated response model, which the router dumps once.

    async def initialize(self, params: InitializeRequest) -> InitializeResponse:
        caps = params.client_capabilities
        self.client_capabilities = wire(caps) if caps is not None else {}
        # The same data the start-up fast path sends, so both answers agree.
        result = info.initialize_result(
            params.protocol_version,
            images=self._models_accept_images(),
            client_capabilities=self.client_capabilities,
        )
        return InitializeResponse.model_validate(result)

    def remember_fast_initialize(self, raw: dict[str, Any]) -> None:
        """The start-up fast path answered ``initialize``; adopt what the client sent."""
        self.client_capabilities = raw.get("clientCapabilities", {})

    async def authenticate(self, params: AuthenticateRequest) -> AuthenticateResponse:
        if params.method_id == info.TERMINAL_AUTH_METHOD_ID:
            # ACP: a terminal method is run by the client as a command, never authenticated.
            raise InvalidParamsError(
                "The terminal login is run as a command in a terminal, not through authenticate.",
                data={"methodId": f"must be {info.API_KEY_AUTH_METHOD_ID}"},
            )
        if params.method_id != info.API_KEY_AUTH_METHOD_ID:
            raise InvalidParamsError(
                "Unknown authentication method.",
                data={"methodId": f"must be {info.API_KEY_AUTH_METHOD_ID}"},
            )
        try:
            key = await resolve_api_key_async(self.settings)
        except CredentialError as exc:
            raise AuthRequiredError(
                str(exc), data={"authMethods": info.auth_method_ids(self.client_capabilities)}
            ) from None
        if not key:
            raise AuthRequiredError(
                NO_API_KEY_MESSAGE,
                data={"authMethods": info.auth_method_ids(self.client_capabilities)},
            )
        return AuthenticateResponse()

    async def logout(self, params: LogoutRequest) -> LogoutResponse:
        """Forget the key saved by the terminal login (the environment's key is not ours)."""
        del params
        try:
            removed = remove_api_key(self.settings.home)
        except OSError as exc:
            log.error("could not remove the saved API key: %s", exc)
            raise InternalError("The saved API key could not be removed.") from exc
        if removed:
            self.models.forget_client()
        return LogoutResponse()

    async def session_new(self, params: NewSessionRequest) -> NewSessionResponse:
        cwd = _absolute_dir(params.cwd, "cwd")
        extra = _extra_dirs(params.additional_directories)
        check_session_capacity(len(self.sessions), self.settings.max_open_sessions)
        session_id = new_session_id()
        try:
            self.store.create(session_id, str(cwd), additional_directories=[str(d) for d in extra])
        except StoreWriteError as exc:
            log.error("cannot create session on disk: %s", exc)
            raise
        session = self._open(session_id, cwd, extra, [])
        await self._start_mcp(session, params.mcp_servers)
        current_request().after_response(lambda: self._after_response(session_id))
        return NewSessionResponse.model_validate(
            {"sessionId": session.session_id, **self._session_state(session)}
        )

    async def session_load(self, params: LoadSessionRequest) -> LoadSessionResponse:
        session = await self._activate(params)
        for update in replay_updates(session.events):
            await self.notify(session.session_id, update)
        # The client knows the session id already: everything about the session goes out
        # before the answer, which is where a client reading the replay stops.
        await self._after_response(session.session_id)
        return LoadSessionResponse.model_validate(self._session_state(session))

    async def session_resume(self, params: ResumeSessionRequest) -> ResumeSessionResponse:
        session = await self._activate(params)
        await self._after_response(session.session_id)  # before the answer, as on load
        return ResumeSessionResponse.model_validate(self._session_state(session))

    async def _activate(self, params: LoadSessionRequest | ResumeSessionRequest) -> Session:
        meta = self._persisted_meta(params.session_id, params.cwd)
        active = self.sessions.get(meta.session_id)
        if active is not None:
            return active  # already open here: load re-replays, resume is a no-op
        check_session_capacity(len(self.sessions), self.settings.max_open_sessions)
        extra = _extra_dirs(params.additional_directories or meta.additional_directories)
        session = await self._open_stored(meta.session_id, Path(meta.cwd), extra)
        session.title = meta.title
        try:
            self._repair(session)
        except StoreWriteError:
            await self._close(session.session_id)  # not left open behind its stored log
            raise
        await self._start_mcp(session, params.mcp_servers)
        return session

    async def session_fork(self, params: ForkSessionRequest) -> ForkSessionResponse:
        meta = self.store.get_meta(params.session_id)
        if meta is None:
            raise InvalidParamsError("Unknown session.", data={"sessionId": UNKNOWN_SESSION})
        cwd = _absolute_dir(params.cwd or meta.cwd, "cwd")
        # Validated before anything is written, like session/new (a bad path leaves no fork).
        extra = _extra_dirs(params.additional_directories or meta.additional_directories)
        check_session_capacity(len(self.sessions), self.settings.max_open_sessions)
        fork_id = new_session_id()
        fork_meta = self.store.fork(meta.session_id, fork_id, cwd=str(cwd))
        if params.additional_directories:
            self.store.update_meta(fork_id, additional_directories=[str(d) for d in extra])
        session = await self._open_stored(fork_id, cwd, extra)
        session.title = fork_meta.title
        self._repair(session)
        await self._start_mcp(session, params.mcp_servers)
        current_request().after_response(lambda: self._after_response(fork_id))
        return ForkSessionResponse.model_validate(
            {"sessionId": fork_id, **self._session_state(session)}
        )

    async def session_close(self, params: CloseSessionRequest) -> CloseSessionResponse:
        await self._close(params.session_id)
        return CloseSessionResponse()

    async def session_delete(self, params: DeleteSessionRequest) -> DeleteSessionResponse:
        await self._close(params.session_id)
        try:
            self.store.delete(params.session_id)
        except SessionNotFoundError:
            pass  # deleting twice is fine
        return DeleteSessionResponse()

    async def session_list(self, params: ListSessionsRequest) -> ListSessionsResponse:
        cwd = params.cwd
        if cwd is not None:
            cwd = str(_absolute_dir(cwd, "cwd", must_exist=False))
        try:
            metas, cursor = self.store.list(cwd=cwd, cursor=params.cursor)
        except InvalidCursorError as exc:
            raise InvalidParamsError("Invalid cursor.", data={"cursor": "invalid cursor"}) from exc
        result: dict[str, Any] = {"sessions": [meta.to_wire() for meta in metas]}
        if cursor is not None:
            result["nextCursor"] = cursor
        return ListSessionsResponse.model_validate(result)

    async def session_set_mode(self, params: SetSessionModeRequest) -> SetSessionModeResponse:
        session = self._active(params.session_id)
        mode_id = check_mode(params.mode_id)
        self.persist(session, {"type": "mode", "modeId": mode_id})
        await self.notify(
            session.session_id, {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}
        )
        return SetSessionModeResponse()

    async def session_set_config_option(
        self, params: SetSessionConfigOptionRequest
    ) -> SetSessionConfigOptionResponse:
        choice = params.root  # a boolean option or a select option's value id
        session = self._active(choice.session_id)
        config_id, value = choice.config_id, choice.value
        apply_config_value(session.config, session.models, config_id, value)
        self.persist(session, {"type": "config", "configId": config_id, "value": value})
        options = config_options(session.config, session.models)
        await self.notify(
            session.session_id, {"sessionUpdate": "config_option_update", "configOptions": options}
        )
        return SetSessionConfigOptionResponse.model_validate({"configOptions": options})

    async def session_prompt(self, params: PromptRequest) -> PromptResponse:
        return await self.run_prompt(params)

    async def run_prompt(
        self, params: PromptRequest, *, on_turn: Callable[[Turn], None] | None = None
    ) -> PromptResponse:
        """``session/prompt``; ``on_turn`` sees the turn as soon as it is the session's.

        The v2 handlers start the turn after their answer, so a cancel may arrive before
        the turn exists; ``on_turn`` lets them hand such a cancel on (``Turn.cancel`` before
        the loop starts still keeps the user message and ends ``cancelled``).
        """
        session = self._active(params.session_id)
        if session.turn is not None:
            raise InvalidParamsError(
                "A prompt is already running in this session.",
                data={"sessionId": "a prompt is already running"},
            )
        turn = Turn(session, TurnDependencies(port=self.port, tools=self.tools))
        request = current_request()
        if request.cancel_requested:
            # ``$/cancel_request`` was read before this handler ran, so the connection has
            # already cancelled the request's scope and any await would turn the answer into
            # -32800. A cancelled prompt answers ``stopReason: "cancelled"`` (SPEC §1); this
            # branch has no await, so it still does.
            return turn.cancelled_before_start()
        session.turn = turn
        request.on_cancel(turn.cancel)
        if on_turn is not None:
            on_turn(turn)
        # ``messageId`` (unstable) is not in the v1 model: it arrives as an extra field.
        message_id = (params.model_extra or {}).get("messageId")
        try:
            with turn_of(session.session_id):  # model retries are shown to this session
                prompt = [wire(block) for block in params.prompt]
                return await telemetry.invoke_agent(
                    turn.run(
                        prompt, message_id=message_id if isinstance(message_id, str) else None
                    ),
                    session_id=session.session_id,
                    model=session.config.model,
                    meta=params.field_meta,
                    prompt=prompt,
                )
        finally:
            session.turn = None
            if session.store_failure is not None:
                await self._close(session.session_id)  # writes nothing; see persist
            elif turn.started and session.session_id in self.sessions:
                self._touch(session, turn.updated_at or utc_now())

    def _touch(self, session: Session, updated_at: str) -> None:
        try:
            self.store.update_meta(session.session_id, title=session.title, updated_at=updated_at)
        except (StoreWriteError, SessionNotFoundError) as exc:
            log.error("could not update session metadata: %s", exc)

    async def session_cancel(self, params: CancelNotification) -> None:
        session = self.sessions.get(params.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()
