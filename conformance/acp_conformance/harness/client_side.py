"""The checker's implementation of the client side of ACP: permissions, fs and terminals.

Each scenario builds one ``ClientSide`` with its own policy and sandbox. Nothing here talks
to the wire directly: the connection hands every agent→client request to ``handle`` and
writes back whatever it returns (or nothing, for ``NO_ANSWER``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

from . import elicitation_answers
from .agent_client import NO_ANSWER, HandlerError

PermissionMode = Literal["allow", "allow_always", "reject", "reject_always", "cancel", "never"]

_KIND_PREFERENCE: dict[str, tuple[str, ...]] = {
    "allow": ("allow_once", "allow_always"),
    "allow_always": ("allow_always", "allow_once"),
    "reject": ("reject_once", "reject_always"),
    "reject_always": ("reject_always", "reject_once"),
}


@dataclass
class ClientCall:
    """One agent→client request as the client side saw it."""

    method: str
    params: Any
    answer: Any = None


@dataclass
class _Terminal:
    process: subprocess.Popen[bytes]
    output_path: Path
    byte_limit: int | None


@dataclass
class ClientSide:
    """Answers agent→client requests for one scenario inside its sandbox directory."""

    sandbox: Path
    permission: PermissionMode = "allow"
    fs_read: bool = True
    fs_write: bool = True
    terminal: bool = True
    #: Answer ``elicitation/create`` (accepting every question); only a client that
    #: advertised elicitation sets it, the others answer -32601.
    elicitation: bool = False
    calls: list[ClientCall] = field(default_factory=list)
    _terminals: dict[str, _Terminal] = field(default_factory=dict)
    _next_terminal: int = 0

    def capabilities(self) -> dict[str, Any]:
        """The ``clientCapabilities`` this client advertises in ``initialize``."""
        return {
            "fs": {"readTextFile": self.fs_read, "writeTextFile": self.fs_write},
            "terminal": self.terminal,
        }

    async def handle(self, method: str, params: Any) -> Any:
        call = ClientCall(method, params)
        self.calls.append(call)
        if not isinstance(params, dict):
            raise HandlerError(-32602, "Invalid params")
        handler = {
            "session/request_permission": self._permission,
            "fs/read_text_file": self._read_text_file,
            "fs/write_text_file": self._write_text_file,
            "terminal/create": self._terminal_create,
            "terminal/output": self._terminal_output,
            "terminal/wait_for_exit": self._terminal_wait,
            "terminal/kill": self._terminal_kill,
            "terminal/release": self._terminal_release,
            **({"elicitation/create": self._elicitation} if self.elicitation else {}),
        }.get(method)
        if handler is None:
            raise HandlerError(-32601, "Method not found", {"method": method})
        call.answer = await handler(params)
        return call.answer

    # -- permissions --------------------------------------------------------------------

    async def _permission(self, params: dict[str, Any]) -> Any:
        if self.permission == "never":
            return NO_ANSWER
        if self.permission == "cancel":
            return {"outcome": {"outcome": "cancelled"}}
        options = [o for o in params.get("options") or [] if isinstance(o, dict)]
        for kind in _KIND_PREFERENCE[self.permission]:
            for option in options:
                if option.get("kind") == kind:
                    return {"outcome": {"outcome": "selected", "optionId": option.get("optionId")}}
        # No option of a suitable kind: the safest answer is to cancel.
        return {"outcome": {"outcome": "cancelled"}}

    async def _elicitation(self, params: dict[str, Any]) -> Any:
        return elicitation_answers.accept(params)

    # -- file system --------------------------------------------------------------------

    def _sandboxed(self, raw: Any) -> Path:
        if not isinstance(raw, str) or not os.path.isabs(raw):
            raise HandlerError(-32602, "Invalid params", {"path": "must be an absolute path"})
        path = Path(os.path.realpath(raw))
        root = Path(os.path.realpath(self.sandbox))
        if path != root and root not in path.parents:
            raise HandlerError(-32602, "Invalid params", {"path": "outside the test sandbox"})
        return path

    async def _read_text_file(self, params: dict[str, Any]) -> Any:
        if not self.fs_read:
            raise HandlerError(-32601, "Method not found", {"method": "fs/read_text_file"})
        path = self._sandboxed(params.get("path"))
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise HandlerError(-32002, "Resource not found", {"uri": str(path)}) from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise HandlerError(-32603, "Internal error", {"reason": str(exc)}) from exc
        line, limit = params.get("line"), params.get("limit")
        if isinstance(line, int) or isinstance(limit, int):
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            end = start + limit if isinstance(limit, int) else None
            text = "".join(lines[start:end])
        return {"content": text}

    async def _write_text_file(self, params: dict[str, Any]) -> Any:
        if not self.fs_write:
            raise HandlerError(-32601, "Method not found", {"method": "fs/write_text_file"})
        path = self._sandboxed(params.get("path"))
        content = params.get("content")
        if not isinstance(content, str):
            raise HandlerError(-32602, "Invalid params", {"content": "must be a string"})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return {}

    # -- terminals ----------------------------------------------------------------------

    async def _terminal_create(self, params: dict[str, Any]) -> Any:
        if not self.terminal:
            raise HandlerError(-32601, "Method not found", {"method": "terminal/create"})
        command = params.get("command")
        args = params.get("args") or []
        if not isinstance(command, str) or not all(isinstance(a, str) for a in args):
            raise HandlerError(-32602, "Invalid params", {"command": "must be a string"})
        argv = [command, *args] if args else ["/bin/sh", "-c", command]
        cwd = self._sandboxed(params["cwd"]) if params.get("cwd") else self.sandbox
        env = dict(os.environ)
        for item in params.get("env") or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                env[item["name"]] = str(item.get("value", ""))
        fd, name = tempfile.mkstemp(prefix="terminal-", suffix=".out", dir=self.sandbox.parent)
        try:
            # Popen returns as soon as the child is forked; its output goes to a file, so
            # nothing here blocks the event loop for long.
            process = subprocess.Popen(  # noqa: ASYNC220
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=fd,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise HandlerError(-32603, "Internal error", {"reason": str(exc)}) from exc
        finally:
            os.close(fd)
        self._next_terminal += 1
        terminal_id = f"term-{self._next_terminal}"
        limit = params.get("outputByteLimit")
        self._terminals[terminal_id] = _Terminal(
            process, Path(name), limit if isinstance(limit, int) else None
        )
        return {"terminalId": terminal_id}

    def _lookup(self, params: dict[str, Any]) -> _Terminal:
        terminal = self._terminals.get(params.get("terminalId"))  # type: ignore[arg-type]
        if terminal is None:
            raise HandlerError(-32602, "Invalid params", {"terminalId": "unknown terminal"})
        return terminal

    @staticmethod
    def _exit_status(process: subprocess.Popen[bytes]) -> dict[str, Any] | None:
        code = process.poll()
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}

    async def _terminal_output(self, params: dict[str, Any]) -> Any:
        terminal = self._lookup(params)
        data = terminal.output_path.read_bytes()
        truncated = False
        if terminal.byte_limit is not None and len(data) > terminal.byte_limit:
            data, truncated = data[len(data) - terminal.byte_limit :], True
        result: dict[str, Any] = {
            "output": data.decode("utf-8", errors="ignore"),
            "truncated": truncated,
        }
        status = self._exit_status(terminal.process)
        if status is not None:
            result["exitStatus"] = status
        return result

    async def _terminal_wait(self, params: dict[str, Any]) -> Any:
        terminal = self._lookup(params)
        # Polling keeps the wait cancellable when the scenario ends; the scenario's
        # timeout bounds it from outside.
        while (status := self._exit_status(terminal.process)) is None:  # noqa: ASYNC110
            await anyio.sleep(0.02)
        return status

    async def _terminal_kill(self, params: dict[str, Any]) -> Any:
        self._kill(self._lookup(params))
        return {}

    async def _terminal_release(self, params: dict[str, Any]) -> Any:
        terminal = self._lookup(params)
        self._kill(terminal)
        del self._terminals[params["terminalId"]]
        return {}

    @staticmethod
    def _kill(terminal: _Terminal) -> None:
        if terminal.process.poll() is None:
            try:
                os.killpg(terminal.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            terminal.process.wait()

    def close(self) -> None:
        """Kill every terminal the agent left running."""
        for terminal in self._terminals.values():
            self._kill(terminal)
        self._terminals.clear()
