"""``grep``: regex search over files, with ripgrep when it is installed.

Both engines produce the same thing: matches as ``path:line:text`` sorted by path and line,
paths relative to the session cwd (absolute outside it). Both skip ``.git``, binary files and
files larger than the read cap, do not read ``.gitignore`` (so results do not depend on which
engine ran), and leave out sensitive files such as ``.env`` — grep is auto-allowed inside the
workspace, so it must not become a way around the permission asked for reading those.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from iac_code.tools.contract import (
    Access,
    JsonDict,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.paths import is_sensitive, resolve_path
from iac_code.tools.safe_fs import UnsafePath
from iac_code.tools.search_process import SearchFailed, SearchTimeout, run_search
from iac_code.tools.text import shorten_line
from iac_code.tools.workspace import BaseDirectoryReadTool, checked_real_path, display_name


@dataclass(frozen=True)
class Match:
    path: Path
    line: int
    text: str


@dataclass
class SearchResult:
    matches: list[Match] = field(default_factory=list)
    truncated: bool = False  # more matches than the cap
    skipped_sensitive: int = 0
    walk_exhausted: bool = False
    engine: str = "python"


@dataclass(frozen=True)
class SearchRequest:
    base: Path
    pattern: str
    case_insensitive: bool
    glob: str | None
    max_matches: int
    max_file_bytes: int
    max_entries: int
    max_total_bytes: int
    line_max_chars: int
    roots: tuple[Path, ...]

    def for_worker(self) -> JsonDict:
        """The request as the search worker reads it (see python_search)."""
        return {
            "op": "grep",
            "base": os.fspath(self.base),
            "pattern": self.pattern,
            "case_insensitive": self.case_insensitive,
            "glob": self.glob,
            "max_matches": self.max_matches,
            "max_file_bytes": self.max_file_bytes,
            "max_entries": self.max_entries,
            "max_total_bytes": self.max_total_bytes,
            "line_max_chars": self.line_max_chars,
            "roots": [os.fspath(root) for root in self.roots],
        }


async def search_python(request: SearchRequest, timeout_s: float) -> SearchResult:
    """The pure-Python engine, in a killable worker process (see search_process)."""
    answer = await run_search(request.for_worker(), timeout_s)
    return SearchResult(
        matches=[Match(Path(path), line, text) for path, line, text in answer["matches"]],
        truncated=bool(answer["truncated"]),
        skipped_sensitive=int(answer["skipped_sensitive"]),
        walk_exhausted=bool(answer["walk_exhausted"] or answer["bytes_exhausted"]),
        engine="python",
    )


def _rg_command(rg: str, request: SearchRequest) -> list[str]:
    command = [
        rg,
        "--json",
        "--no-config",
        "--hidden",
        "--no-ignore",
        "--no-messages",
        "--sort",
        "path",
        "--max-filesize",
        str(request.max_file_bytes),
        "--glob",
        "!.git",
    ]
    if request.case_insensitive:
        command.append("--ignore-case")
    if request.glob:
        command += ["--glob", request.glob]
    return [*command, "--regexp", request.pattern, "--", os.fspath(request.base)]


def parse_rg_event(line: bytes) -> Match | None:
    """Turn one ``rg --json`` line into a Match (None for non-match events)."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("type") != "match":
        return None
    data = event.get("data", {})

    def _text(node: object) -> str | None:
        if not isinstance(node, dict):
            return None
        if isinstance(node.get("text"), str):
            return node["text"]
        if isinstance(node.get("bytes"), str):
            return base64.b64decode(node["bytes"]).decode("utf-8", errors="replace")
        return None

    path_text = _text(data.get("path"))
    line_text = _text(data.get("lines"))
    number = data.get("line_number")
    if path_text is None or line_text is None or not isinstance(number, int):
        return None
    return Match(Path(path_text), number, line_text.rstrip("\r\n"))


