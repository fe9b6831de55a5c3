"""One live session: its workspace, settings, history and the turn running in it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from iac_code.agent.options import DEFAULT_MODE, MODES, THOUGHT_LEVELS, SessionConfig

if TYPE_CHECKING:
    from iac_code.mcp import McpSessionServers
    from iac_code.store.backend import HeldSession
    from iac_code.store.errors import StoreWriteError


class RunningTurn(Protocol):
    """What the session's owner may do with the turn running in it (``agent.turn.Turn``)."""

    def cancel(self) -> None: ...
    async def cancel_and_wait(self) -> None: ...


@dataclass
class Session:
    session_id: str
    cwd: Path
    additional_directories: list[Path]
    config: SessionConfig
    models: tuple[str, ...]
    mode: str = DEFAULT_MODE
    title: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    permission_rules: list[dict[str, Any]] = field(default_factory=list)
    turn: RunningTurn | None = None
    lock: HeldSession | None = None
    #: Whether the next prompt is the session's first (its text becomes the title).
    untitled: bool = True
    #: Prompt size of the last model request, for the compaction threshold (not persisted).
    last_context_tokens: int = 0
    #: The MCP servers the client configured for this session (started in the background).
    mcp: McpSessionServers | None = None
    #: Set when a database store refused an event in a way that leaves it behind memory
    #: (taken over, unreachable): nothing more is written, and the session closes here.
    store_failure: StoreWriteError | None = None
    #: Streamed partials in ``events`` not yet in the store (written before their chunks go
    #: out, and before any later event of the session).
    unstored: list[dict[str, Any]] = field(default_factory=list)

    @property
    def roots(self) -> list[Path]:
        return [self.cwd, *self.additional_directories]

    def store_failure_again(self) -> StoreWriteError | None:
        """A new exception like :attr:`store_failure`, or None when the store has not failed.

        New each time: raising the stored object again would chain every raise's traceback
        onto it.
        """
        failure = self.store_failure
        if failure is None:
            return None
        return type(failure)(str(failure), errno=failure.errno)

    def apply_event(self, event: dict[str, Any]) -> None:
        """Fold one persisted event into the live state (used on load and as events happen)."""
        kind = event.get("type")
        if kind == "mode" and event.get("modeId") in MODES:
            self.mode = event["modeId"]
        elif kind == "config":
            config_id, value = event.get("configId"), event.get("value")
            if config_id == "model" and isinstance(value, str):
                self.config.model = value
                if value not in self.models:
                    self.models = (*self.models, value)
            elif config_id == "thought_level" and value in THOUGHT_LEVELS:
                self.config.thought_level = value
        elif kind == "permission_rule":
            self.permission_rules = [
                rule for rule in self.permission_rules if rule.get("tool") != event.get("tool")
            ]
            self.permission_rules.append({k: v for k, v in event.items() if k != "type"})
        elif kind == "user_message":
            self.untitled = False

    def release(self) -> None:
        if self.lock is not None:
            lock, self.lock = self.lock, None
            lock.release()
