"""Encoding and tolerant decoding of JSON Lines logs (one JSON object per line).

Decoding never fails: a final line without its newline is a write torn by a crash and is
left out (the caller repairs the file); a complete line that is not a JSON object is
skipped and counted so the caller can log it.
"""

from __future__ import annotations

import json
import json.scanner
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
