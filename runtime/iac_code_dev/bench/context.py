"""What every metric needs: the agent command, a private state folder, and spawning."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._client import AgentProcess, HarnessError, Reply

# A client that advertises nothing optional: every agent under comparison takes this.
INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
    },
    "clientInfo": {"name": "iac-code-bench", "version": "1"},
}

# Nothing listens on the discard port, so a metric that forgot to start the scripted LLM
# server fails fast instead of reaching a real API.
_NO_LLM_URL = "http://127.0.0.1:9"

_INHERITED_PREFIXES = ("ANTHROPIC_", "IAC_CODE_", "OPENAI_")


def clean_environment() -> dict[str, str]:
    """This process's environment without the agent's own settings and credentials, so a
    measurement never depends on (or leaks) what the shell running the bench has set."""
    return {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED_PREFIXES)}


def default_agent_argv() -> list[str]:
    """``iac-code acp`` of the environment the bench runs in."""
    return [sys.executable, "-m", "iac_code.cli", "acp"]


@dataclass(frozen=True, slots=True)
class Workspace:
    """A metric's private folders: the agent's state home and a project to use as cwd."""

    root: Path
    home: Path
    project: Path


@dataclass(slots=True)
class BenchContext:
    agent_argv: list[str]
    root: Path
    repeat: int = 10
    compare_argv: list[str] | None = None
    timeout: float = 30.0  # default bound on one wait for an answer
    kill_trials: int = 80  # kill9: processes killed mid-turn
    seed: int = 8  # kill9: random kill moments, reproducible

    def workspace(self, name: str) -> Workspace:
        root = self.root / name
        suffix = 1
        while root.exists():
            suffix += 1
            root = self.root / f"{name}-{suffix}"
        home, project = root / "home", root / "project"
        home.mkdir(parents=True)
        project.mkdir()
        return Workspace(root=root, home=home, project=project)

    def environment(
        self, workspace: Workspace, llm_url: str | None, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        env = clean_environment()
        env.update(
            IAC_CODE_HOME=str(workspace.home),
            ANTHROPIC_API_KEY="bench",
            ANTHROPIC_BASE_URL=llm_url or _NO_LLM_URL,
            IAC_CODE_LOG_LEVEL="WARNING",
        )
        env.update(extra or {})  # a metric's own settings (a store URL, say)
        return env

    def spawn(
        self,
        workspace: Workspace,
        *,
        llm_url: str | None = None,
        argv: Sequence[str] | None = None,
        label: str = "agent",
        env: Mapping[str, str] | None = None,
    ) -> AgentProcess:
        index = len(list(workspace.root.glob(f"{label}-*.stderr"))) + 1
        return AgentProcess(
            argv or self.agent_argv,
            env=self.environment(workspace, llm_url, env),
            cwd=workspace.project,
            stderr_path=workspace.root / f"{label}-{index}.stderr",
        )


def initialize(agent: AgentProcess, timeout: float = 30.0) -> Reply:
    reply = agent.request("initialize", INITIALIZE_PARAMS, timeout=timeout)
    if reply.error is not None:
        raise HarnessError(f"initialize failed: {reply.error}")
    return reply


def wait_until_ready(agent: AgentProcess, timeout: float = 30.0) -> Reply:
    """Round-trip a request every agent must answer (an unknown extension method) so that
    later timings do not include a runtime that is still loading in the background."""
    return agent.request("_iac_code/bench_ping", {}, timeout=timeout)


def new_session(agent: AgentProcess, cwd: Path, timeout: float = 30.0) -> str:
    reply = agent.request("session/new", {"cwd": str(cwd), "mcpServers": []}, timeout=timeout)
    if reply.error is not None or not isinstance(reply.result, dict):
        raise HarnessError(f"session/new failed: {reply.error or reply.result}")
    return str(reply.result["sessionId"])


def prompt_params(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def text_of(update: Mapping[str, Any] | None, kind: str = "agent_message_chunk") -> str | None:
    """The text of an update of ``kind``, or None for any other update."""
    if update is None or update.get("sessionUpdate") != kind:
        return None
    content = update.get("content")
    if isinstance(content, dict) and content.get("type") == "text":
        return str(content.get("text", ""))
    return ""
