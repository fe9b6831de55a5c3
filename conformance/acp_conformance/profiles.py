"""Per-agent tool vocabularies for scripted prompt turns.

The scripted LLM asks the agent to use a tool by name, and every agent names its tools
differently. A profile says how to phrase "write this file", "read this file" and "run this
command" for one agent. When an agent produces no tool call for the scripted tool use, the
tool-turn requirements are not applicable for it (the profile does not fit), not failed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ToolInput = dict[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    build: Callable[..., ToolInput]


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    write: ToolSpec | None
    read: ToolSpec | None
    shell: ToolSpec | None


PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile(
            "iac-code",
            "iac-code's own tools (the default)",
            ToolSpec("write_file", lambda path, content: {"path": path, "content": content}),
            ToolSpec("read_file", lambda path: {"path": path}),
            ToolSpec("bash", lambda command: {"command": command}),
        ),
        Profile(
            "claude-agent-acp",
            "Claude Code tool names (Write/Read/Bash)",
            ToolSpec("Write", lambda path, content: {"file_path": path, "content": content}),
            ToolSpec("Read", lambda path: {"file_path": path}),
            ToolSpec("Bash", lambda command: {"command": command}),
        ),
        Profile(
            "qwen-code",
            "qwen-code / gemini-cli tool names",
            ToolSpec("write_file", lambda path, content: {"file_path": path, "content": content}),
            ToolSpec("read_file", lambda path: {"absolute_path": path}),
            ToolSpec("run_shell_command", lambda command: {"command": command}),
        ),
        Profile(
            "none", "an agent without tools: tool-turn requirements do not apply", None, None, None
        ),
    )
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile {name!r} (known: {', '.join(PROFILES)})") from None
