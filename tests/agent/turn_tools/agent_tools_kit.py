"""A test ACP client for end-to-end tool tests, and the two ways to run the agent under it.

:class:`WireClient` speaks raw NDJSON frames, so tests control exactly what the client sends
(double answers, unknown ids, malformed permission answers) and see exactly what the agent
wrote, in order. Requests from the agent are answered by per-method handlers that run in
their own tasks; a handler returning :data:`NO_ANSWER` leaves the request unanswered.

The agent runs either in memory (:func:`in_memory_agent`: ``IacAgent`` behind ``Router`` on
an in-memory connection, with the fake model or the real ``anthropic`` SDK against the
scripted LLM server) or as a real ``iac-code acp`` subprocess (:func:`agent_process`).
Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from iac_code.agent.acp_agent import IacAgent
from iac_code.llm.contract import ModelClient
from iac_code.router import Router
from iac_code.rpc.memory import raw_peer_connection
from iac_code.settings import Settings

WAIT_S = 10.0
"""Upper bound for any single wait on the agent; generous because CI machines are busy."""

NO_ANSWER = object()
"""Returned by a request handler: leave the agent's request unanswered."""


@dataclass(frozen=True)
class ErrorAnswer:
    """Returned by a request handler: answer with this JSON-RPC error."""

    code: int
    message: str


Frame = dict[str, Any]
Handler = Callable[["WireClient", Frame], Awaitable[Any]]

SendBytes = Callable[[bytes], Awaitable[None]]
ReceiveBytes = Callable[[], Awaitable[bytes]]


def selected(option_id: str) -> dict[str, Any]:
    """The ACP v1 permission answer that selects ``option_id``."""
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


CANCELLED_ANSWER = {"outcome": {"outcome": "cancelled"}}


