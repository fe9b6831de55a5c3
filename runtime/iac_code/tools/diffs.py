"""Diffs of bounded size for ``tool_call_update`` content.

A diff carries whole old and new texts; for a large file that is megabytes on the wire, in
the session's history and in every ``session/load`` replay. Above ``max_chars`` (old + new)
the diff is cut down to the changed region with a few lines of context around it — still an
ordinary ACP ``diff`` whose texts are an excerpt — and when even that region is too large, a
short text note replaces it. Everything here is linear in the text length and runs in a
worker thread for large texts (see the callers).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from iac_code.tools.contract import JsonDict, diff_content, text_content

CONTEXT_LINES = 3


@dataclass(frozen=True)
class BoundedDiff:
    content: JsonDict
    # Set when the diff is an excerpt: 1-based first line of the excerpt in the old text.
    excerpt_first_line: int | None = None
    omitted: bool = False  # the change was too large to show at all


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by bisection over C-level slice comparisons."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle :] == b[len(b) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low


def _line_start(text: str, index: int, context: int) -> int:
    start = index
    for _ in range(context + 1):
        found = text.rfind("\n", 0, start)
        if found < 0:
            return 0
        start = found
    return start + 1


def _line_end(text: str, index: int, context: int) -> int:
    end = index
    for _ in range(context + 1):
        found = text.find("\n", end)
        if found < 0:
            return len(text)
        end = found + 1
    return end


def bounded_diff(
    path: Path | str, old_text: str | None, new_text: str, max_chars: int
) -> BoundedDiff:
    """The ``diff`` content for ``old_text`` → ``new_text``, at most about ``max_chars``."""
    old_length = 0 if old_text is None else len(old_text)
    if max_chars <= 0 or old_length + len(new_text) <= max_chars:
        return BoundedDiff(diff_content(path, old_text, new_text))
    old = old_text or ""
    prefix = _common_prefix(old, new_text)
    suffix = _common_suffix(old, new_text, min(len(old), len(new_text)) - prefix)
    start = _line_start(old, prefix, CONTEXT_LINES)
    old_end = _line_end(old, len(old) - suffix, CONTEXT_LINES)
    # The same number of characters after the change in both texts (the common suffix).
    tail = len(old) - old_end
    new_end = len(new_text) - tail
    if (old_end - start) + (new_end - start) > max_chars:
        changed = (len(old) - suffix - prefix) + (len(new_text) - suffix - prefix)
        first_line = old.count("\n", 0, prefix) + 1
        note = (
            f"The change to {path} is too large to show as a diff ({changed:,} characters "
            f"changed, starting at line {first_line:,})."
        )
        return BoundedDiff(text_content(note), omitted=True)
    first_line = old.count("\n", 0, start) + 1
    excerpt = diff_content(
        path, old[start:old_end] if old_text is not None else None, new_text[start:new_end]
    )
    return BoundedDiff(excerpt, excerpt_first_line=first_line)
