"""The wire client's one SSE parser (``iac_code_dev.wire_client.sse_events``).

Lines in, events out, as the HTML standard's event-stream format says, plus the way the
client really reads a stream: ``httpx``'s line splitting over chunks that cut lines, line
endings and events anywhere.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from iac_code_dev.wire_client.sse_events import SseEvent, SseParser, aiter_sse, iter_sse

WAIT_S = 60.0


def events(text: str) -> list[SseEvent]:
    return list(iter_sse(text.split("\n")))


def test_data_lines_of_one_event_are_joined_by_newlines() -> None:
    assert events('data: {"a":\ndata: 1}\n\n') == [SseEvent('{"a":\n1}')]
    assert events('data: {"a":\ndata: 1}\n\n')[0].message == {"a": 1}


def test_one_space_after_the_colon_is_dropped_and_only_one() -> None:
    assert events("data:x\n\ndata: x\n\ndata:  x\n\n") == [
        SseEvent("x"),
        SseEvent("x"),
        SseEvent(" x"),
    ]


def test_a_field_without_a_colon_has_an_empty_value() -> None:
    # "data" alone adds an empty line to the data, so the event's data is "\n".
    assert events("data\ndata\n\n") == [SseEvent("\n")]


def test_an_empty_data_line_is_an_event_with_empty_data() -> None:
    assert events("data:\n\n") == [SseEvent("")]


def test_comments_and_keep_alives_are_no_events() -> None:
    text = ": keep-alive\n\n:\n\ndata: 1\n: a comment inside an event\ndata: 2\n\n: ping\n\n"
    assert events(text) == [SseEvent("1\n2")]


def test_a_blank_line_without_data_dispatches_nothing_and_resets_the_fields() -> None:
    text = "id: 4\nevent: ping\n\ndata: x\n\n"
    assert events(text) == [SseEvent("x")]


def test_ids_and_event_names_belong_to_their_event() -> None:
    text = "id: 7\nevent: message\ndata: a\n\ndata: b\n\nid: 8\ndata: c\n\n"
    parsed = events(text)
    assert parsed == [SseEvent("a", "7", "message"), SseEvent("b"), SseEvent("c", "8")]
    assert [event.event_id for event in parsed] == [7, None, 8]


def test_an_id_that_is_not_a_number_has_no_event_id() -> None:
    parsed = events("id: abc\ndata: a\n\nid:\ndata: b\n\n")
    assert [(event.id, event.event_id) for event in parsed] == [("abc", None), ("", None)]


def test_retry_and_unknown_fields_are_ignored() -> None:
    text = "retry: 3000\nid: 2\nretry\nfoo: bar\ndata: x\n\nretry: 10\n\n"
    assert events(text) == [SseEvent("x", "2")]


def test_crlf_line_endings() -> None:
    text = "id: 1\r\ndata: a\r\ndata: b\r\n\r\n: ping\r\n\r\ndata: c\r\n\r\n"
    assert events(text) == [SseEvent("a\nb", "1"), SseEvent("c")]


def test_an_event_cut_off_by_the_end_of_the_stream_is_dropped() -> None:
    assert events("data: complete\n\ndata: half") == [SseEvent("complete")]


def test_the_parser_keeps_an_event_open_across_feeds() -> None:
    parser = SseParser()
    assert parser.feed("id: 3") is None
    assert parser.feed("data: one") is None
    assert parser.feed("data: two") is None
    assert parser.feed("") == SseEvent("one\ntwo", "3")
    assert parser.feed("") is None


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


@pytest.mark.anyio
async def test_events_split_across_reads_as_the_client_reads_them() -> None:
    # Cut mid-field, mid-JSON, between the CR and the LF of a line ending, and between the
    # last data line and the blank line that ends the event.
    parts = [
        b"id: 1\r\nda",
        b'ta: {"jsonrpc":"2.0",',
        b'"method":"x"}\r',
        b"\n",
        b"\r\n: keep-alive\r\n\r\nid: 2\ndata: 1\n",
        b"data: 2\n",
        b"\n",
        b"retry: 5\n\ndata: end\r\n\r\n",
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=_chunks(parts)
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        with anyio.fail_after(WAIT_S):
            async with http.stream("GET", "http://agent.test/acp") as response:
                received = [event async for event in aiter_sse(response.aiter_lines())]
    assert received == [
        SseEvent('{"jsonrpc":"2.0","method":"x"}', "1"),
        SseEvent("1\n2", "2"),
        SseEvent("end"),
    ]
    assert received[0].message == {"jsonrpc": "2.0", "method": "x"}
