"""What the agent double does in each scenario (one run of the client command each).

A scenario decides the agent's side of a prompt turn: which agent→client requests it sends
(only the capabilities the client advertised), which odd-but-valid traffic it mixes in, and
how the prompt is answered. Everything is recorded by the wire; :mod:`.judge` decides.
"""

from __future__ import annotations

import os
from typing import Any, Protocol


class Wire(Protocol):
    """What a scenario needs of the double's wire (:class:`.double.Wire`): sending requests
    and notifications to the client. A protocol, so that this module does not import the
    wire's, which imports this one."""

    def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        id: Any = None,
        then: list[dict[str, Any]] | None = None,
    ) -> Any: ...

    def notify(self, method: str, params: dict[str, Any]) -> None: ...


SESSION_ID = "sess-conformance-1"
#: A file the double creates in the session's cwd and asks the client to read.
READ_FILE = "acp-conformance-read.txt"
READ_CONTENT = "line one\nline two\n"
#: A file the double asks the client to write in the session's cwd.
WRITE_FILE = "acp-conformance-write.txt"
WRITE_CONTENT = "written by the agent double\n"
#: The id the tolerance scenario gives its permission request: a string, so the client's
#: echo of a non-integer id is exercised.
STRING_ID = "perm-string-1"
UNKNOWN_KIND = "acp_conformance_unknown_kind"

PERMISSION_OPTIONS = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]

#: Scenario name → what it is for (``acp-conformance client --help`` and the report).
SCENARIOS = {
    "baseline": "a turn that uses every advertised client capability and asks a permission",
    "tolerance": "unknown update kinds, _meta fields, updates interleaved with a string-id request",
    "prompt-error": "the prompt is answered with a -32603 internal error",
    "cancel": "a permission request left pending while the client cancels "
    "(the client needs its own args for this, see {scenario})",
    "load": "the client loads an earlier session, whose history is replayed as updates before "
    "the answer, then prompts in it (the client needs its own args for this, see {scenario})",
}
#: The id the recipes load in the load scenario (any id works: the double replays for it).
EARLIER_SESSION_ID = "sess-conformance-earlier"


def update(kind: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": kind, **fields}


def chunk(kind: str, text: str) -> dict[str, Any]:
    return update(kind, content={"type": "text", "text": text})


class Script:
    """The agent's side of one scenario."""

    def __init__(self, name: str) -> None:
        self.name = name
        #: The session the turn's updates and requests name: the created one, or the one
        #: the client loaded.
        self.session_id: Any = SESSION_ID

    def initialize_result(self) -> dict[str, Any]:
        return {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": True},
            "authMethods": [],
            "agentInfo": {"name": "acp-conformance-client-double", "version": "1"},
        }

    def replay(self, wire: Wire, session_id: Any) -> None:
        """``session/load``: the history is replayed as updates before the response."""
        self.session_id = session_id
        for item in (chunk("user_message_chunk", "earlier"), chunk("agent_message_chunk", "ok")):
            wire.notify("session/update", {"sessionId": session_id, "update": item})

    def _updates(self, wire: Wire, *items: dict[str, Any]) -> None:
        for item in items:
            wire.notify("session/update", {"sessionId": self.session_id, "update": item})

    def permission(self, wire: Wire, *, id: Any = None, then: list[Any] | None = None) -> Any:
        params = {
            "sessionId": self.session_id,
            "toolCall": {"toolCallId": "call-1", "title": "Write a file", "kind": "edit"},
            "options": PERMISSION_OPTIONS,
        }
        return wire.request("session/request_permission", params, id=id, then=then)

    def run_turn(self, wire: Wire, caps: dict[str, Any], cwd: str) -> None:
        getattr(self, "turn_" + self.name.replace("-", "_"), self.turn_baseline)(wire, caps, cwd)

    def prompt_error(self) -> tuple[int, str] | None:
        return (-32603, "internal error (scripted)") if self.name == "prompt-error" else None

    def turn_baseline(self, wire: Wire, caps: dict[str, Any], cwd: str) -> None:
        self._updates(wire, chunk("agent_message_chunk", "Working on it."))
        fs_caps = caps.get("fs")
        fs: dict[str, Any] = fs_caps if isinstance(fs_caps, dict) else {}
        if fs.get("readTextFile") is True:
            path = os.path.join(cwd, READ_FILE)
            try:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(READ_CONTENT)
            except OSError:
                pass  # the judge reports a wrong or missing content
            wire.request("fs/read_text_file", {"sessionId": self.session_id, "path": path})
        if fs.get("writeTextFile") is True:
            path = os.path.join(cwd, WRITE_FILE)
            write = {"sessionId": self.session_id, "path": path, "content": WRITE_CONTENT}
            wire.request("fs/write_text_file", write)
        if caps.get("terminal") is True:
            params: dict[str, Any] = {
                "sessionId": self.session_id,
                "command": "echo",
                "args": ["hi"],
            }
            answer = wire.request("terminal/create", params)
            result = answer.get("result") if isinstance(answer, dict) else None
            if isinstance(result, dict) and isinstance(result.get("terminalId"), str):
                ref = {"sessionId": self.session_id, "terminalId": result["terminalId"]}
                wire.request("terminal/release", ref)
        self.permission(wire)
        self._updates(wire, chunk("agent_message_chunk", "Done."))

    def turn_tolerance(self, wire: Wire, caps: dict[str, Any], cwd: str) -> None:
        meta = {"acp-conformance.example": {"unknown": True}}
        self._updates(
            wire,
            {"sessionUpdate": UNKNOWN_KIND, "payload": {"x": 1}, "_meta": meta},
            {**chunk("agent_message_chunk", "with meta"), "_meta": meta},
        )
        interleaved = [
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": self.session_id, "update": chunk("agent_thought_chunk", t)},
            }
            for t in ("thinking", "still thinking")
        ]
        self.permission(wire, id=STRING_ID, then=interleaved)
        self._updates(wire, chunk("agent_message_chunk", "Done."))

    def turn_prompt_error(self, wire: Wire, caps: dict[str, Any], cwd: str) -> None:
        self._updates(wire, chunk("agent_message_chunk", "About to fail."))

    def turn_cancel(self, wire: Wire, caps: dict[str, Any], cwd: str) -> None:
        self._updates(wire, chunk("agent_message_chunk", "Asking first."))
        self.permission(wire)


def script_for(name: str) -> Script:
    return Script(name)
