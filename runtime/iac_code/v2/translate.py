"""Pure mappings from the agent's v1 shapes to v2 shapes (and v2 params to v1 params).

Only what differs between the versions is touched; everything else is passed on as it is.
Each function returns a new value and never mutates its argument, because the agent keeps
and persists the v1 dicts it hands out.
"""

from __future__ import annotations

import difflib
import uuid
from collections.abc import Iterable
from typing import Any

#: v1 update kinds with no v2 counterpart; they are not sent on a v2 connection (v2 has no
#: modes; notices and compaction updates exist in both and pass unchanged).
DROPPED_UPDATE_KINDS = frozenset({"current_mode_update"})

#: The agent keeps one plan per session, so every plan update names the same plan.
PLAN_ID = "plan"

_CHUNK_KINDS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})


def command(v1: dict[str, Any]) -> dict[str, Any]:
    """A v1 available command as a v2 ``command`` entry (its input gains a ``text`` tag)."""
    entry: dict[str, Any] = {"type": "command", **v1}
    hint = v1.get("input")
    if isinstance(hint, dict) and "hint" in hint:
        entry["input"] = {"type": "text", **hint}
    return entry


def commands(v1: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [command(item) for item in v1]


def config_option(v1: dict[str, Any]) -> dict[str, Any]:
    """``id`` became ``configId`` (and a select group's ``group`` became ``groupId``)."""
    option = {("configId" if key == "id" else key): value for key, value in v1.items()}
    options = option.get("options")
    if isinstance(options, list):
        option["options"] = [
            {("groupId" if key == "group" else key): value for key, value in item.items()}
            if isinstance(item, dict) and "group" in item
            else item
            for item in options
        ]
    return option


def config_options(v1: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [config_option(item) for item in v1]


def diff_content(v1: dict[str, Any]) -> dict[str, Any]:
    """A v1 diff (path, oldText, newText) as a v2 diff: one file change plus a git patch."""
    path = v1["path"]
    old_text = v1.get("oldText")
    new_text = v1.get("newText", "")
    operation = "add" if old_text is None else "modify"
    content: dict[str, Any] = {
        "type": "diff",
        "changes": [{"operation": operation, "path": path, "fileType": "text"}],
        "patch": {"format": "git_patch", "text": _git_patch(path, old_text, new_text)},
    }
    if "_meta" in v1:
        content["_meta"] = v1["_meta"]
    return content


def _git_patch(path: str, old_text: str | None, new_text: str) -> str:
    """One ``diff --git`` section with absolute paths, as the v2 ``git_patch`` format asks."""
    header = [f"diff --git {path} {path}\n"]
    if old_text is None:
        header.append("new file mode 100644\n")
    old_lines = [] if old_text is None else old_text.splitlines(keepends=True)
    hunks = difflib.unified_diff(
        old_lines,
        new_text.splitlines(keepends=True),
        fromfile="/dev/null" if old_text is None else path,
        tofile=path,
    )
    lines = [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in hunks
    ]
    return "".join(header + lines)


def tool_call_content(v1: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [diff_content(item) if item.get("type") == "diff" else item for item in v1]


#: The final statuses of a tool call; after one of them nothing can be stopped any more.
_FINAL_TOOL_STATUSES = frozenset({"completed", "failed"})


def tool_call(v1: dict[str, Any]) -> dict[str, Any]:
    """A v1 ``tool_call`` or ``tool_call_update`` body as a v2 tool call upsert.

    The agent can stop every call whose tool is running (``tool_call/cancel``), so the
    ``in_progress`` update offers ``capabilities.cancel`` and the final one withdraws it. A
    call the client stopped ends ``failed`` in v1 terms with a mark; v2 says ``cancelled``.
    """
    body = {key: value for key, value in v1.items() if key != "sessionUpdate"}
    if isinstance(body.get("content"), list):
        body["content"] = tool_call_content(body["content"])
    status = body.get("status")
    if status == "in_progress":
        body["capabilities"] = {"cancel": {}}
    elif status in _FINAL_TOOL_STATUSES:
        body["capabilities"] = {}
        if _stopped_by_client(body):
            body["status"] = "cancelled"
    return body


def _stopped_by_client(body: dict[str, Any]) -> bool:
    meta = body.get("_meta")
    ours = meta.get("iac_code") if isinstance(meta, dict) else None
    return isinstance(ours, dict) and ours.get("stoppedByClient") is True


def update(v1: dict[str, Any]) -> dict[str, Any] | None:
    """A v1 ``session/update`` payload in v2 shape, or None when v2 has no such update."""
    kind = v1.get("sessionUpdate")
    if kind in DROPPED_UPDATE_KINDS:
        return None
    if kind in ("tool_call", "tool_call_update"):
        return {"sessionUpdate": "tool_call_update", **tool_call(v1)}
    if kind == "plan":
        entries = v1.get("entries", [])
        plan = {"type": "items", "planId": PLAN_ID, "entries": entries}
        return {"sessionUpdate": "plan_update", "plan": plan}
    if kind == "available_commands_update":
        return {**v1, "availableCommands": commands(v1.get("availableCommands", []))}
    if kind == "config_option_update":
        return {**v1, "configOptions": config_options(v1.get("configOptions", []))}
    if kind in _CHUNK_KINDS and not v1.get("messageId"):
        # v2 requires every chunk to name its message; a chunk without one is its own message.
        return {**v1, "messageId": new_message_id()}
    return v1


#: Chunk kind → the whole-message update kind of the same message.
_WHOLE_MESSAGE_KINDS = {
    "user_message_chunk": "user_message",
    "agent_message_chunk": "agent_message",
    "agent_thought_chunk": "agent_thought",
}


def message_start(v2: dict[str, Any], seen: set[str]) -> dict[str, Any] | None:
    """The whole-message update that must precede the v2 chunk ``v2`` in a replay, if any.

    ``seen`` holds the message ids already introduced (it is updated): a chunk of a new id
    gets ``{<message kind>, messageId, content: []}``; a whole-message update counts as its
    own introduction; anything else needs nothing.
    """
    kind = v2.get("sessionUpdate")
    message_id = v2.get("messageId")
    if not isinstance(message_id, str):
        return None
    if kind in _WHOLE_MESSAGE_KINDS.values():
        seen.add(message_id)
        return None
    whole = _WHOLE_MESSAGE_KINDS.get(kind)  # type: ignore[arg-type]
    if whole is None or message_id in seen:
        return None
    seen.add(message_id)
    return {"sessionUpdate": whole, "messageId": message_id, "content": []}


def permission_request(v1: dict[str, Any]) -> dict[str, Any]:
    """v1 ``session/request_permission`` params (a tool call) as v2 params (a subject)."""
    call = tool_call(v1["toolCall"])
    params: dict[str, Any] = {
        "sessionId": v1["sessionId"],
        "title": call.get("title") or "Allow this tool call?",
        "subject": {"type": "tool_call", "toolCall": call},
        "options": v1["options"],
    }
    if "_meta" in v1:
        params["_meta"] = v1["_meta"]
    return params


def mcp_server(v2: dict[str, Any]) -> dict[str, Any]:
    """A v2 MCP server entry as v1 params: stdio loses its tag and gets its list defaults."""
    if v2.get("type") == "stdio":
        server = {key: value for key, value in v2.items() if key != "type"}
        server.setdefault("args", [])
        server.setdefault("env", [])
        return server
    if v2.get("type") == "http":
        return {"headers": [], **v2}
    return v2


def session_params(v2: dict[str, Any]) -> dict[str, Any]:
    """Params of v2 ``session/new`` or ``session/resume`` as the v1 handler expects them."""
    params = {key: value for key, value in v2.items() if key != "replayFrom"}
    params["mcpServers"] = [mcp_server(server) for server in v2.get("mcpServers") or []]
    return params


def session_result(v1: dict[str, Any], available: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A v1 session result as v2: no modes, ``configId`` options, the command list included."""
    result = {key: value for key, value in v1.items() if key != "modes"}
    result["configOptions"] = config_options(v1.get("configOptions") or [])
    result["availableCommands"] = commands(available)
    return result


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"
