"""Contracts between the tools and the agent loop.

The agent loop (not this package) owns the wire: it sends ``tool_call`` with
:meth:`Tool.title`, :attr:`Tool.kind`, the raw input and :meth:`Tool.locations`; asks
:func:`iac_code.tools.permissions.decide` about the :class:`Access` from :meth:`Tool.access`;
requests permission when told to; then calls :meth:`Tool.run` and reports the returned
:class:`ToolOutcome` (``content`` and ``raw_output`` for the client, ``model_content`` for the
model). All values are plain JSON-able dicts with the camelCase ACP field names.
"""

from __future__ import annotations

import abc
import enum
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from iac_code.tools.paths import resolve_roots
from iac_code.tools.secret_masking import mask_json, mask_secrets
from iac_code.tools.text import cap_text
from iac_code.tools.validation import validate_input

JsonDict = dict[str, Any]

# --- What the client offers ------------------------------------------------------------------


@runtime_checkable
class ClientFileReader(Protocol):
    """``fs/read_text_file`` of the client (only when it advertised ``fs.readTextFile``)."""

    async def read_text_file(self, path: str, line: int | None, limit: int | None) -> str:
        """Return the text of ``path`` (absolute), optionally from 1-based ``line``."""
        ...


@runtime_checkable
class ClientFileWriter(Protocol):
    """``fs/write_text_file`` of the client (only when it advertised ``fs.writeTextFile``)."""

    async def write_text_file(self, path: str, content: str) -> None:
        """Write ``content`` to ``path`` (absolute), creating the file if needed."""
        ...


@runtime_checkable
class ClientTerminals(Protocol):
    """The client's ``terminal/*`` methods (only when it advertised ``terminal``)."""

    async def create(
        self,
        command: str,
        args: list[str],
        cwd: str,
        env: list[dict[str, str]],
        output_byte_limit: int,
    ) -> str:
        """``terminal/create``; returns the ``terminalId``. ``env`` uses ACP's name/value shape."""
        ...

    async def wait_for_exit(self, terminal_id: str) -> tuple[int | None, str | None]:
        """``terminal/wait_for_exit``; returns ``(exitCode, signal)``."""
        ...

    async def output(self, terminal_id: str) -> tuple[str, bool, JsonDict | None]:
        """``terminal/output``; returns ``(output, truncated, exitStatus)``."""
        ...

    async def kill(self, terminal_id: str) -> None:
        """``terminal/kill``: stop the command, keep the terminal."""
        ...

    async def release(self, terminal_id: str) -> None:
        """``terminal/release``: stop the command if needed and free the terminal."""
        ...


SubagentRunner = Callable[[str, str], Awaitable[str]]
"""``async (task, description) -> final report`` supplied by the agent loop."""

ContentReporter = Callable[[list[JsonDict]], Awaitable[None]]
"""``async (content)``: send a ``tool_call_update`` with this content while the tool runs."""

PlanReporter = Callable[[list[JsonDict]], Awaitable[None]]
"""``async (entries)``: replace the session's plan (sent as a ``plan`` session update)."""

UserAsker = Callable[[str, JsonDict], Awaitable[Any]]

# Starts a background job for this call (command, argv, cwd, env, output cap): the call
# returns while the job runs on, until it ends or its session closes.
BackgroundStarter = Callable[[str, Sequence[str], Path, Mapping[str, str], int], Awaitable[Any]]
"""``async (message, requested_schema)``: ask the user through the client's form elicitation;
returns the client's ``elicitation/create`` result (raises on a JSON-RPC error)."""


SEARCH_TIMEOUT_ENV = "IAC_CODE_SEARCH_TIMEOUT_S"


def _env_seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment, else ``default``."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


@dataclass(frozen=True)
class ToolLimits:
    """Caps and timeouts; defaults are sized for a model context of a few hundred kB."""

    result_cap_chars: int = 40_000  # characters of one tool result the model sees
    read_default_lines: int = 2_000  # lines read_file returns without an explicit limit
    read_max_bytes: int = 20 * 1024 * 1024  # larger files are refused by read_file
    # Larger files are refused by edit_file and not read back by write_file: one edit holds
    # the old text, the new text and their encodings at once (a few times this cap).
    edit_max_bytes: int = 8 * 1024 * 1024
    # A diff whose old + new text is longer is sent (and persisted) as a bounded excerpt.
    diff_max_chars: int = 256 * 1024
    line_max_chars: int = 2_000  # one very long line is cut (read_file)
    list_max_entries: int = 1_000
    glob_max_results: int = 500
    grep_max_matches: int = 500
    grep_line_max_chars: int = 500
    walk_max_entries: int = 200_000  # directory entries glob/grep visit before giving up
    grep_max_total_bytes: int = 256 * 1024 * 1024  # file bytes one grep reads before stopping
    # Deadline of one glob/grep (the worker process is killed when it passes).
    search_timeout_s: float = field(default_factory=lambda: _env_seconds(SEARCH_TIMEOUT_ENV, 20.0))
    bash_timeout_s: float = 120.0
    bash_max_timeout_s: float = 600.0
    bash_output_bytes: int = 1024 * 1024  # output kept per command (head and tail)
    kill_grace_s: float = 2.0  # SIGTERM → SIGKILL delay for a process group
    web_fetch_timeout_s: float = 30.0
    web_fetch_max_bytes: int = 5 * 1024 * 1024
    web_fetch_max_redirects: int = 5


