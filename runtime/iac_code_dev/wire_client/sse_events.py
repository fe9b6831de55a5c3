"""The one Server-Sent Events parser of the tests and the development tools.

Parses the event-stream format as the HTML standard defines it, as far as ACP's Streamable
HTTP and the model servers use it: ``id:``, ``event:`` and ``data:`` fields (one optional
space after the colon), several ``data:`` lines joined by newlines, comment lines (``:``)
and other fields (``retry:``) ignored, an event dispatched at each blank line when it has
data, an event the stream cuts off dropped. An ``id:`` belongs to the event that carries it
(the standard carries it over to later events; ACP servers number every event). The checker
parses SSE itself (its distribution does not depend on the development tools).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["SseEvent", "SseParser", "aiter_sse", "iter_sse"]


@dataclass(frozen=True)
class SseEvent:
    data: str
    id: str | None = None
    event: str | None = None

    @property
    def message(self) -> Any:
        """The data as JSON (a JSON-RPC message on an ACP stream)."""
        return json.loads(self.data)

    @property
    def event_id(self) -> int | None:
        """The ``id:`` as a number (ACP servers count their events), else None."""
        return int(self.id) if self.id is not None and self.id.strip().isdigit() else None


class SseParser:
    """Feed lines (without their line ending: a CR left by splitting CRLF at LF is
    dropped); complete events come out."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._id: str | None = None
        self._event: str | None = None

    def feed(self, line: str) -> SseEvent | None:
        line = line.removesuffix("\r")
        if line == "":
            event = None
            if self._data:
                event = SseEvent("\n".join(self._data), self._id, self._event)
            self._data, self._id, self._event = [], None, None
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "id":
            self._id = value
        elif name == "event":
            self._event = value
        return None


def iter_sse(lines: Iterable[str]) -> Iterator[SseEvent]:
    parser = SseParser()
    for line in lines:
        event = parser.feed(line)
        if event is not None:
            yield event


async def aiter_sse(lines: AsyncIterable[str]) -> AsyncIterator[SseEvent]:
    """Events of an async line source, e.g. ``httpx.Response.aiter_lines()``."""
    parser = SseParser()
    async for line in lines:
        event = parser.feed(line)
        if event is not None:
            yield event