async def search_ripgrep(rg: str, request: SearchRequest) -> SearchResult | None:
    """Search with ripgrep; None when ripgrep failed (the caller falls back to Python)."""
    result = SearchResult(engine="ripgrep")
    process = await anyio.open_process(
        _rg_command(rg, request), stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert process.stdout is not None
        buffer = b""
        async for chunk in process.stdout:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for match in filter(None, map(parse_rg_event, lines)):
                if is_sensitive(match.path):
                    result.skipped_sensitive += 1
                    continue
                if len(result.matches) >= request.max_matches:
                    result.truncated = True
                    break
                result.matches.append(match)
            if result.truncated:
                break
        if result.truncated:
            process.kill()
        code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()
    # 0 = matches, 1 = none; anything else (bad regex for Rust's engine, ...) = fall back.
    if not result.truncated and code not in (0, 1):
        return None
    return result


def _format(result: SearchResult, ctx: ToolContext) -> str:
    width = ctx.limits.grep_line_max_chars
    lines = [
        f"{display_name(match.path, ctx)}:{match.line}:{shorten_line(match.text, width)}"
        for match in result.matches
    ]
    body = "\n".join(lines) if lines else "(no matches)"
    if result.truncated:
        body += f"\n[results truncated at {len(result.matches):,} matches; narrow the search]"
    if result.walk_exhausted:
        body += (
            "\n[search stopped early: too many files or bytes to search; narrow the path or glob]"
        )
    if result.skipped_sensitive:
        body += (
            f"\n[{result.skipped_sensitive:,} sensitive files (e.g. .env) were not searched; "
            "read them with read_file to ask the user]"
        )
    return body


def _sorted(matches: Iterable[Match]) -> list[Match]:
    return sorted(matches, key=lambda match: (os.fspath(match.path), match.line))


class GrepTool(BaseDirectoryReadTool):
    name = "grep"
    kind = "search"
    read_only = True
    masks_output = True
    description = (
        "Search file contents with a regular expression (Python/ripgrep syntax) below a "
        "directory or in one file (default: the working directory). Returns matching lines as "
        "'path:line:text', sorted by path and line. `glob` limits the files searched (e.g. "
        "'*.tf' matches in every directory, 'modules/**/*.tf' relative to the path). Binary "
        "files, .git and sensitive files such as .env are skipped."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "minLength": 1,
                "description": "Regular expression to search for.",
            },
            "path": {
                "type": "string",
                "description": "Directory or file to search (default: '.').",
            },
            "glob": {
                "type": "string",
                "description": "Only search files whose path matches this glob.",
            },
            "case_insensitive": {
                "type": "boolean",
                "description": "Match without regard to case (default false).",
            },
        },
        "required": ["pattern"],
    }

    def __init__(self, ripgrep: str | bool | None = True) -> None:
        """``ripgrep``: True = use ``rg`` from PATH if present, False = never, str = its path."""
        self._ripgrep = ripgrep

    def _rg_path(self) -> str | None:
        if self._ripgrep is True:
            return shutil.which("rg")
        if isinstance(self._ripgrep, str):
            return self._ripgrep
        return None

    async def _search(self, request: SearchRequest, timeout_s: float) -> SearchResult:
        """ripgrep when available (bounded by the same deadline), else the Python worker."""
        rg = self._rg_path()
        if rg is not None:
            result: SearchResult | None = None
            with anyio.move_on_after(timeout_s) as deadline:
                try:
                    result = await search_ripgrep(rg, request)
                except OSError:
                    result = None
            if deadline.cancelled_caught:
                raise SearchTimeout(timeout_s)
            if result is not None:
                return result
        return await search_python(request, timeout_s)

    def _title(self, tool_input: JsonDict) -> str:
        base = self._raw_base(tool_input)
        suffix = "" if base == "." else f" in {base}"
        return f"Search for {tool_input['pattern']!r}{suffix}"

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        base = resolve_path(self._raw_base(tool_input), ctx.cwd)
        try:
            checked_real_path(base, access)  # not swapped for a symlink since the check
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        if not base.exists():
            return ToolOutcome.error(f"Path not found: {base}")
        limits = ctx.limits
        request = SearchRequest(
            base=base,
            pattern=tool_input["pattern"],
            case_insensitive=bool(tool_input.get("case_insensitive")),
            glob=tool_input.get("glob") or None,
            max_matches=limits.grep_max_matches,
            max_file_bytes=limits.read_max_bytes,
            max_entries=limits.walk_max_entries,
            max_total_bytes=limits.grep_max_total_bytes,
            line_max_chars=limits.grep_line_max_chars * 4,
            roots=tuple(ctx.roots),
        )
        try:
            result = await self._search(request, limits.search_timeout_s)
        except SearchTimeout as exc:
            return ToolOutcome.error(
                f"grep stopped: the search {exc} (the pattern may backtrack catastrophically, "
                "or the tree is too large). Simplify the pattern or narrow the path or glob.",
                raw_output={"timedOut": True},
            )
        except SearchFailed as exc:
            return ToolOutcome.error(str(exc))
        result.matches = _sorted(result.matches)
        return ToolOutcome(
            model_content=_format(result, ctx),
            content=[text_content(f"{len(result.matches)} matches")],
            raw_output={
                "matchCount": len(result.matches),
                "truncated": result.truncated,
                "engine": result.engine,
            },
        )
