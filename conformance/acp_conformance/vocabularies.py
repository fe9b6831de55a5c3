"""Per-agent tool vocabularies for scripted prompt turns (``--tools NAME``).

The scripted LLM asks the agent to use a tool by name, and every agent names its tools
differently. A vocabulary says how to phrase "write this file", "read this file" and "run
this command" for one agent. When an agent produces no tool call for the scripted tool use,
the tool-turn requirements are not applicable for it (the vocabulary does not fit), not
failed. (Rule tiers are a different thing: see :mod:`.rule_profiles`.)
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
class Vocabulary:
    name: str
    description: str
    write: ToolSpec | None
    read: ToolSpec | None
    shell: ToolSpec | None
    #: The tool that asks the user a question (an ACP elicitation), when the agent has one.
    ask: ToolSpec | None = None


def _question(question: str, choices: tuple[str, ...]) -> ToolInput:
    return {"question": question, "choices": list(choices)}


VOCABULARIES: dict[str, Vocabulary] = {
    vocabulary.name: vocabulary
    for vocabulary in (
        Vocabulary(
            "iac-code",
            "iac-code's own tools (the default)",
            ToolSpec("write_file", lambda path, content: {"path": path, "content": content}),
            ToolSpec("read_file", lambda path: {"path": path}),
            ToolSpec("bash", lambda command: {"command": command}),
            ToolSpec(
                "ask_user",
                lambda question, *choices: {"question": question, "choices": list(choices)},
            ),
        ),
        Vocabulary(
            "claude-agent-acp",
            "Claude Code tool names (Write/Read/Bash)",
            ToolSpec("Write", lambda path, content: {"file_path": path, "content": content}),
            ToolSpec("Read", lambda path: {"file_path": path}),
            ToolSpec("Bash", lambda command: {"command": command}),
        ),
        Vocabulary(
            "qwen-code",
            "qwen-code / gemini-cli tool names",
            ToolSpec("write_file", lambda path, content: {"file_path": path, "content": content}),
            ToolSpec("read_file", lambda path: {"absolute_path": path}),
            ToolSpec("run_shell_command", lambda command: {"command": command}),
        ),
        Vocabulary(
            "none", "an agent without tools: tool-turn requirements do not apply", None, None, None
        ),
    )
}


def get_vocabulary(name: str) -> Vocabulary:
    try:
        return VOCABULARIES[name]
    except KeyError:
        known = ", ".join(VOCABULARIES)
        raise KeyError(f"unknown tool vocabulary {name!r} (known: {known})") from None
