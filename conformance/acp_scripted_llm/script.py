"""Scripted model turns: the data format, a small builder, and the turn queue.

A *turn* is what the fake model answers to one API call. Turns are plain JSON-able dicts so
that the conformance checker, the CLI and the offline demo can load them from files; the
`Turn` builder only produces such dicts. The same turn data drives the HTTP server (both
Anthropic and OpenAI wire shapes) and the runtime's in-memory fake model client.

Turn keys (all optional):

- ``content``: list of blocks, each one of
  ``{"type": "text", "text": str}``,
  ``{"type": "thinking", "thinking": str, "signature": str}``,
  ``{"type": "tool_use", "name": str, "input": dict, "id": str}``;
  every block may carry ``chunks`` (split into that many deltas) or ``chunk_size``
  (characters per delta; default `DEFAULT_CHUNK_SIZE`).
- ``stop_reason``: ``end_turn`` / ``max_tokens`` / ``tool_use`` / ``refusal`` /
  ``stop_sequence`` (default: ``tool_use`` when a tool is used, else ``end_turn``);
  ``stop_sequence``: the matched sequence.
- ``usage``: ``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``,
  ``cache_creation_input_tokens`` (missing numbers are estimated).
- ``model``: the model name reported (default: the one requested).
- ``latency``: seconds before the response starts; ``chunk_delay``: seconds between deltas.
- ``ping``: send a ``ping`` event after ``message_start`` (default true).
- ``error``: answer with an HTTP error instead:
  ``{"status": 429, "type": "rate_limit_error", "message": str, "retry_after": seconds}``.
- ``stream_error``: after the content (or after ``after_events`` events) send an SSE
  ``error`` event ``{"type": "overloaded_error", "message": str}`` and end the stream.
- ``truncate_after``: drop the connection after that many stream events (no
  ``message_stop``).
- ``garbage``: answer 200 with this body, which is not an event stream.
- ``echo``: true → answer with text derived from the last user message.

A bare string is shorthand for a one-text-block turn.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

DEFAULT_CHUNK_SIZE = 16
STOP_REASONS = frozenset({"end_turn", "max_tokens", "tool_use", "refusal", "stop_sequence"})
ERROR_TYPES_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

TurnData: TypeAlias = dict[str, Any]
Responder: TypeAlias = Callable[[dict[str, Any]], "TurnData | Turn | str"]
TurnSource: TypeAlias = "TurnData | Turn | str | Responder"
Fallback: TypeAlias = "Literal['echo', 'error'] | Responder"


class Turn:
    """Fluent builder for one turn; `to_dict()` gives the plain data form.

    >>> Turn().text("Hello", chunks=3).usage(input_tokens=12).to_dict()["content"][0]["text"]
    'Hello'
    """

    def __init__(self) -> None:
        self._data: TurnData = {"content": []}

    def text(self, text: str, *, chunks: int | None = None, chunk_size: int | None = None) -> Turn:
        return self._block({"type": "text", "text": text}, chunks, chunk_size)

    def thinking(
        self,
        thinking: str,
        *,
        signature: str = "scripted-signature",
        chunks: int | None = None,
        chunk_size: int | None = None,
    ) -> Turn:
        block = {"type": "thinking", "thinking": thinking, "signature": signature}
        return self._block(block, chunks, chunk_size)

    def tool_use(
        self,
        name: str,
        input: Mapping[str, Any],
        *,
        id: str | None = None,
        chunks: int | None = None,
        chunk_size: int | None = None,
    ) -> Turn:
        block = {"type": "tool_use", "name": name, "input": dict(input)}
        if id is not None:
            block["id"] = id
        return self._block(block, chunks, chunk_size)

    def stop(self, stop_reason: str, *, stop_sequence: str | None = None) -> Turn:
        self._data["stop_reason"] = stop_reason
        if stop_sequence is not None:
            self._data["stop_sequence"] = stop_sequence
        return self

    def usage(
        self,
        *,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read_input_tokens: int | None = None,
        cache_creation_input_tokens: int | None = None,
    ) -> Turn:
        numbers = {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read_input_tokens,
            "cache_creation_input_tokens": cache_creation_input_tokens,
        }
        self._data["usage"] = {k: v for k, v in numbers.items() if v is not None}
        return self

    def timing(self, *, latency: float = 0.0, chunk_delay: float = 0.0) -> Turn:
        self._data["latency"] = latency
        self._data["chunk_delay"] = chunk_delay
        return self

    def model(self, name: str) -> Turn:
        self._data["model"] = name
        return self

    def http_error(
        self,
        status: int,
        message: str | None = None,
        *,
        error_type: str | None = None,
        retry_after: float | None = None,
    ) -> Turn:
        error: dict[str, Any] = {"status": status}
        if message is not None:
            error["message"] = message
        if error_type is not None:
            error["type"] = error_type
        if retry_after is not None:
            error["retry_after"] = retry_after
        self._data["error"] = error
        return self

    def stream_error(
        self,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
        *,
        after_events: int | None = None,
    ) -> Turn:
        error: dict[str, Any] = {"type": error_type, "message": message}
        if after_events is not None:
            error["after_events"] = after_events
        self._data["stream_error"] = error
        return self

    def truncate_after(self, events: int) -> Turn:
        self._data["truncate_after"] = events
        return self

    def garbage(self, body: str = "") -> Turn:
        self._data["garbage"] = body or DEFAULT_GARBAGE
        return self

    def to_dict(self) -> TurnData:
        return copy.deepcopy(self._data)

    def _block(self, block: dict[str, Any], chunks: int | None, chunk_size: int | None) -> Turn:
        if chunks is not None:
            block["chunks"] = chunks
        if chunk_size is not None:
            block["chunk_size"] = chunk_size
        self._data["content"].append(block)
        return self


DEFAULT_GARBAGE = "<html>this is not an event stream</html>\nevent: message_start\ndata: {oops\n\n"


def text_turn(text: str, **options: Any) -> TurnData:
    """A turn answering `text`; `options` are extra turn keys (usage, latency, ...)."""
    return {"content": [{"type": "text", "text": text}], **options}


def tool_turn(name: str, input: Mapping[str, Any], *, id: str | None = None) -> TurnData:
    """A turn that asks for one tool call."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": dict(input)}
    if id is not None:
        block["id"] = id
    return {"content": [block]}


