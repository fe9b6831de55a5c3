"""Start-up fast path for ``iac-code acp`` (standard library only).

Importing asyncio, anyio, pydantic and the generated models costs well over 100 ms on the
2-core machines this runs on, while editors wait for the ``initialize`` answer before showing
anything (SPEC §11: ≤ 100 ms from spawn). So the process starts the heavy imports in a
background thread and, meanwhile, reads the first line on stdin itself. When that line is a
plain, well-formed ``initialize`` request it is answered at once from
:mod:`iac_code.agent.info` — the same function the full handler uses — or, when the version
negotiated with :mod:`iac_code.protocol_versions` is 2, from :mod:`iac_code.v2.info`, as
the v2 handler does. Anything unusual (another method, odd types, bad JSON, a huge line) is
left untouched for the full runtime,
which then applies every validation and error rule. The bytes read so far are handed over as
a prefix, so the runtime sees exactly the stream the client sent.
"""

from __future__ import annotations

import json
import os
import select
import threading

from iac_code.agent import info
from iac_code.protocol_versions import negotiate_initialize
from iac_code.v2 import info as v2_info

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_MAX_PRELUDE_LINE = 1 << 20  # longer first lines go to the full runtime and its size limit
_JSON_ID_TYPES = (int, str)


def _has_surrogate(text: str) -> bool:
    """A lone UTF-16 half in ``text`` (kept here: iac_code.unicode_text imports typing)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _is_bool_map(value: object, keys: tuple[str, ...]) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(k, False), bool) for k in keys)


def _optional_object(value: object) -> bool:
    return value is None or isinstance(value, dict)


def _plain_request(message: object, method: str) -> tuple[int | str, dict[str, Any]] | None:
    """``(id, params)`` when ``message`` is a plain request for ``method``: the envelope only,
    an integer or Unicode string id (the runtime refuses a lone-surrogate one, -32600) and
    object params. ``None`` leaves it to the runtime."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if message.get("method") != method or set(message) - {"jsonrpc", "id", "method", "params"}:
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, _JSON_ID_TYPES):
        return None
    if isinstance(request_id, str) and _has_surrogate(request_id):
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    return request_id, params


def plain_initialize(message: object) -> tuple[int | str, dict[str, Any]] | None:
    """``(id, params)`` when ``message`` is certainly a valid ``initialize`` request.

    Deliberately stricter than the schema: a ``None`` answer only means "let the full
    runtime decide", never "invalid".
    """
    plain = _plain_request(message, "initialize")
    if plain is None:
        return None
    request_id, params = plain
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 65535:
        return None
    if negotiate_initialize(params) >= 2:
        return (request_id, params) if _plain_v2_params(params) else None
    if set(params) - {"protocolVersion", "clientCapabilities", "clientInfo", "_meta"}:
        return None
    if not _optional_object(params.get("_meta")):
        return None
    caps = params.get("clientCapabilities", {})
    if not isinstance(caps, dict) or set(caps) - {
        "fs",
        "terminal",
        "session",
        "auth",
        "elicitation",
        "_meta",
    }:
        return None
    if "fs" in caps and not _is_bool_map(caps["fs"], ("readTextFile", "writeTextFile")):
        return None
    if not isinstance(caps.get("terminal", False), bool):
        return None
    if "auth" in caps and not _is_bool_map(caps["auth"], ("terminal",)):
        return None
    for key in ("session", "elicitation", "_meta"):
        if not _optional_object(caps.get(key)):
            return None
    client_info = params.get("clientInfo")
    if client_info is not None:
        if not isinstance(client_info, dict):
            return None
        if not isinstance(client_info.get("name"), str) or not isinstance(
            client_info.get("version"), str
        ):
            return None
        if not isinstance(client_info.get("title", ""), (str, type(None))):
            return None
    return request_id, params


