"""The model-client contract: request, stream events, final response, errors, protocol.

Stdlib only, so the agent loop can import it on the startup path. Content blocks and
messages use the Anthropic Messages format (plain dicts) because that is what the history
stores and what the primary client sends.

Consuming a stream::

    async with contextlib.aclosing(client.stream(request)) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                ...
            elif isinstance(event, MessageFinished):
                response = event.response

The last event of every successful stream is `MessageFinished`; a failed stream raises a
`ModelError` instead.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

ContentBlock: TypeAlias = dict[str, Any]

#: What every path says when a prompt needs the model and there is no key (v1, v2, HTTP,
#: the client itself, README): both ways to provide one.
NO_API_KEY_MESSAGE = (
    "No API key for the model: set ANTHROPIC_API_KEY in the environment iac-code is started"
    " with, or run `iac-code login` in a terminal."
)
Message: TypeAlias = dict[str, Any]


@dataclass(slots=True)
class ModelRequest:
    """One call to the model.

    `system` is a string or a list of Anthropic text blocks; `messages` alternate
    ``user``/``assistant`` in Anthropic format; `tools` are ``{name, description,
    input_schema}`` dicts. `thinking_budget` enables extended thinking with that many tokens.
    """

    model: str
    messages: list[Message]
    system: str | list[ContentBlock] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int = 8192
    thinking_budget: int | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None


@dataclass(slots=True)
class Usage:
    """Token counts of one call (or, summed with ``+``, of a whole turn)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Everything the model read or wrote, cached or not."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    @property
    def context_tokens(self) -> int:
        """Size of the prompt this call saw (what counts against the context window)."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(slots=True)
class ModelResponse:
    """The complete assistant message of one call.

    `content` holds Anthropic blocks ready to be appended to history as the assistant
    message: ``text``, ``thinking`` (with ``signature``), ``redacted_thinking``,
    ``tool_use`` (with parsed ``input``).
    """

    content: list[ContentBlock]
    stop_reason: str | None
    usage: Usage
    model: str = ""
    message_id: str = ""
    stop_sequence: str | None = None

    @property
    def text(self) -> str:
        return "".join(b["text"] for b in self.content if b.get("type") == "text")

    @property
    def tool_uses(self) -> list[ContentBlock]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    def as_message(self) -> Message:
        return {"role": "assistant", "content": list(self.content)}


# ---- stream events -------------------------------------------------------------------
# `index` is the content block's position in the response, as on the Anthropic wire.


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class ThinkingSignature:
    signature: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class ToolUseStarted:
    id: str
    name: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class ToolUseInputDelta:
    id: str
    partial_json: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class BlockFinished:
    """A content block is complete; `block` is its final form (tool input parsed)."""

    index: int
    block: ContentBlock


@dataclass(frozen=True, slots=True)
class MessageFinished:
    """The last event of a successful stream."""

    response: ModelResponse


StreamEvent: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | ThinkingSignature
    | ToolUseStarted
    | ToolUseInputDelta
    | BlockFinished
    | MessageFinished
)


# ---- errors --------------------------------------------------------------------------


class ModelError(Exception):
    """A model call failed. `retryable` says whether trying again may help.

    `partial_output` is set when the failure happened after events had already reached the
    caller (the retry layer then refuses to retry, so output is never duplicated).
    """

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.retry_after = retry_after
        self.partial_output = False
        if retryable is not None:
            self.retryable = retryable


class ModelAuthError(ModelError):
    """401/403: the API key is missing, wrong or lacks permission."""


class ModelConnectionError(ModelError):
    """The endpoint could not be reached or did not answer in time."""

    retryable = True


class ModelRateLimitError(ModelError):
    """429: too many requests; `retry_after` carries the server's hint."""

    retryable = True


class ModelServerError(ModelError):
    """5xx or 529 (overloaded), also when reported inside the stream."""

    retryable = True


class ModelRequestError(ModelError):
    """Another 4xx: the request itself was rejected (bad params, too long, not found)."""


class ModelResponseError(ModelError):
    """The answer was unusable: not an event stream, invalid JSON, or cut off early.

    A stream cut off mid-way is retryable (the connection dropped); garbage is not.
    """


# ---- the protocol --------------------------------------------------------------------


@runtime_checkable
class ModelClient(Protocol):
    """Anything that streams a model response for a `ModelRequest`."""

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        """Return an async iterator (an async generator: close it with ``aclosing``)
        of events that ends with `MessageFinished`, or raises a `ModelError`."""
        ...


async def collect(events: AsyncIterator[StreamEvent]) -> ModelResponse:
    """Drain a stream and return its final response (for callers that need no deltas)."""
    response: ModelResponse | None = None
    try:
        async for event in events:
            if isinstance(event, MessageFinished):
                response = event.response
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
    if response is None:
        raise ModelResponseError("the stream ended without a final message")
    return response
