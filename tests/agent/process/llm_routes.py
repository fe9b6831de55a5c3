"""What the shared scripted LLM server answers, chosen by a keyword prefix of the prompt.

The server is shared by every test of a module, so it cannot hold a queue of turns (a test
that stops early would leave turns for the next one). Instead each prompt says what it
wants, and :func:`route` picks the turn from the last user text.
"""

from __future__ import annotations

from typing import Any

from acp_scripted_llm import Turn

SLOW = "SLOW:"  # streams for ~10 s unless interrupted
STREAM = "STREAM:"  # thinking plus text, in several chunks
GARBAGE = "GARBAGE:"  # a 200 answer that is not an event stream
TRUNCATE = "TRUNCATE:"  # some text, then the connection drops mid-stream
BASH = "BASH:"  # runs the rest of the prompt with the bash tool, then answers "done"

STREAMED_THOUGHT = "Reading the Terraform."
STREAMED_TEXT = "The module creates one VPC and two subnets."


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        if texts:
            return texts[-1]
    return ""


def answers_a_tool(body: dict[str, Any]) -> bool:
    """True when the last message carries tool results (the model's turn after a tool)."""
    messages = body.get("messages") or []
    content = messages[-1].get("content") if messages else None
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


def route(body: dict[str, Any]) -> Turn | dict[str, Any]:
    text = last_user_text(body)
    if text.startswith(BASH):
        if answers_a_tool(body):
            return Turn().text("done")
        return Turn().tool_use("bash", {"command": text.removeprefix(BASH).strip()})
    if text.startswith(SLOW):
        return Turn().text("tick " * 200, chunks=200).timing(chunk_delay=0.05)
    if text.startswith(STREAM):
        return Turn().thinking(STREAMED_THOUGHT, chunks=2).text(STREAMED_TEXT, chunks=4)
    if text.startswith(GARBAGE):
        return Turn().garbage()
    if text.startswith(TRUNCATE):
        return Turn().text("This answer will be cut", chunks=4).truncate_after(6)
    return {"echo": True}
