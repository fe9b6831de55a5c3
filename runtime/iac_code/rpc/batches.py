"""Limits of an inbound JSON-RPC batch (v2 only), and the answers it holds until it ends.

A batch is one line, so the line cap (64 MiB) was its only bound: a 13 MB line of 300,000
tiny requests decoded into millions of objects and started as many tasks (2 GiB). Three
bounds now hold, each answered with one ``-32600`` (``id: null``) naming the limit:

- bytes: an array line longer than ``max_batch_bytes`` is refused *before* it is decoded
  (decoding is where the memory goes, about 20 bytes of objects per byte of small entries);
- entries: a decoded batch of more than ``max_batch_entries`` entries runs none of them;
- answers: the answers a batch collects before its array is written are capped at
  ``max_batch_answer_bytes``; an answer past the cap becomes a short error in its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from acp_bindings.errors import InternalError, InvalidRequestError

from iac_code.rpc.envelope import RequestId
from iac_code.rpc.framing import encode_message

DEFAULT_MAX_BATCH_ENTRIES: Final = 1000
DEFAULT_MAX_BATCH_BYTES: Final = 4 * 2**20
DEFAULT_MAX_BATCH_ANSWER_BYTES: Final = 16 * 2**20


@dataclass(frozen=True, slots=True)
class OversizedBatch:
    """An array line over the batch byte limit; it was never decoded."""

    size: int
    limit: int


def is_array_line(line: bytes) -> bool:
    """Whether the line's JSON value is an array (its first non-blank byte is ``[``)."""
    return line.lstrip(b" \t\r")[:1] == b"["


def oversized_batch_error(event: OversizedBatch) -> InvalidRequestError:
    return InvalidRequestError(
        "Batch too large",
        {
            "reason": f"a batch of {event.size} bytes; at most {event.limit} per batch",
            "maxBatchBytes": event.limit,
        },
    )


def too_many_entries_error(count: int, limit: int) -> InvalidRequestError:
    return InvalidRequestError(
        "Batch too large",
        {
            "reason": f"a batch of {count} entries; at most {limit} per batch",
            "maxBatchEntries": limit,
        },
    )


class BatchAnswers:
    """The answer frames of one batch in entry order, within a byte budget."""

    __slots__ = ("_frames", "_held_bytes", "_max_bytes")

    def __init__(self, max_bytes: int = DEFAULT_MAX_BATCH_ANSWER_BYTES) -> None:
        self._frames: list[bytes] = []
        self._held_bytes = 0
        self._max_bytes = max_bytes

    def add(self, request_id: RequestId | None, frame: bytes) -> bool:
        """Hold ``frame``; False when it did not fit and a short error was held instead."""
        if self._held_bytes + len(frame) > self._max_bytes:
            error = InternalError(
                "The batch's answers exceed the size a batch may hold; send this request alone",
                {"maxBatchAnswerBytes": self._max_bytes},
            )
            frame = encode_message({"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()})
            self._frames.append(frame)
            return False
        self._frames.append(frame)
        self._held_bytes += len(frame)
        return True

    def frame(self) -> bytes | None:
        """The one array line of every answer, or None when nothing needs answering."""
        if not self._frames:
            return None
        return b"[" + b",".join(answer.rstrip(b"\n") for answer in self._frames) + b"]\n"
