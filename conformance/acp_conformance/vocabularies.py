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


def _write(name: str, path_key: str) -> ToolSpec:
    """A tool that writes ``content`` to the file named under ``path_key``."""
    return ToolSpec(name, lambda path, content: {path_key: path, "content": content})


def _read(name: str, path_key: str) -> ToolSpec:
    """A tool that reads the file named under ``path_key``."""
    return ToolSpec(name, lambda path: {path_key: path})


def _shell(name: str) -> ToolSpec:
    """A tool that runs a shell ``command``."""
    return ToolSpec(name, lambda command: {"command": command})


def _ask(name: str) -> ToolSpec:
    """A tool that asks the user ``question`` with a choice among ``choices``."""
    return ToolSpec(
        name, lambda question, *choices: {"question": question, "choices": list(choices)}
    )


#: Each agent's tool names and the key its file tools take the path under.
VOCABULARIES: dict[str, Vocabulary] = {
    vocabulary.name: vocabulary
    for vocabulary in (
        Vocabulary(
            "iac-code",
            "iac-code's own tools (the default)",
            _write("write_file", "path"),
            _read("read_file", "path"),
            _shell("bash"),
            _ask("ask_user"),
        ),
        Vocabulary(
            "claude-agent-acp",
            "Claude Code tool names (Write/Read/Bash)",
            _write("Write", "file_path"),
            _read("Read", "file_path"),
            _shell("Bash"),
        ),
        Vocabulary(
            "qwen-code",
            "qwen-code / gemini-cli tool names",
            _write("write_file", "file_path"),
            _read("read_file", "absolute_path"),
            _shell("run_shell_command"),
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
