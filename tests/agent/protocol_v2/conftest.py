"""Fixtures for the v2 protocol tests: a scripted model server and the stdio harness."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn

from tests.agent.protocol_v2.v2_script import (
    ASK,
    ASK_CHOICES,
    BASH,
    FAIL,
    FINAL_TEXT,
    LONG_BASH,
    LONG_BASH_COMMAND,
    RAN_TEXT,
    RETRY,
    SLOW,
    WRITE,
    WRITTEN_TEXT,
)


def _last_message_is_tool_result(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    content = messages[-1].get("content") if messages else None
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            texts = [b.get("text", "") for b in content if b.get("type") == "text"]
            if texts:
                return str(texts[-1])
        elif message.get("role") == "user" and isinstance(content, str):
            return content
    return ""


#: Prompts of ``RETRY`` turns whose first model request already failed once.
_RETRIED: set[str] = set()


def route(body: dict[str, Any]) -> Turn | dict[str, Any]:
    if _last_message_is_tool_result(body):
        if _last_user_text(body).startswith(BASH):
            return Turn().text(RAN_TEXT)
        return Turn().text(FINAL_TEXT, chunks=2)
    if _last_user_text(body).startswith(BASH):
        return Turn().tool_use("bash", {"command": _last_user_text(body)[len(BASH) :].strip()})
    if _last_user_text(body).startswith(SLOW):
        return Turn().text("tick " * 200, chunks=200).timing(chunk_delay=0.05)
    text = _last_user_text(body)
    if text.startswith(RETRY) and text not in _RETRIED:
        _RETRIED.add(text)
        return Turn().http_error(529, "Overloaded")
    if text.startswith(FAIL):
        return Turn().http_error(400, "This request is not acceptable.")
    if _last_user_text(body).startswith(LONG_BASH):
        return Turn().tool_use("bash", {"command": LONG_BASH_COMMAND}, id="long_bash")
    if _last_user_text(body).startswith(ASK):
        return Turn().tool_use("ask_user", {"question": "Which region?", "choices": ASK_CHOICES})
    if _last_user_text(body).startswith(WRITE):
        return Turn().tool_use("write_file", {"path": "main.tf", "content": WRITTEN_TEXT})
    return {"echo": True}


@pytest.fixture(scope="module")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(route) as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"
