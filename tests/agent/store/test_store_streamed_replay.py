"""Issue 34 item 12, the parser: a session log streamed in chunks decodes exactly like the
whole-buffer parser, while a line longer than the limit (or a torn tail that long) is
skipped without being kept."""

from __future__ import annotations

import io
import json
import random

import pytest
from iac_code.store.jsonl import parse_lines, parse_stream


def _log(rng: random.Random) -> bytes:
    lines: list[bytes] = []
    for n in range(rng.randint(0, 40)):
        kind = rng.random()
        if kind < 0.7:
            lines.append(json.dumps({"n": n, "text": "x" * rng.randint(0, 50)}).encode())
        elif kind < 0.8:
            lines.append(b"not json")
        elif kind < 0.9:
            lines.append(b"")
        else:
            lines.append(b'{"bad utf8": "\xff"}')
    data = b"\n".join(lines) + (b"\n" if lines else b"")
    if rng.random() < 0.5:
        data += b'{"torn": "tai'  # a write cut off by a crash
    return data


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 4096])
def test_streaming_matches_the_whole_buffer_parser(seed: int, chunk: int) -> None:
    data = _log(random.Random(seed))
    whole = parse_lines(data)
    streamed = parse_stream(io.BytesIO(data).read, chunk_bytes=chunk)
    assert streamed.records == whole.records
    assert streamed.bad_lines == whole.bad_lines
    assert streamed.complete_length == whole.complete_length
    assert streamed.total_length == len(data)


@pytest.mark.parametrize("chunk", [5, 16, 1000])
def test_an_overlong_line_is_skipped_and_counted(chunk: int) -> None:
    long_line = json.dumps({"big": "y" * 300}).encode()
    data = b'{"a":1}\n' + long_line + b'\n{"b":2}\n' + b'{"torn":"' + b"z" * 500
    streamed = parse_stream(io.BytesIO(data).read, chunk_bytes=chunk, max_line_bytes=100)
    assert streamed.records == [{"a": 1}, {"b": 2}]
    assert streamed.bad_lines == [2]
    assert streamed.complete_length == data.rfind(b"\n") + 1
    assert streamed.total_length == len(data)