def _is_implementation(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    if not isinstance(value.get("name"), str) or not isinstance(value.get("version"), str):
        return False
    return isinstance(value.get("title", ""), (str, type(None)))


def _plain_v2_params(params: dict[str, Any]) -> bool:
    """A v2 ``initialize``: ``info`` required, capabilities are objects (or null) only."""
    if set(params) - {"protocolVersion", "info", "capabilities", "_meta"}:
        return False
    if not _is_implementation(params.get("info")) or not _optional_object(params.get("_meta")):
        return False
    caps = params.get("capabilities", {})
    if not isinstance(caps, dict) or set(caps) - {"auth", "elicitation", "_meta"}:
        return False
    for key in ("auth", "elicitation", "_meta"):
        if not _optional_object(caps.get(key)):
            return False
    auth = caps.get("auth") or {}
    elicitation = caps.get("elicitation") or {}
    return all(_optional_object(v) for v in (*auth.values(), *elicitation.values()))


def initialize_response_bytes(request_id: int | str, params: dict[str, Any]) -> bytes:
    if negotiate_initialize(params) >= 2:
        result = v2_info.initialize_result(client_capabilities=params.get("capabilities"))
    else:
        result = info.initialize_result(
            params["protocolVersion"], client_capabilities=params.get("clientCapabilities")
        )
    frame = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


#: How long the first line may take before the runtime's import starts anyway.
_QUIET_CLIENT_SECONDS = 0.02


def _read_first_line(fd: int, on_quiet: Callable[[], None] | None = None) -> bytes:
    """Read until the first newline (or EOF, or the prelude's size limit).

    ``on_quiet`` runs once if no byte has come after a short while (a client that waits
    before sending ``initialize``): the time is better spent importing the runtime."""
    buffer = bytearray()
    while b"\n" not in buffer and len(buffer) < _MAX_PRELUDE_LINE:
        if on_quiet is not None:
            ready, _, _ = select.select([fd], [], [], _QUIET_CLIENT_SECONDS)
            if not ready:
                on_quiet()
                on_quiet = None
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
    return bytes(buffer)


class _Importer(threading.Thread):
    """Imports the full runtime while the main thread waits for the first request."""

    def __init__(self) -> None:
        super().__init__(name="iac-code-import", daemon=True)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            import iac_code.stdio_runtime  # noqa: F401  (the import is the work)
        except BaseException as exc:  # re-raised in the main thread
            self.error = exc


def answer_first_initialize(
    in_fd: int, out_fd: int, on_quiet: Callable[[], None] | None = None
) -> tuple[bytes, dict[str, Any] | None]:
    """Answer a leading plain ``initialize``; return (unprocessed bytes, its params or None)."""
    data = _read_first_line(in_fd, on_quiet)
    line, newline, rest = data.partition(b"\n")
    if not newline:
        return data, None
    message = _loads_or_none(line)
    plain = plain_initialize(message)
    if plain is None:
        return data, None
    request_id, params = plain
    try:
        answer = initialize_response_bytes(request_id, params)
    except (ValueError, TypeError):  # UnicodeEncodeError included: params the runtime judges
        return data, None
    _write_all(out_fd, answer)
    return rest, params


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _loads_or_none(line: bytes) -> object:
    """The line's JSON value, or None for anything the full runtime must judge: bad JSON,
    NaN/Infinity, nesting too deep for the parser (it answers those -32700, and goes on)."""
    try:
        return json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None


class FastSession:
    """A session the fast path created on disk and answered ``session/new`` for; the runtime
    opens it and sends its ``available_commands_update`` once it takes over."""

    __slots__ = ("cwd", "session_id")

    def __init__(self, session_id: str, cwd: str) -> None:
        self.session_id = session_id
        self.cwd = cwd


def plain_session_new(message: object) -> tuple[int | str, str] | None:
    """``(id, cwd)`` when ``message`` is certainly a valid ``session/new`` the fast path may
    answer: an existing absolute ``cwd``, no MCP servers, no extra directories. Anything else
    (``None``) is left to the runtime and its validation and errors."""
    plain = _plain_request(message, "session/new")
    if plain is None:
        return None
    request_id, params = plain
    if set(params) - {"cwd", "mcpServers", "_meta"}:
        return None
    if params.get("mcpServers", []) != [] or not _optional_object(params.get("_meta")):
        return None
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or "\x00" in cwd:
        return None
    cwd = os.path.normpath(cwd)
    return (request_id, cwd) if os.path.isdir(cwd) else None


def session_new_result(session_id: str, settings: Any) -> dict[str, Any]:
    """The ``session/new`` result, built like the handler's (same helpers, same data)."""
    from iac_code.agent.options import DEFAULT_MODE, SessionConfig, config_options, modes_state

    config = SessionConfig(model=settings.model)
    return {
        "sessionId": session_id,
        "modes": modes_state(DEFAULT_MODE),
        "configOptions": config_options(config, settings.models),
    }


class _Window:
    """The fast path between the ``initialize`` answer and the runtime taking over."""

    def __init__(self, in_fd: int, out_fd: int, buffer: bytes) -> None:
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.buffer = buffer
        self.sessions: list[FastSession] = []

    def serve(self, settings: Any, importer: threading.Thread) -> None:
        """Answer plain ``session/new`` requests until the runtime is imported, anything
        else arrives, or the input ends; unanswered bytes stay in ``buffer``."""
        from iac_code.session_files import create_session
        from iac_code.session_id import new_session_id

        while importer.is_alive():
            line, newline, rest = self.buffer.partition(b"\n")
            if not newline:
                if len(self.buffer) >= _MAX_PRELUDE_LINE or not self._read_more(importer):
                    return
                continue
            plain = plain_session_new(_loads_or_none(line))
            if plain is None or len(self.sessions) >= settings.max_open_sessions:
                return
            request_id, cwd = plain
            session = FastSession(new_session_id(), cwd)
            try:
                # Durable before the answer: a crash right after it loses nothing.
                create_session(os.fspath(settings.sessions_dir), session.session_id, cwd)
            except OSError:
                # A full or read-only store: the runtime's handler tries again and answers
                # with the store's own error, the same as for any later session/new.
                return
            result = session_new_result(session.session_id, settings)
            frame = {"jsonrpc": "2.0", "id": request_id, "result": result}
            _write_all(self.out_fd, _encode(frame))
            self.sessions.append(session)
            self.buffer = rest

    def _read_more(self, importer: threading.Thread) -> bool:
        """Wait for input while the runtime is still importing; False: stop the fast path."""
        while importer.is_alive():
            ready, _, _ = select.select([self.in_fd], [], [], 0.01)
            if ready:
                chunk = os.read(self.in_fd, 65536)
                if not chunk:
                    return False  # end of input: the runtime sees it too
                self.buffer += chunk
                return True
        return False


def _encode(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def run_acp(
    make_settings: Callable[[], Any], *, session_defaults: Callable[[], Any] | None = None
) -> int:
    """Serve ACP on stdio; ``make_settings`` runs after the first answers are on their way.

    With ``session_defaults`` (``iac-code acp`` without flags: what editors run), a plain
    ``session/new`` that arrives while the runtime still imports is answered here too, from
    the defaults it returns (an :class:`iac_code.settings_core.SessionDefaults`).
    """
    import sys

    importer = _Importer()
    # The import starts once initialize is answered (it would compete with the answer for
    # the interpreter), or earlier when the client is slow to send anything.
    prefix, initialize_params = answer_first_initialize(0, 1, on_quiet=importer.start)
    defaults = None
    if (
        session_defaults is not None
        and initialize_params is not None
        and negotiate_initialize(initialize_params) == 1
    ):
        # What the session/new answer needs is loaded before the import competes for the
        # interpreter. A configuration that cannot be read is left to make_settings.
        try:
            defaults = session_defaults()
        except (SystemExit, OSError, ValueError, TypeError):
            defaults = None
        import iac_code.agent.options
        import iac_code.session_files
        import iac_code.session_id  # noqa: F401
    if importer.ident is None:
        importer.start()
    sessions: list[FastSession] = []
    if defaults is not None:
        # The import thread would otherwise keep the interpreter for 5 ms at a time.
        previous = sys.getswitchinterval()
        sys.setswitchinterval(min(previous, 0.0005))
        try:
            window = _Window(0, 1, prefix)
            window.serve(defaults, importer)
        finally:
            sys.setswitchinterval(previous)
        prefix, sessions = window.buffer, window.sessions
    settings = make_settings()
    importer.join()
    if importer.error is not None:
        raise importer.error
    from iac_code import stdio_runtime

    return stdio_runtime.run_stdio_server(
        settings, prefix=prefix, initialize_params=initialize_params, fast_sessions=sessions
    )
