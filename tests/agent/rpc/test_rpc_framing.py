"""Sans-IO framing: plain bytes in, events out."""

from __future__ import annotations

import json

import pytest
from iac_code.rpc.framing import (
    DecodeFailure,
    LineFramer,
    OversizedLine,
    decode_line,
    encode_message,
)


def feed_all(framer: LineFramer, chunks: list[bytes]) -> list[object]:
    events: list[object] = []
    for chunk in chunks:
        events.extend(framer.feed(chunk))
    events.extend(framer.close())
    return events


STREAM = b'{"a":1}\n{"b":"x\\ny"}\r\n\n   \n{"c":[1,2]}\n{"tail":true}'
EXPECTED = [b'{"a":1}', b'{"b":"x\\ny"}', b'{"c":[1,2]}', b'{"tail":true}']


def test_whole_stream_yields_lines_without_terminators_and_skips_blank_lines() -> None:
    assert feed_all(LineFramer(), [STREAM]) == EXPECTED


@pytest.mark.parametrize("cut", range(1, len(STREAM)))
def test_a_split_at_any_byte_boundary_gives_the_same_lines(cut: int) -> None:
    assert feed_all(LineFramer(), [STREAM[:cut], STREAM[cut:]]) == EXPECTED


def test_one_byte_at_a_time_gives_the_same_lines() -> None:
    chunks = [STREAM[i : i + 1] for i in range(len(STREAM))]
    assert feed_all(LineFramer(), chunks) == EXPECTED


def test_crlf_terminated_lines_lose_the_carriage_return() -> None:
    assert feed_all(LineFramer(), [b"one\r\ntwo\r\n"]) == [b"one", b"two"]


def test_final_line_without_newline_counts_at_eof_only() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"x":1}') == []
    assert framer.close() == [b'{"x":1}']
    assert framer.close() == []


def test_line_at_the_limit_passes_and_one_byte_more_is_oversized() -> None:
    framer = LineFramer(max_line_bytes=5)
    assert framer.feed(b"12345\n123456\nok\n") == [b"12345", OversizedLine(5), b"ok"]


def test_oversized_line_is_reported_once_and_framing_resumes_after_its_newline() -> None:
    framer = LineFramer(max_line_bytes=8)
    events = framer.feed(b"0123456789")
    assert events == [OversizedLine(8)]
    # The rest of the line arrives in many chunks: nothing is reported or kept.
    for _ in range(1000):
        assert framer.feed(b"x" * 100) == []
    assert framer._buffer == b""  # the discarded line is never buffered
    assert framer.feed(b'zz\n{"ok":1}\n') == [b'{"ok":1}']


def test_oversize_detected_when_a_buffered_prefix_and_new_data_complete_a_long_line() -> None:
    framer = LineFramer(max_line_bytes=6)
    assert framer.feed(b"abcd") == []
    assert framer.feed(b"efg\nhi\n") == [OversizedLine(6), b"hi"]


def test_oversized_unterminated_line_at_eof_gives_nothing_more() -> None:
    framer = LineFramer(max_line_bytes=3)
    assert framer.feed(b"abcdef") == [OversizedLine(3)]
    assert framer.close() == []


def test_max_line_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LineFramer(max_line_bytes=0)


def test_decode_line_parses_json_values() -> None:
    assert decode_line(b'{"k":[1,"\xc3\xa9"]}') == {"k": [1, "é"]}
    assert decode_line(b"3") == 3


@pytest.mark.parametrize(
    ("line", "reason_start"),
    [
        (b'{"a":"\xff"}', "invalid UTF-8"),
        (b"{not json", "invalid JSON"),
        (b'{"a":1} trailing', "invalid JSON"),
        (b"NaN", "invalid JSON"),
        (b'{"a":Infinity}', "invalid JSON"),
        ('"x"'.encode("utf-16"), "invalid UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON nested"),
    ],
)
def test_decode_line_failures_carry_a_short_reason(line: bytes, reason_start: str) -> None:
    failure = decode_line(line)
    assert isinstance(failure, DecodeFailure)
    assert failure.reason.startswith(reason_start)


def test_encode_message_is_one_compact_utf8_line() -> None:
    frame = encode_message({"text": "line1\nline2\u2028é", "n": [1, 2]})
    assert frame.endswith(b"\n")
    assert frame.count(b"\n") == 1
    assert b", " not in frame and b": " not in frame
    assert "é".encode() in frame
    assert json.loads(frame) == {"text": "line1\nline2\u2028é", "n": [1, 2]}


def test_encode_message_escapes_lone_surrogates_instead_of_failing() -> None:
    value = decode_line(b'{"s":"\\ud800"}')
    frame = encode_message(value)
    assert frame == b'{"s":"\\ud800"}\n'


def test_encode_message_rejects_values_that_are_not_json() -> None:
    with pytest.raises(ValueError):
        encode_message({"x": float("nan")})
    with pytest.raises(TypeError):
        encode_message({"x": object()})
