"""What the scripted model answers in the remote tests, chosen by a prefix of the prompt.

``WRITE:<name>`` asks to write a file (a tool call needing permission) and then answers
"Wrote it." once the tool result is back; ``SLOW:`` streams for seconds unless cancelled;
``CHUNKS:<n>`` streams ``n`` numbered chunks; ``BASH:<command>`` asks to run the command and
then answers "Ran it."; anything else is echoed.
"""

from __future__ import annotations

from typing import Any

from acp_scripted_llm import Turn

from tests.agent.process.llm_routes import last_user_text

WRITE = "WRITE:"
SLOW = "SLOW:"
CHUNKS = "CHUNKS:"
BASH = "BASH:"


def chunk_text(count: int) -> str:
    return "".join(f"<{i}>" for i in range(count))


def last_user_content(body: dict[str, Any]) -> list[dict[str, Any]]:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return [{"type": "text", "text": content}]
            return list(content or [])
    return []


def route(body: dict[str, Any]) -> Turn | dict[str, Any]:
    content = last_user_content(body)
    if any(block.get("type") == "tool_result" for block in content):
        return Turn().text("Ran it." if last_user_text(body).startswith(BASH) else "Wrote it.")
    text = next((b.get("text", "") for b in reversed(content) if b.get("type") == "text"), "")
    if text.startswith(BASH):
        return Turn().tool_use("bash", {"command": text[len(BASH) :].strip()})
    if text.startswith(WRITE):
        name = text[len(WRITE) :].strip() or "out.txt"
        return Turn().tool_use("write_file", {"path": name, "content": "hello\n"})
    if text.startswith(SLOW):
        return Turn().text("tick " * 200, chunks=200).timing(chunk_delay=0.05)
    if text.startswith(CHUNKS):
        count = int(text[len(CHUNKS) :].strip())
        pieces = chunk_text(count)
        return Turn().text(pieces, chunks=count)
    return {"echo": True}
