"""Shared helpers for the MCP tests: entries and configs that start the fake server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from iac_code.mcp.config import StdioServerConfig

FAKE_SERVER = Path(__file__).parent / "fixtures" / "fake_mcp_server.py"
FAKE_TOOL_NAMES = [
    "echo",
    "add",
    "slow",
    "fail",
    "picture",
    "ping_client",
    "cancellations",
    "child_pid",
    "whereami",
]


def fake_entry(name: str = "fake", *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """An ACP ``McpServerStdio`` entry that starts the fake server."""
    return {
        "name": name,
        "command": sys.executable,
        "args": [str(FAKE_SERVER), *args],
        "env": [{"name": key, "value": value} for key, value in (env or {}).items()],
    }


def fake_config(
    *args: str, name: str = "fake", env: tuple[tuple[str, str], ...] = ()
) -> StdioServerConfig:
    return StdioServerConfig(
        name=name, label=name, command=sys.executable, args=(str(FAKE_SERVER), *args), env=env
    )


def is_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def live_processes_with_env(marker: str) -> list[int]:
    """Pids of live processes whose environment contains ``marker`` (ours are readable)."""
    needle = marker.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ and is_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def text_of(result: dict[str, Any]) -> str:
    """The joined text blocks of a tools/call result."""
    return "".join(block["text"] for block in result["content"] if block["type"] == "text")
