"""Glob patterns and the bounded directory walk shared by ``glob`` and ``grep``.

One matcher serves both tools so that a pattern means the same thing in each: ``*`` and
``?`` stay within one path component, ``**`` spans components, ``[...]`` is a character
class and ``{a,b}`` an alternation. The walk never follows symlinked directories (no loops,
no escapes) and never enters ``.git``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SKIPPED_DIR_NAMES = frozenset({".git"})


def _translate(pattern: str) -> str:
    out: list[str] = []
    index = 0
    length = len(pattern)
    while index < length:
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            # A "]" right after "[" (or "[!") is a literal member, as in shell globs.
            start = index + 1
            if pattern[start : start + 1] in ("!", "^"):
                start += 1
            end = pattern.find("]", start + 1)
            if end == -1:
                out.append(re.escape(char))
                index += 1
                continue
            body = pattern[index + 1 : end]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\")
            out.append(f"[{'^/' if negate else ''}{body}]")
            index = end + 1
        elif char == "{":
            end = pattern.find("}", index)
            if end == -1:
                out.append(re.escape(char))
                index += 1
                continue
            choices = pattern[index + 1 : end].split(",")
            out.append("(?:" + "|".join(_translate(choice) for choice in choices) + ")")
            index = end + 1
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


@dataclass(frozen=True)
class GlobMatcher:
    """A compiled glob. Patterns without ``/`` can be told to match the base name anywhere."""

    pattern: str
    regex: re.Pattern[str]
    basename_only: bool

    @classmethod
    def compile(cls, pattern: str, *, basename_if_no_slash: bool = False) -> GlobMatcher:
        cleaned = pattern.strip()
        while cleaned.startswith("./"):
            cleaned = cleaned[2:]
        basename_only = basename_if_no_slash and "/" not in cleaned
        return cls(pattern, re.compile(_translate(cleaned), re.DOTALL), basename_only)

    def matches(self, relative_posix: str) -> bool:
        target = relative_posix.rsplit("/", 1)[-1] if self.basename_only else relative_posix
        return self.regex.fullmatch(target) is not None


@dataclass
class WalkStats:
    visited: int = 0
    exhausted: bool = False  # stopped early because the entry budget ran out


def walk(base: Path, max_entries: int, stats: WalkStats) -> Iterator[tuple[str, Path, bool]]:
    """Yield ``(relative posix path, absolute path, is_dir)`` below ``base``, in sorted order.

    Stops (setting ``stats.exhausted``) after ``max_entries`` entries so a huge tree cannot
    stall the agent.
    """
    for directory, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(name for name in dirnames if name not in SKIPPED_DIR_NAMES)
        current = Path(directory)
        prefix = current.relative_to(base).as_posix()
        prefix = "" if prefix == "." else prefix + "/"
        for name, is_dir in sorted(
            [(name, True) for name in dirnames] + [(name, False) for name in filenames]
        ):
            stats.visited += 1
            if stats.visited > max_entries:
                stats.exhausted = True
                return
            yield prefix + name, current / name, is_dir
