"""Text helpers shared by the tools: output capping, binary detection, decoding.

Every tool result the model sees goes through :func:`cap_text`, so that one huge file or
command output cannot blow the context window. The truncation note tells the model how much
it did not see, so it can ask for a narrower range instead of guessing.
"""

from __future__ import annotations

from typing import Literal

# How many leading bytes are inspected to decide whether a file is binary. Large enough to
# see past a short text header, small enough to be cheap for every file grep visits.
BINARY_SNIFF_BYTES = 8192

# Bytes that essentially never occur in text files (C0 controls other than tab, newline,
# carriage return, form feed, vertical tab and escape).
_CONTROL_BYTES = frozenset([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])


def cap_text(text: str, limit: int, keep: Literal["head", "head_tail"] = "head") -> str:
    """Return ``text`` shortened to at most ``limit`` characters, note included.

    ``keep="head_tail"`` keeps the start and the end (command output, where errors are usually
    at the bottom); ``"head"`` keeps the start only. Text within the limit is returned as is,
    so capping twice is harmless (``limit <= 0`` means no cap).
    """
    if limit <= 0 or len(text) <= limit:
        return text
    # Reserve room for the note, sized with the largest number it could show.
    if keep == "head_tail":
        note_room = len(f"\n[output truncated: {len(text):,} characters omitted]\n")
        kept = max(limit - note_room, 0)
        head_len = kept // 2
        tail_len = kept - head_len
        omitted = len(text) - head_len - tail_len
        tail = text[len(text) - tail_len :] if tail_len else ""
        return f"{text[:head_len]}\n[output truncated: {omitted:,} characters omitted]\n{tail}"
    note_room = len(f"\n[output truncated: {len(text):,} more characters]")
    kept = max(limit - note_room, 0)
    return f"{text[:kept]}\n[output truncated: {len(text) - kept:,} more characters]"


def looks_binary(sample: bytes) -> bool:
    """Guess whether ``sample`` (the first bytes of a file) comes from a binary file.

    A NUL byte is decisive; so is a high share of control bytes. Otherwise it is text, in
    UTF-8 or a legacy 8-bit encoding (both are shown, undecodable bytes replaced).
    """
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    controls = sum(1 for byte in sample if byte in _CONTROL_BYTES)
    return controls / len(sample) > 0.1


def decode_text(data: bytes) -> str:
    """Decode file bytes as UTF-8, replacing what does not decode (never raises)."""
    return data.decode("utf-8", errors="replace")


def shorten_line(line: str, limit: int) -> str:
    """Cut one very long line (minified JSON, a base64 blob) with a marker."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... [line truncated: {len(line) - limit:,} more characters]"
