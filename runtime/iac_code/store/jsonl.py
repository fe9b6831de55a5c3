"""Encoding and tolerant decoding of JSON Lines logs (one JSON object per line).

Decoding never fails: a final line without its newline is a write torn by a crash and is
left out (the caller repairs the file); a complete line that is not a JSON object is
skipped and counted so the caller can log it.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_decoder = json.JSONDecoder()
_decode = _decoder.decode
#: The C scanner behind ``decode``. Calling it directly skips two Python-level wrapper
#: frames per line, which is most of the per-line cost for the small records of a log.
_scan_once = json.scanner.make_scanner(_decoder)  # type: ignore[arg-type]  # stub is wrong


def encode_line(record: dict[str, Any]) -> bytes:
    """One compact JSON object plus a newline.

    Text is kept as UTF-8 (smaller, faster to read back); a string holding a lone surrogate
    cannot be UTF-8, so that rare record falls back to ASCII escapes. NaN and infinities are
    refused (ValueError) because they are not JSON.
    """
    if not isinstance(record, dict):
        raise TypeError(f"a store record must be a dict, not {type(record).__name__}")
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        text = json.dumps(record, separators=(",", ":"), allow_nan=False)
        return text.encode("ascii") + b"\n"


@dataclass(slots=True)
class ParsedLines:
    """The objects found in a JSONL buffer and what had to be left out."""

    records: list[dict[str, Any]]
    #: Length of the prefix made of complete lines (up to and including the last newline).
    complete_length: int
    #: 1-based numbers of complete lines that were not JSON objects.
    bad_lines: list[int]


def parse_lines(data: bytes) -> ParsedLines:
    """Decode every complete line of ``data``; see the module docstring for the rules."""
    complete_length = data.rfind(b"\n") + 1
    body = data[:complete_length]
    records: list[dict[str, Any]] = []
    bad_lines: list[int] = []
    try:
        lines: list[str | None] = body.decode("utf-8").split("\n")  # type: ignore[assignment]
    except UnicodeDecodeError:
        # Rare slow path: some line holds invalid UTF-8; decode line by line so only
        # those lines are lost (None marks them).
        lines = [_utf8_or_none(line) for line in body.split(b"\n")]
    lines.pop()  # the empty remainder after the final newline
    append = records.append
    for number, line in enumerate(lines, 1):
        if line is None:
            bad_lines.append(number)
            continue
        if not line:
            continue
        try:
            value, end = _scan_once(line, 0)
            if end != len(line):
                raise ValueError("trailing data")
        except (ValueError, StopIteration):
            # Not a plain compact line: let the full decoder judge it (it accepts
            # surrounding whitespace and rejects everything else).
            try:
                value = _decode(line)
            except ValueError:
                bad_lines.append(number)
                continue
        if type(value) is dict:
            append(value)
        else:
            bad_lines.append(number)
    return ParsedLines(records, complete_length, bad_lines)


def _utf8_or_none(line: bytes) -> str | None:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return None


#: Bytes read per step when a log is streamed (`parse_stream`).
STREAM_CHUNK_BYTES = 4 * 2**20
#: A stored line longer than this is not decoded (nothing the agent writes comes close:
#: tool results are capped). Such a line, or a torn tail as long, is skipped unbuffered.
MAX_STORED_LINE_BYTES = 64 * 2**20


@dataclass(slots=True)
class StreamedLines(ParsedLines):
    """`ParsedLines` of a streamed log, plus how many bytes were read in all."""

    total_length: int = 0


def parse_stream(
    read: Callable[[int], bytes],
    *,
    chunk_bytes: int = STREAM_CHUNK_BYTES,
    max_line_bytes: int = MAX_STORED_LINE_BYTES,
) -> StreamedLines:
    """`parse_lines` over a file read in chunks (``read(n)`` returns b"" at the end).

    Memory is the records plus one chunk and one unfinished line (at most
    ``max_line_bytes``): not the file's bytes, its decoded text and its split lines at once.
    A longer line is counted as bad and skipped without being kept, as is a longer torn tail.
    """
    # A chunk no longer than the line limit: a longer line then always spans chunks, which
    # is where its length is checked.
    chunk_bytes = min(chunk_bytes, max_line_bytes)
    records: list[dict[str, Any]] = []
    bad_lines: list[int] = []
    pending = bytearray()
    discarding = False  # inside a line longer than max_line_bytes
    lines_before = 0
    complete_length = total = 0
    while chunk := read(chunk_bytes):
        total += len(chunk)
        last_newline = chunk.rfind(b"\n")
        if last_newline < 0:
            discarding = _hold(pending, chunk, discarding, max_line_bytes)
            continue
        complete_length = total - len(chunk) + last_newline + 1
        head, tail = chunk[: last_newline + 1], chunk[last_newline + 1 :]
        if discarding or pending:
            first_newline = head.find(b"\n")
            if discarding or len(pending) + first_newline > max_line_bytes:
                lines_before += 1
                bad_lines.append(lines_before)
                head = head[first_newline + 1 :]
            else:
                pending += head[: first_newline + 1]
                _add_block(bytes(pending), records, bad_lines, lines_before)
                lines_before += 1
                head = head[first_newline + 1 :]
            pending.clear()
            discarding = False
        if head:
            _add_block(head, records, bad_lines, lines_before)
            lines_before += head.count(b"\n")
        discarding = _hold(pending, tail, False, max_line_bytes)
    return StreamedLines(records, complete_length, bad_lines, total)


def _hold(pending: bytearray, data: bytes, discarding: bool, limit: int) -> bool:
    """Keep ``data`` as part of the unfinished line; True once it outgrew ``limit``."""
    if discarding or len(pending) + len(data) > limit:
        pending.clear()
        return True
    pending += data
    return False


def _add_block(
    block: bytes, records: list[dict[str, Any]], bad_lines: list[int], lines_before: int
) -> None:
    """Records of a block of complete lines; its bad line numbers shifted to the file's."""
    parsed = parse_lines(block)
    records.extend(parsed.records)
    bad_lines.extend(number + lines_before for number in parsed.bad_lines)
