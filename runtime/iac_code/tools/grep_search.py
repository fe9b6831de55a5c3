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
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from iac_code.tools.base import (
    Access,
    JsonDict,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.globbing import GlobMatcher, WalkStats, walk
from iac_code.tools.paths import is_inside_roots, is_sensitive, real_path, resolve_path
from iac_code.tools.text import BINARY_SNIFF_BYTES, looks_binary, shorten_line
from iac_code.tools.workspace import BaseDirectoryReadTool, display_name


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
    regex: re.Pattern[str]
    pattern: str
    case_insensitive: bool
    file_filter: GlobMatcher | None
    max_matches: int
    max_file_bytes: int
    max_entries: int
    roots: tuple[Path, ...]


def _allowed_in_tree(path: Path, request: SearchRequest) -> bool:
    """Files reached by walking must not lead out of the workspace through a symlink."""
    if not os.path.islink(path):
        return True
    target = real_path(path)
    base_real = real_path(request.base)
    return is_inside_roots(target, request.roots) or base_real in target.parents


def _search_file(path: Path, request: SearchRequest, result: SearchResult) -> None:
    try:
        if path.stat().st_size > request.max_file_bytes:
            return
        with open(path, "rb") as handle:
            if looks_binary(handle.read(BINARY_SNIFF_BYTES)):
                return
            handle.seek(0)
            for number, raw in enumerate(handle, start=1):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if request.regex.search(line):
                    if len(result.matches) >= request.max_matches:
                        result.truncated = True
                        return
                    result.matches.append(Match(path, number, line))
    except OSError:
        return


def search_python(request: SearchRequest) -> SearchResult:
    """The pure-Python engine."""
    result = SearchResult(engine="python")
    if request.base.is_file():
        _search_file(request.base, request, result)
        return result
    stats = WalkStats()
    for relative, absolute, is_dir in walk(request.base, request.max_entries, stats):
        if result.truncated:
            break
        if is_dir:
            continue
        if request.file_filter is not None and not request.file_filter.matches(relative):
            continue
        if is_sensitive(absolute):
            result.skipped_sensitive += 1
            continue
        if not _allowed_in_tree(absolute, request):
            continue
        _search_file(absolute, request, result)
    result.walk_exhausted = stats.exhausted
    return result


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
    if request.file_filter is not None:
        command += ["--glob", request.file_filter.pattern]
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
        body += "\n[search stopped early: too many files; narrow the path or glob]"
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

    def _title(self, tool_input: JsonDict) -> str:
        base = self._raw_base(tool_input)
        suffix = "" if base == "." else f" in {base}"
        return f"Search for {tool_input['pattern']!r}{suffix}"

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        base = resolve_path(self._raw_base(tool_input), ctx.cwd)
        if not base.exists():
            return ToolOutcome.error(f"Path not found: {base}")
        case_insensitive = bool(tool_input.get("case_insensitive"))
        try:
            regex = re.compile(tool_input["pattern"], re.IGNORECASE if case_insensitive else 0)
        except re.error as exc:
            return ToolOutcome.error(f"Invalid regular expression: {exc}")
        glob_text = tool_input.get("glob")
        request = SearchRequest(
            base=base,
            regex=regex,
            pattern=tool_input["pattern"],
            case_insensitive=case_insensitive,
            file_filter=(
                GlobMatcher.compile(glob_text, basename_if_no_slash=True) if glob_text else None
            ),
            max_matches=ctx.limits.grep_max_matches,
            max_file_bytes=ctx.limits.read_max_bytes,
            max_entries=ctx.limits.walk_max_entries,
            roots=tuple(ctx.roots),
        )
        result: SearchResult | None = None
        rg = self._rg_path()
        if rg is not None:
            try:
                result = await search_ripgrep(rg, request)
            except OSError:
                result = None
        if result is None:
            result = await anyio.to_thread.run_sync(search_python, request, abandon_on_cancel=True)
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
