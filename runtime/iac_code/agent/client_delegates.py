"""The client's file system and terminals, offered to tools only when advertised (SPEC §5).

Each adapter turns a tool's call into the matching agent→client request. A capability the
client did not advertise yields ``None``, and the tool then works locally: the agent never
calls a client method the client did not offer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: Sends one agent→client request and returns its result (``AgentPort.request_client``).
RequestClient = Callable[[str, dict[str, Any]], Awaitable[Any]]


class _ClientFs:
    def __init__(self, request: RequestClient, session_id: str) -> None:
        self._request = request
        self._session_id = session_id

    async def read_text_file(self, path: str, line: int | None, limit: int | None) -> str:
        params: dict[str, Any] = {"sessionId": self._session_id, "path": path}
        if line is not None:
            params["line"] = line
        if limit is not None:
            params["limit"] = limit
        result = await self._request("fs/read_text_file", params)
        content = result.get("content") if isinstance(result, dict) else None
        if not isinstance(content, str):
            raise OSError("the client answered fs/read_text_file without text content")
        return content

    async def write_text_file(self, path: str, content: str) -> None:
        await self._request(
            "fs/write_text_file", {"sessionId": self._session_id, "path": path, "content": content}
        )


class _ClientTerminals:
    def __init__(self, request: RequestClient, session_id: str) -> None:
        self._request = request
        self._session_id = session_id

    async def _call(self, method: str, **params: Any) -> dict[str, Any]:
        result = await self._request(method, {"sessionId": self._session_id, **params})
        return result if isinstance(result, dict) else {}

    async def create(
        self,
        command: str,
        args: list[str],
        cwd: str,
        env: list[dict[str, str]],
        output_byte_limit: int,
    ) -> str:
        params: dict[str, Any] = {
            "command": command,
            "args": args,
            "cwd": cwd,
            "outputByteLimit": output_byte_limit,
        }
        if env:
            params["env"] = env
        result = await self._call("terminal/create", **params)
        terminal_id = result.get("terminalId")
        if not isinstance(terminal_id, str):
            raise OSError("the client answered terminal/create without a terminalId")
        return terminal_id

    async def wait_for_exit(self, terminal_id: str) -> tuple[int | None, str | None]:
        result = await self._call("terminal/wait_for_exit", terminalId=terminal_id)
        return result.get("exitCode"), result.get("signal")

    async def output(self, terminal_id: str) -> tuple[str, bool, dict[str, Any] | None]:
        result = await self._call("terminal/output", terminalId=terminal_id)
        return (
            str(result.get("output", "")),
            bool(result.get("truncated", False)),
            result.get("exitStatus"),
        )

    async def kill(self, terminal_id: str) -> None:
        await self._call("terminal/kill", terminalId=terminal_id)

    async def release(self, terminal_id: str) -> None:
        await self._call("terminal/release", terminalId=terminal_id)


class _ClientElicitation:
    """Form elicitations tied to this session (and to the tool call that asks)."""

    def __init__(self, request: RequestClient, session_id: str) -> None:
        self._request = request
        self._session_id = session_id

    async def ask(self, tool_call_id: str, message: str, schema: dict[str, Any]) -> Any:
        from acp_bindings.models import CreateElicitationRequest

        params = {
            "sessionId": self._session_id,
            "toolCallId": tool_call_id,
            "mode": "form",
            "message": message,
            "requestedSchema": schema,
        }
        # What we send is checked against the protocol's shapes first (ValueError if not).
        CreateElicitationRequest.model_validate(params)
        return await self._request("elicitation/create", params)


def client_accepts_forms(caps: Mapping[str, Any]) -> bool:
    """``clientCapabilities.elicitation.form`` is present (an object)."""
    elicitation = caps.get("elicitation")
    return isinstance(elicitation, Mapping) and isinstance(elicitation.get("form"), Mapping)


@dataclass(frozen=True)
class ClientDelegates:
    fs_read: _ClientFs | None
    fs_write: _ClientFs | None
    terminal: _ClientTerminals | None
    elicitation: _ClientElicitation | None = None


def client_delegates(
    request: RequestClient, caps: Mapping[str, Any], session_id: str
) -> ClientDelegates:
    """The delegates for one session, given the client's advertised capabilities."""
    fs_caps = caps.get("fs") or {}
    fs = _ClientFs(request, session_id)
    return ClientDelegates(
        fs_read=fs if fs_caps.get("readTextFile") is True else None,
        fs_write=fs if fs_caps.get("writeTextFile") is True else None,
        terminal=_ClientTerminals(request, session_id) if caps.get("terminal") is True else None,
        elicitation=_ClientElicitation(request, session_id) if client_accepts_forms(caps) else None,
    )
