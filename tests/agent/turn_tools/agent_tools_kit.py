"""End-to-end tool tests: the two ways to run the agent under the shared wire client.

The client is :class:`iac_code_dev.wire_client.WireClient` over NDJSON, so tests control
exactly what the client sends (double answers, unknown ids, malformed permission answers) and
see exactly what the agent wrote, in order. Requests from the agent are answered by per-method
handlers that run in their own tasks; a handler returning :data:`NO_ANSWER` leaves the
request unanswered.

The agent runs either in memory (:func:`in_memory_agent`: ``IacAgent`` behind ``Router`` on
an in-memory connection, with the fake model or the real ``anthropic`` SDK against the
scripted LLM server) or as a real ``iac-code acp`` subprocess (:func:`agent_process`).
Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from iac_code.agent.acp_agent import IacAgent
from iac_code.llm.contract import ModelClient
from iac_code.router import Router
from iac_code.rpc.memory import raw_peer_connection
from iac_code.settings import Settings
from iac_code_dev.wire_client import (
    CANCELLED_ANSWER,
    NO_ANSWER,
    AgentProcess,
    ErrorAnswer,
    Frame,
    Handler,
    WireClient,
    allow,
    open_agent_process,
    open_pipe_client,
    selected,
)

__all__ = ["CANCELLED_ANSWER", "NO_ANSWER", "ErrorAnswer", "Frame", "WireClient", "selected"]

WAIT_S = 120.0
"""Upper bound for any single wait on the agent; generous because CI machines are busy."""


# --- Permission answers ------------------------------------------------------------------------

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECT_ALWAYS = "reject_always"

DEFAULT_HANDLERS: dict[str, Handler] = {"session/request_permission": allow(ALLOW_ONCE)}


def answers(*results: Any) -> Handler:
    """A permission handler giving these results in turn (the last one repeats)."""
    queue = list(results)

    async def handler(client: WireClient, frame: Frame) -> Any:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return handler


async def never_answer(client: WireClient, frame: Frame) -> Any:
    return NO_ANSWER


def install_stand_in_terraform(workspace: Path) -> Path:
    """``bin/terraform`` in ``workspace`` that only records its arguments (put it first on
    PATH with ``PATH="$PWD/bin:$PATH"``); returns the record file, which exists once it ran."""
    record = workspace / "terraform-calls.txt"
    script = workspace / "bin" / "terraform"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\necho "$@" >> "{record}"\n')
    script.chmod(0o755)
    return record


# --- Final status helpers ----------------------------------------------------------------------


def final_update(client: WireClient, tool_call_id: str) -> Frame:
    """The last ``tool_call_update`` of a tool call that carries a final status."""
    finals = [
        event
        for event in client.tool_events(tool_call_id)
        if event.get("sessionUpdate") == "tool_call_update"
        and event.get("status") in ("completed", "failed")
    ]
    assert finals, f"tool call {tool_call_id} never finished: {client.tool_events(tool_call_id)}"
    return finals[-1]


def statuses(client: WireClient, tool_call_id: str) -> list[str]:
    return [event["status"] for event in client.tool_events(tool_call_id) if "status" in event]


def tool_results_in(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every ``tool_result`` block of an Anthropic messages list, by ``tool_use_id``."""
    results: dict[str, dict[str, Any]] = {}
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = block
    return results


def tool_use_ids_in(messages: list[dict[str, Any]]) -> list[str]:
    return [
        block["id"]
        for message in messages
        if message.get("role") == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]


def result_text(block: dict[str, Any]) -> str:
    """The text of a tool_result block (string content or text blocks)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def assert_every_tool_use_answered(messages: list[dict[str, Any]]) -> None:
    """SPEC §4.3: each tool_use is answered by a tool_result in the very next user message."""
    for index, message in enumerate(messages):
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        ids = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        if not ids:
            continue
        following = messages[index + 1]
        assert following["role"] == "user", following
        answered = {
            b["tool_use_id"] for b in following["content"] if b.get("type") == "tool_result"
        }
        assert set(ids) <= answered, (ids, following)


async def wait_for_file(path: Path, wait_s: float = WAIT_S) -> str:
    """Bounded poll for a non-empty file another process writes (there is no event for it)."""
    target = anyio.Path(path)
    with anyio.fail_after(wait_s):
        while True:
            if await target.exists():
                text = (await target.read_text()).strip()
                if text:
                    return text
            await anyio.sleep(0.01)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` names a process that is not a zombie."""
    try:
        stat_text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_text.rsplit(")", 1)[-1].split()[0] != "Z"


# --- Running the agent in memory ---------------------------------------------------------------


