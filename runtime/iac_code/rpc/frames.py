"""An outgoing frame: the encoded bytes, and what a router needs to know about them.

The connection knows, when it encodes a message, what the message is (an answer, a request
of its own, a notification) and which request or session it belongs to. It hands that on
with the bytes, so a transport that routes frames to streams (HTTP, WebSocket) never parses
what the encoder just wrote, and never depends on the order in which it wrote the keys. A
byte-stream transport (stdio) only takes :attr:`Frame.data`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Final, Literal

from iac_code.rpc.envelope import RequestId

__all__ = [
    "ANSWER",
    "BATCH",
    "NOTIFICATION",
    "REQUEST",
    "Frame",
    "FrameKind",
    "frame_bytes",
    "session_of",
]

FrameKind = Literal["answer", "request", "notification", "batch"]
ANSWER: Final = "answer"
"""A response (result or error) to the peer's request :attr:`Frame.request_id`."""
REQUEST: Final = "request"
"""A request of ours, with id :attr:`Frame.request_id`."""
NOTIFICATION: Final = "notification"
BATCH: Final = "batch"
"""The array answering a whole batch (its members' ids are inside it)."""


class Frame:
    """One encoded message, ending in ``\\n``, and its routing facts."""

    __slots__ = ("data", "kind", "request_id", "session_id")

    def __init__(
        self,
        data: bytes,
        kind: FrameKind,
        request_id: RequestId | None = None,
        session_id: str | None = None,
    ) -> None:
        self.data = data
        self.kind: FrameKind = kind
        #: The id of the request an answer answers (None for an answer to an id-less
        #: request), or the id of a request of ours.
        self.request_id = request_id
        #: ``params.sessionId`` of a request or notification, when it is a string.
        self.session_id = session_id

    def __repr__(self) -> str:
        return (
            f"Frame({self.kind}, id={self.request_id!r}, session={self.session_id!r},"
            f" {len(self.data)} bytes)"
        )


frame_bytes: Final = attrgetter("data")
"""``frame.data``, as a C-level function for ``map`` over a batch (the writer's hot path)."""


def session_of(params: object) -> str | None:
    """The session a request or notification with these params belongs to, if it names one."""
    if isinstance(params, dict):
        value = params.get("sessionId")
        if isinstance(value, str):
            return value
    return None