@dataclass
class ToolContext:
    """What a tool may use for one session. Built by the agent per session (and sub-agent)."""

    cwd: Path
    roots: list[Path]
    fs_read: ClientFileReader | None = None
    fs_write: ClientFileWriter | None = None
    terminal: ClientTerminals | None = None
    run_subagent: SubagentRunner | None = None
    report_content: ContentReporter | None = None
    report_plan: PlanReporter | None = None
    ask_user: UserAsker | None = None
    start_background: BackgroundStarter | None = None
    limits: ToolLimits = field(default_factory=ToolLimits)
    # Environment for local subprocesses; None inherits the agent's own environment.
    env: Mapping[str, str] | None = None

    @classmethod
    def for_session(
        cls,
        cwd: Path | str,
        additional_directories: Sequence[Path | str] = (),
        **options: Any,
    ) -> ToolContext:
        """Build a context whose roots are ``cwd`` plus ``additional_directories``, resolved."""
        cwd_path = Path(os.path.abspath(cwd))
        return cls(cwd=cwd_path, roots=resolve_roots(cwd_path, additional_directories), **options)

    def with_limits(self, **changes: Any) -> ToolContext:
        """A copy with some limits changed (tests, sub-agents)."""
        return replace(self, limits=replace(self.limits, **changes))


# --- What a call touches ---------------------------------------------------------------------


class AccessKind(enum.StrEnum):
    READ = "read"  # reads files or searches them
    WRITE = "write"  # creates or changes files
    EXECUTE = "execute"  # runs commands or a sub-agent
    FETCH = "fetch"  # fetches a URL


@dataclass(frozen=True)
class Access:
    """What one tool call would touch; the permission policy decides on this alone."""

    kind: AccessKind
    paths: tuple[str, ...] = ()
    # The real locations of ``paths`` (symlinks resolved) when the decision was made: file
    # tools operate on exactly these, and refuse when the path leads elsewhere by then.
    real_paths: tuple[str, ...] = ()
    url: str | None = None
    outside_workspace: bool = False
    sensitive: bool = False
    private_network: bool = False
    # Human-readable reasons why the call is restricted (for the permission prompt).
    reasons: tuple[str, ...] = ()
    # Set when the input is invalid: run() will refuse it without touching anything.
    input_error: str | None = None
    # Set for a command that changes real infrastructure (what was recognised, e.g.
    # "terraform destroy"): it asks every time and no remembered answer or mode covers it.
    infra_change: str | None = None

    @property
    def restricted(self) -> bool:
        """Outside the workspace, sensitive or private network: asks every single time."""
        return self.outside_workspace or self.sensitive or self.private_network


# --- What a call produced --------------------------------------------------------------------