@dataclass
class InMemoryAgent:
    agent: IacAgent
    client: WireClient
    settings: Settings


@contextlib.asynccontextmanager
async def in_memory_agent(
    home: Path,
    *,
    model_client: ModelClient | None = None,
    llm_url: str | None = None,
    capabilities: Mapping[str, Any] | None = None,
    **settings: Any,
) -> AsyncIterator[InMemoryAgent]:
    """An initialized ``IacAgent`` on an in-memory connection, with a :class:`WireClient`.

    Give ``model_client`` (the in-memory fake) or ``llm_url`` (the real ``anthropic`` SDK
    against the scripted LLM server).
    """
    if llm_url is not None:
        settings = {"api_key": "test-key", "base_url": llm_url, **settings}
    config = Settings(home=home, **settings)
    connection, peer = raw_peer_connection(None)
    agent = IacAgent(config, connection, model_client=model_client)
    connection.handler = Router(agent)
    async with (
        anyio.create_task_group() as group,
        open_pipe_client(
            peer.to_connection.send, peer.from_connection.receive, handlers=DEFAULT_HANDLERS
        ) as client,
    ):
        group.start_soon(connection.serve)
        try:
            await client.initialize(capabilities)
            yield InMemoryAgent(agent, client, config)
        finally:
            with anyio.move_on_after(WAIT_S, shield=True):
                await agent.shutdown()
                # The agent never closes its model client; the SDK's HTTP pool must be closed
                # while the event loop still runs.
                closer = getattr(agent.model_client(), "aclose", None)
                if closer is not None:
                    await closer()
            group.cancel_scope.cancel()


# --- Running the agent as a subprocess ---------------------------------------------------------


def agent_environment(home: Path, llm_url: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "IAC_CODE_"))
    }
    env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=llm_url, IAC_CODE_HOME=str(home))
    return env


@contextlib.asynccontextmanager
async def agent_process(
    home: Path, llm_url: str, capabilities: Mapping[str, Any] | None = None
) -> AsyncIterator[AgentProcess]:
    """A real ``iac-code acp`` subprocess, initialized; stopped on exit if still running."""
    async with open_agent_process(
        env=agent_environment(home, llm_url), handlers=DEFAULT_HANDLERS
    ) as running:
        await running.client.initialize(capabilities)
        yield running


@dataclass
class FakeEditor:
    """A client that offers its file system and terminals (SPEC §5 delegation).

    ``buffers`` are the editor's open documents (unsaved text wins over the disk);
    ``written`` records ``fs/write_text_file`` calls; terminals print ``terminal_output``.
    """

    buffers: dict[str, str] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)
    terminal_output: str = "hello from the client terminal\n"
    terminals: dict[str, dict[str, Any]] = field(default_factory=dict)
    released: list[str] = field(default_factory=list)
    killed: list[str] = field(default_factory=list)

    CAPABILITIES = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}

    def install(self, client: WireClient) -> None:
        client.handlers.update(
            {
                "fs/read_text_file": self._read,
                "fs/write_text_file": self._write,
                "terminal/create": self._create,
                "terminal/wait_for_exit": self._wait,
                "terminal/output": self._output,
                "terminal/kill": self._kill,
                "terminal/release": self._release,
            }
        )

    async def _read(self, client: WireClient, frame: Frame) -> Any:
        params = frame["params"]
        text = self.buffers.get(params["path"])
        if text is None:
            return ErrorAnswer(-32002, "Resource not found")
        lines = text.splitlines(keepends=True)
        start = (params.get("line") or 1) - 1
        end = start + params["limit"] if params.get("limit") else None
        return {"content": "".join(lines[start:end])}

    async def _write(self, client: WireClient, frame: Frame) -> Any:
        params = frame["params"]
        self.written[params["path"]] = params["content"]
        self.buffers[params["path"]] = params["content"]
        return {}

    async def _create(self, client: WireClient, frame: Frame) -> Any:
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = frame["params"]
        return {"terminalId": terminal_id}

    async def _wait(self, client: WireClient, frame: Frame) -> Any:
        return {"exitCode": 0, "signal": None}

    async def _output(self, client: WireClient, frame: Frame) -> Any:
        return {
            "output": self.terminal_output,
            "truncated": False,
            "exitStatus": {"exitCode": 0, "signal": None},
        }

    async def _kill(self, client: WireClient, frame: Frame) -> Any:
        self.killed.append(frame["params"]["terminalId"])
        return {}

    async def _release(self, client: WireClient, frame: Frame) -> Any:
        self.released.append(frame["params"]["terminalId"])
        return {}