def error_turn(
    status: int, message: str | None = None, *, retry_after: float | None = None
) -> TurnData:
    """A turn answered by an HTTP error status."""
    return Turn().http_error(status, message, retry_after=retry_after).to_dict()


class ScriptExhausted(LookupError):
    """Raised (and answered as an error) when no turn is left and the fallback is `error`."""


#: What a side call (see `Script.route_to`) is answered with: short, neutral text.
SIDE_CALL_TURN: TurnData = {"content": [{"type": "text", "text": "OK"}]}


def carries_tools(request_body: Mapping[str, Any]) -> bool:
    """Whether a model request offers tools (Anthropic and OpenAI both use ``tools``)."""
    tools = request_body.get("tools")
    return isinstance(tools, list) and bool(tools)


def user_texts(request_body: Mapping[str, Any]) -> Iterable[str]:
    """The text of every user message (string content, or its text blocks / parts)."""
    for message in request_body.get("messages") or []:
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                    yield block["text"]


class Script:
    """Turns consumed one per model request, then a fallback.

    `turns` items are turn dicts, `Turn` builders, strings, or callables
    ``(request_body) -> turn`` evaluated at request time. `fallback` is ``"echo"`` (answer
    from the last user message), ``"error"`` (HTTP 500 / `ScriptExhausted`), or a callable.
    Thread-safe: the HTTP server handles requests on several threads.
    """

    def __init__(self, turns: Iterable[TurnSource] = (), *, fallback: Fallback = "echo") -> None:
        self._turns: list[TurnSource] = list(turns)
        self._next = 0
        self._lock = threading.Lock()
        self._marker: str | None = None
        self._seen_tools = False
        #: With `serve_only`: only calls quoting this text are main calls (None: any call).
        self._tag: str | None = None
        #: False after `await_session` until `serve_only` names the session to serve.
        self._bound = True
        #: Model requests that got a scripted turn (or the fallback), not a side-call answer.
        self.routed = 0
        if not callable(fallback) and fallback not in ("echo", "error"):
            raise ValueError(f"fallback must be 'echo', 'error' or a callable, not {fallback!r}")
        self.fallback = fallback

    @classmethod
    def coerce(
        cls, script: Script | Iterable[TurnSource] | Mapping[str, Any] | Responder | None
    ) -> Script:
        """Accept a Script, a list of turns, a ``{"turns": [...], "fallback": ...}`` mapping,
        a single responder callable (answers every request), or None (echo only)."""
        if script is None:
            return cls()
        if isinstance(script, Script):
            return script
        if isinstance(script, Mapping):
            return cls(script.get("turns", []), fallback=script.get("fallback", "echo"))
        if callable(script):
            return cls(fallback=script)
        return cls(script)

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Load a script file: a JSON list of turns or a ``{"turns", "fallback"}`` object."""
        return cls.coerce(json.loads(Path(path).read_text(encoding="utf-8")))

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns) - self._next

    def add(self, *turns: TurnSource) -> None:
        """Append turns (e.g. between test steps)."""
        with self._lock:
            self._turns.extend(turns)

    def route_to(self, marker: str) -> None:
        """Give scripted turns only to the agent's main model calls.

        Agents may call the model more than once per prompt (a title, a summary, a routing
        guess). A call is a main call when it offers tools, or — before the agent has ever
        offered tools — when one of its user messages starts with ``marker`` (the checker
        starts every prompt with it; a side call usually wraps the prompt in its own
        instruction). Other calls are side calls: they get `SIDE_CALL_TURN` and consume
        nothing.
        """
        self._marker = marker

    def continue_routing(self, earlier: Script) -> None:
        """Route like ``earlier`` did, keeping what it learned: used when one agent process
        gets a new script for its next turn. An agent that has offered tools once keeps
        offering them, so its tool-less calls stay side calls from its first turn on."""
        with earlier._lock:
            marker, seen_tools = earlier._marker, earlier._seen_tools
        with self._lock:
            self._marker = marker
            self._seen_tools = self._seen_tools or seen_tools

    def await_session(self) -> None:
        """Treat every call as a side call until `serve_only` names the session whose turns
        this script is for (a reused agent may still call the model for an earlier one)."""
        self._bound = False

    def serve_only(self, tag: str) -> None:
        """Give scripted turns only to calls that quote ``tag`` in a user message: the checker
        puts a per-session tag in every prompt, so a late call of another session (an
        agent's post-turn summary, say) cannot take this session's turns."""
        with self._lock:
            self._tag, self._bound = tag, True

    def _is_side_call(self, request_body: Mapping[str, Any]) -> bool:
        if self._marker is None:
            return False
        if not self._bound:
            return True
        if self._tag is not None and not any(self._tag in t for t in user_texts(request_body)):
            return True
        if carries_tools(request_body):
            self._seen_tools = True
            return False
        if self._seen_tools:
            return True
        marker = self._marker
        return not any(text.lstrip().startswith(marker) for text in user_texts(request_body))

    def next_turn(self, request_body: dict[str, Any]) -> TurnData:
        """Consume the next turn (or apply the fallback) and return it as data."""
        with self._lock:
            if self._is_side_call(request_body):
                return dict(SIDE_CALL_TURN)
            self.routed += 1
            source: TurnSource | None = None
            if self._next < len(self._turns):
                source = self._turns[self._next]
                self._next += 1
        if source is None:
            if self.fallback == "echo":
                return {"echo": True}
            if self.fallback == "error":
                raise ScriptExhausted("the scripted model has no turn left for this request")
            source = self.fallback
        return as_turn_data(source, request_body)


def as_turn_data(source: TurnSource, request_body: dict[str, Any]) -> TurnData:
    """Turn any accepted turn form into a plain dict (calling responders)."""
    if callable(source) and not isinstance(source, Turn):
        source = source(request_body)
    if isinstance(source, Turn):
        return source.to_dict()
    if isinstance(source, str):
        return text_turn(source)
    if isinstance(source, Mapping):
        return dict(source)
    raise TypeError(f"a turn must be a dict, Turn, str or callable, not {type(source).__name__}")