class WireClient:
    """The client end of an ACP connection, over raw byte streams."""

    def __init__(self, send_bytes: SendBytes, receive_bytes: ReceiveBytes) -> None:
        self._send_bytes = send_bytes
        self._receive_bytes = receive_bytes
        self.frames: list[Frame] = []  # everything the agent wrote, in order
        self.agent_requests: list[Frame] = []  # the agent→client requests among them
        self.sent: list[Frame] = []  # everything this client wrote
        self.handlers: dict[str, Handler] = {"session/request_permission": allow(ALLOW_ONCE)}
        self._ids = itertools.count(1)
        self._responses: dict[Any, Frame] = {}
        self._changed = anyio.Event()
        self._task_group: anyio.abc.TaskGroup | None = None
        self.closed = False

    # ------------------------------------------------------------------ plumbing

    async def send(self, message: Frame) -> None:
        self.sent.append(message)
        await self._send_bytes(json.dumps(message).encode() + b"\n")

    async def answer(self, request_id: Any, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def read_loop(self, task_group: anyio.abc.TaskGroup) -> None:
        """Read frames until the agent's output ends; answer its requests in tasks."""
        self._task_group = task_group
        buffer = b""
        try:
            while True:
                try:
                    chunk = await self._receive_bytes()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                if not chunk:
                    return
                buffer += chunk
                while b"\n" in buffer:
                    line, _, buffer = buffer.partition(b"\n")
                    if line.strip():
                        self._on_frame(json.loads(line))
        finally:
            self.closed = True
            self._notify()

    def _on_frame(self, frame: Frame) -> None:
        self.frames.append(frame)
        if "method" in frame and "id" in frame:
            self.agent_requests.append(frame)
            assert self._task_group is not None
            self._task_group.start_soon(self._handle, frame)
        elif "id" in frame and "method" not in frame:
            self._responses[frame["id"]] = frame
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _handle(self, frame: Frame) -> None:
        handler = self.handlers.get(frame["method"])
        result = (
            await handler(self, frame)
            if handler is not None
            else ErrorAnswer(-32601, "Method not found")
        )
        if isinstance(result, ErrorAnswer):
            error = {"code": result.code, "message": result.message}
            await self.send({"jsonrpc": "2.0", "id": frame["id"], "error": error})
        elif result is not NO_ANSWER:
            await self.answer(frame["id"], result)

    async def wait_for(
        self, predicate: Callable[[], Any], wait_s: float = WAIT_S, what: str = "a condition"
    ) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked on every frame); return its value."""
        with anyio.fail_after(wait_s):
            while True:
                value = predicate()
                if value:
                    return value
                if self.closed:
                    raise AssertionError(f"the agent's output ended while waiting for {what}")
                await self._changed.wait()

    # ------------------------------------------------------------------ requests

    async def start_request(self, method: str, params: Any) -> int:
        request_id = next(self._ids)
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    async def response(self, request_id: int, wait_s: float = WAIT_S) -> Frame:
        frame: Frame = await self.wait_for(
            lambda: self._responses.get(request_id), wait_s, f"the answer to {request_id}"
        )
        return frame

    async def request(self, method: str, params: Any, wait_s: float = WAIT_S) -> Any:
        """Send a request and return its result (AssertionError on an error answer)."""
        frame = await self.response(await self.start_request(method, params), wait_s)
        assert "error" not in frame, f"{method} failed: {frame['error']}"
        return frame["result"]

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # ------------------------------------------------------------------ ACP helpers

    async def initialize(self, capabilities: Mapping[str, Any] | None = None) -> Any:
        return await self.request(
            "initialize",
            {"protocolVersion": 1, "clientCapabilities": dict(capabilities or {})},
        )

    async def new_session(self, cwd: Path, **extra: Any) -> str:
        result = await self.request("session/new", {"cwd": str(cwd), "mcpServers": [], **extra})
        return str(result["sessionId"])

    async def load_session(self, session_id: str, cwd: Path) -> Any:
        return await self.request(
            "session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
        )

    async def start_prompt(self, session_id: str, text: str) -> int:
        return await self.start_request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )

    async def prompt(self, session_id: str, text: str, wait_s: float = WAIT_S) -> Any:
        frame = await self.response(await self.start_prompt(session_id, text), wait_s)
        assert "error" not in frame, f"session/prompt failed: {frame['error']}"
        return frame["result"]

    async def set_mode(self, session_id: str, mode_id: str) -> Any:
        return await self.request("session/set_mode", {"sessionId": session_id, "modeId": mode_id})

    # ------------------------------------------------------------------ what was seen

    def updates(self, session_id: str | None = None) -> list[Frame]:
        """``update`` objects of every ``session/update`` so far (optionally one session's)."""
        return [
            frame["params"]["update"]
            for frame in self.frames
            if frame.get("method") == "session/update"
            and (session_id is None or frame["params"]["sessionId"] == session_id)
        ]

    def tool_events(self, tool_call_id: str) -> list[Frame]:
        """The ``tool_call`` / ``tool_call_update`` objects of one tool call, in order."""
        return [
            update
            for update in self.updates()
            if update.get("sessionUpdate") in ("tool_call", "tool_call_update")
            and update.get("toolCallId") == tool_call_id
        ]

    def requests_for(self, method: str) -> list[Frame]:
        return [frame for frame in self.agent_requests if frame["method"] == method]

    def agent_methods(self) -> set[str]:
        return {frame["method"] for frame in self.agent_requests}


# --- Permission answers ------------------------------------------------------------------------

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECT_ALWAYS = "reject_always"


def allow(option_id: str) -> Handler:
    """A permission handler that always selects ``option_id``."""

    async def handler(client: WireClient, frame: Frame) -> Any:
        return selected(option_id)

    return handler


def answers(*results: Any) -> Handler:
    """A permission handler giving these results in turn (the last one repeats)."""
    queue = list(results)

    async def handler(client: WireClient, frame: Frame) -> Any:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return handler


async def never_answer(client: WireClient, frame: Frame) -> Any:
    return NO_ANSWER


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
    client = WireClient(peer.to_connection.send, peer.from_connection.receive)
    async with anyio.create_task_group() as group:
        group.start_soon(connection.serve)
        group.start_soon(client.read_loop, group)
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


@dataclass
class AgentProcess:
    process: anyio.abc.Process
    client: WireClient
    home: Path

    def kill(self, signum: signal.Signals = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signum)

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    async def wait_exit(self, wait_s: float = WAIT_S) -> int:
        with anyio.fail_after(wait_s):
            return await self.process.wait()


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
    """A real ``iac-code acp`` subprocess, initialized; killed on exit if still running."""
    process = await anyio.open_process(
        [sys.executable, "-m", "iac_code.cli", "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=agent_environment(home, llm_url),
    )
    assert process.stdin is not None and process.stdout is not None
    client = WireClient(process.stdin.send, process.stdout.receive)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(client.read_loop, group)
            try:
                await client.initialize(capabilities)
                yield AgentProcess(process, client, home)
            finally:
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await process.stdin.aclose()
                with anyio.move_on_after(3):
                    await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()


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
