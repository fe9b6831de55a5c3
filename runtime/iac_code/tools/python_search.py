"""The pure-Python engines of ``grep`` and ``glob``, run only inside the search worker.

Python's ``re`` backtracks, so a model-chosen pattern such as ``(.*)*y`` (or a glob that
translates into nested alternations) can take exponential time while holding the GIL. That is
why these functions never run in the agent process: :mod:`iac_code.tools.search_worker` runs
them in a child process that the agent kills at a deadline or on cancel. This module imports
only the standard library and the stdlib-only helpers of this package, so the worker starts
quickly.

Requests and results are plain JSON-able dicts, because they cross a pipe.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from iac_code.tools.globbing import GlobMatcher, WalkStats, walk
from iac_code.tools.paths import is_inside_roots, is_sensitive, real_path
from iac_code.tools.text import BINARY_SNIFF_BYTES, looks_binary

JsonDict = dict[str, Any]


class _Grep:
    """One grep request: the compiled pattern, its limits and the result being built."""

    def __init__(self, request: JsonDict) -> None:
        flags = re.IGNORECASE if request.get("case_insensitive") else 0
        self.regex = re.compile(request["pattern"], flags)
        glob_text = request.get("glob")
        self.file_filter = (
            GlobMatcher.compile(glob_text, basename_if_no_slash=True) if glob_text else None
        )
        self.base = Path(request["base"])
        self.roots = [Path(root) for root in request["roots"]]
        self.max_matches: int = request["max_matches"]
        self.max_file_bytes: int = request["max_file_bytes"]
        self.max_entries: int = request["max_entries"]
        self.bytes_left: int = request["max_total_bytes"]
        self.line_max_chars: int = request["line_max_chars"]
        self.matches: list[list[Any]] = []
        self.truncated = False
        self.skipped_sensitive = 0
        self.walk_exhausted = False
        self.bytes_exhausted = False

    def allowed_in_tree(self, path: Path) -> bool:
        """Files reached by walking must not lead out of the workspace through a symlink."""
        if not os.path.islink(path):
            return True
        target = real_path(path)
        return is_inside_roots(target, self.roots) or real_path(self.base) in target.parents

    def search_file(self, path: Path) -> None:
        try:
            size = path.stat().st_size
            if size > self.max_file_bytes:
                return
            if size > self.bytes_left:
                self.bytes_exhausted = True
                return
            self.bytes_left -= size
            # O_NONBLOCK: a FIFO swapped in after the walk must not block the open.
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
            with open(descriptor, "rb") as handle:
                if not _is_regular(handle.fileno()):
                    return
                if looks_binary(handle.read(BINARY_SNIFF_BYTES)):
                    return
                handle.seek(0)
                for number, raw in enumerate(handle, start=1):
                    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                    if self.regex.search(line):
                        if len(self.matches) >= self.max_matches:
                            self.truncated = True
                            return
                        self.matches.append([os.fspath(path), number, line[: self.line_max_chars]])
        except OSError:
            return

    def run(self) -> JsonDict:
        if self.base.is_file():
            self.search_file(self.base)
        else:
            stats = WalkStats()
            for relative, absolute, is_dir in walk(self.base, self.max_entries, stats):
                if self.truncated or self.bytes_exhausted:
                    break
                if is_dir:
                    continue
                if self.file_filter is not None and not self.file_filter.matches(relative):
                    continue
                if is_sensitive(absolute):
                    self.skipped_sensitive += 1
                    continue
                if not self.allowed_in_tree(absolute):
                    continue
                self.search_file(absolute)
            self.walk_exhausted = stats.exhausted
        return {
            "matches": self.matches,
            "truncated": self.truncated,
            "skipped_sensitive": self.skipped_sensitive,
            "walk_exhausted": self.walk_exhausted,
            "bytes_exhausted": self.bytes_exhausted,
        }


def _is_regular(descriptor: int) -> bool:
    return stat.S_ISREG(os.fstat(descriptor).st_mode)


def grep(request: JsonDict) -> JsonDict:
    """Search files below ``request["base"]``; raises ``re.error`` for a bad pattern."""
    return _Grep(request).run()


def glob(request: JsonDict) -> JsonDict:
    """Entries below ``request["base"]`` matching ``request["pattern"]``, sorted and capped."""
    base = Path(request["base"])
    matcher = GlobMatcher.compile(request["pattern"])
    stats = WalkStats()
    found = sorted(
        relative + "/" if is_dir else relative
        for relative, _absolute, is_dir in walk(base, request["max_entries"], stats)
        if matcher.matches(relative)
    )
    return {
        "found": found[: request["max_results"]],
        "total": len(found),
        "walk_exhausted": stats.exhausted,
    }


OPERATIONS = {"grep": grep, "glob": glob}