def text_content(text: str) -> JsonDict:
    """ACP ToolCallContent of type ``content`` holding one text block."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def diff_content(path: Path | str, old_text: str | None, new_text: str) -> JsonDict:
    """ACP ToolCallContent of type ``diff``; ``oldText`` is None for a new file."""
    return {"type": "diff", "path": os.fspath(path), "oldText": old_text, "newText": new_text}


def terminal_content(terminal_id: str) -> JsonDict:
    """ACP ToolCallContent embedding a client terminal."""
    return {"type": "terminal", "terminalId": terminal_id}


@dataclass
class ToolOutcome:
    """Result of :meth:`Tool.run`.

    ``model_content`` goes into the ``tool_result`` for the model (capped); ``is_error`` marks
    it as an error there and makes the tool call end ``failed`` on the wire; ``content`` is the
    ACP ToolCallContent list and ``raw_output`` the ``rawOutput`` of the final update.
    """

    model_content: str
    is_error: bool = False
    content: list[JsonDict] = field(default_factory=list)
    raw_output: JsonDict = field(default_factory=dict)

    @classmethod
    def error(cls, message: str, raw_output: JsonDict | None = None) -> ToolOutcome:
        return cls(
            model_content=message,
            is_error=True,
            content=[text_content(message)],
            raw_output={"error": message, **(raw_output or {})},
        )


def _masked(outcome: ToolOutcome) -> ToolOutcome:
    return replace(
        outcome,
        model_content=mask_secrets(outcome.model_content),
        content=mask_json(outcome.content),
        raw_output=mask_json(outcome.raw_output),
    )


def _cap_error_copies(outcome: ToolOutcome, limit: int) -> None:
    """An error's message is also in ``content`` and ``rawOutput``, which are sent to the
    client and stored in the session: cap them like the model's copy. The message may be
    the peer's (a client's 10 MB error answer to ``ask_user`` was stored twice, whole)."""
    for item in outcome.content:
        block = item.get("content") if item.get("type") == "content" else None
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            block["text"] = cap_text(block["text"], limit)
    error = outcome.raw_output.get("error")
    if isinstance(error, str):
        outcome.raw_output["error"] = cap_text(error, limit)


# --- The tool base ---------------------------------------------------------------------------


class Tool(abc.ABC):
    """One tool the model can call.

    Subclasses set the class attributes and implement the ``_``-prefixed hooks, which only
    ever see input that passed :meth:`validate`. The public methods never raise for bad model
    input: ``title``/``locations`` fall back to neutral values, ``access`` reports
    ``input_error``, and ``run`` returns an error outcome the model can read.
    """

    name: ClassVar[str]
    kind: ClassVar[str]  # ACP ToolKind
    description: ClassVar[str]
    input_schema: ClassVar[JsonDict]
    # True when the tool changes nothing: the loop may run such calls concurrently.
    read_only: ClassVar[bool] = False
    # True when the output may quote files, pages or command output: credential-shaped
    # values in it are masked before the model, the client or the session file see them.
    masks_output: ClassVar[bool] = False

    def validate(self, tool_input: Any) -> str | None:
        """Return why ``tool_input`` is unusable, or None when it is fine."""
        problems = validate_input(self.input_schema, tool_input)
        if not problems:
            return None
        return f"Invalid input for {self.name}: " + "; ".join(problems) + "."

    def title(self, tool_input: Any) -> str:
        """Human-readable title for the ``tool_call`` (e.g. "Write main.tf")."""
        if self.validate(tool_input) is not None:
            return self.name
        try:
            return self._title(tool_input)
        except Exception:
            return self.name

    def locations(self, tool_input: Any, ctx: ToolContext) -> list[JsonDict]:
        """ACP ToolCallLocation dicts (absolute ``path``, optional 1-based ``line``)."""
        if self.validate(tool_input) is not None:
            return []
        try:
            return self._locations(tool_input, ctx)
        except Exception:
            return []

    async def access(self, tool_input: Any, ctx: ToolContext) -> Access:
        """What the call would touch. Async because web_fetch resolves DNS here."""
        problem = self.validate(tool_input)
        if problem is not None:
            return Access(kind=self._default_access_kind(), input_error=problem)
        return await self._access(tool_input, ctx)

    async def preview(self, tool_input: Any, ctx: ToolContext) -> list[JsonDict]:
        """Content shown on the ``tool_call`` before any permission request (an edit's
        ``diff``, so the user sees what they approve); empty when there is nothing to show.
        Never raises: a preview that fails is simply not shown."""
        if self.validate(tool_input) is not None:
            return []
        try:
            return await self._preview(tool_input, ctx)
        except Exception:
            return []

    async def run(
        self, tool_input: Any, ctx: ToolContext, *, access: Access | None = None
    ) -> ToolOutcome:
        """Run the call. ``access`` is the Access the permission decision was made on.

        Only web_fetch uses ``access`` (a private-network target is fetched only when the
        decision was made knowing it). Exceptions other than cancellation become error
        outcomes; cancellation propagates after the tool cleaned up.
        """
        problem = self.validate(tool_input)
        if problem is not None:
            return ToolOutcome.error(problem)
        try:
            outcome = await self._run(tool_input, ctx, access)
        except Exception as exc:  # a tool bug or an unexpected OS error must not end the turn
            outcome = ToolOutcome.error(f"{self.name} failed: {type(exc).__name__}: {exc}")
        outcome.model_content = cap_text(outcome.model_content, ctx.limits.result_cap_chars)
        if outcome.is_error:
            _cap_error_copies(outcome, ctx.limits.result_cap_chars)
        if self.masks_output:
            outcome = _masked(outcome)
        return outcome

    def spec(self) -> JsonDict:
        """The tool as the model sees it."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def _default_access_kind(self) -> AccessKind:
        return {
            "read": AccessKind.READ,
            "search": AccessKind.READ,
            "fetch": AccessKind.FETCH,
            "edit": AccessKind.WRITE,
            "delete": AccessKind.WRITE,
            "move": AccessKind.WRITE,
        }.get(self.kind, AccessKind.EXECUTE)

    @abc.abstractmethod
    def _title(self, tool_input: JsonDict) -> str: ...

    def _locations(self, tool_input: JsonDict, ctx: ToolContext) -> list[JsonDict]:
        return []

    async def _preview(self, tool_input: JsonDict, ctx: ToolContext) -> list[JsonDict]:
        return []

    @abc.abstractmethod
    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access: ...

    @abc.abstractmethod
    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome: ...
