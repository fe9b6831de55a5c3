"""The wire client for synchronous code: an agent subprocess driven from a plain thread.

:func:`blocking_agent_process` runs :func:`~.ndjson_pipes.open_agent_process` in an event loop
of its own thread (an anyio blocking portal); :class:`BlockingAgent` offers the client's
methods as blocking calls, each bounded like the async ones. Frames are collected as they
arrive, in :attr:`BlockingAgent.frames`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from .ndjson_pipes import AgentProcess, open_agent_process
from .rpc_client import Frame, Handler, Reply

__all__ = ["BlockingAgent", "blocking_agent_process"]


class BlockingAgent:
    """An agent subprocess and its client, for synchronous tests and tools."""

    def __init__(self, portal: BlockingPortal, running: AgentProcess, timeout: float) -> None:
        self._portal = portal
        self.running = running
        self.client = running.client
        self.timeout = timeout

    def _call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self._portal.call(functools.partial(func, *args, **kwargs))

    def _bound(self, timeout: float | None) -> float:
        return self.timeout if timeout is None else timeout

    # ------------------------------------------------------------------ what was seen

    @property
    def frames(self) -> list[Any]:
        return self.client.frames

    @property
    def raw_lines(self) -> list[bytes]:
        return self.running.pipe.raw_lines

    @property
    def pid(self) -> int:
        return self.running.pid

    @property
    def returncode(self) -> int | None:
        return self.running.returncode

    @property
    def stderr_text(self) -> str:
        return self.running.stderr_text

    def all_stdout_is_json(self) -> bool:
        return all(_is_json_object_line(line) for line in self.raw_lines)

    # ------------------------------------------------------------------ sending

    def send(self, message: Frame) -> None:
        self._call(self.client.send, message)

    def write(self, data: bytes) -> None:
        """Write bytes as they are (a partial line, several frames at once)."""
        self._call(self.running.pipe.send_bytes, data)

    def send_raw(self, data: bytes) -> None:
        """Write one line as it is (a newline is added when missing)."""
        self.write(data if data.endswith(b"\n") else data + b"\n")

    def start_request(self, method: str, params: Any = None, *, request_id: Any = None) -> Any:
        return self._call(self.client.start_request, method, params, request_id=request_id)

    def notify(self, method: str, params: Any = None) -> None:
        self._call(self.client.notify, method, params)

    # ------------------------------------------------------------------ waiting

    def wait_frame(
        self, predicate: Callable[[Any], bool], *, start: int = 0, timeout: float | None = None
    ) -> int:
        index: int = self._call(
            self.client.wait_frame, predicate, start=start, wait_s=self._bound(timeout)
        )
        return index

    def reply(self, request_id: Any, *, timeout: float | None = None) -> Reply:
        reply: Reply = self._call(self.client.reply, request_id, self._bound(timeout))
        return reply

    def call(self, method: str, params: Any = None, *, timeout: float | None = None) -> Reply:
        reply: Reply = self._call(self.client.call, method, params, wait_s=self._bound(timeout))
        return reply

    def wait_update(self, kind: str, *, start: int = 0, timeout: float | None = None) -> int:
        index: int = self._call(
            self.client.wait_update, kind, start=start, wait_s=self._bound(timeout)
        )
        return index

    def next_frame(self, *, timeout: float | None = None) -> Any:
        return self._call(self.client.next_frame, self._bound(timeout))

    def drain_until_eof(self, *, timeout: float | None = None) -> None:
        self._call(self.client.wait_closed, self._bound(timeout))

    # ------------------------------------------------------------------ ACP shortcuts

    def initialize(self, capabilities: Mapping[str, Any] | None = None) -> Any:
        return self._call(self.client.initialize, capabilities)

    def new_session(self, cwd: Path) -> str:
        session_id: str = self._call(self.client.new_session, cwd)
        return session_id

    def start_prompt(self, session_id: str, text: str) -> Any:
        return self._call(self.client.start_prompt, session_id, text)

    def load(self, session_id: str, cwd: Path) -> Reply:
        reply: Reply = self._call(self.client.load, session_id, cwd)
        return reply

    # ------------------------------------------------------------------ the process

    def close_stdin(self) -> None:
        self._call(self.running.close_stdin)

    def signal(self, signum: signal.Signals) -> None:
        self.running.signal(signum)

    def wait_exit(self, timeout: float = 120.0) -> int:
        code: int = self._call(self.running.wait_exit, timeout)
        return code


def _is_json_object_line(line: bytes) -> bool:
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        return False
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


@contextlib.contextmanager
def blocking_agent_process(
    command: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stderr_path: Path | None = None,
    handlers: Mapping[str, Handler] | None = None,
    refuse_unhandled: bool = False,
    timeout: float = 120.0,
    kill_at_exit: bool = True,
) -> Iterator[BlockingAgent]:
    """:func:`~.ndjson_pipes.open_agent_process` for synchronous code.

    By default the agent's requests are left for the caller to answer and the process is
    killed when the block ends."""
    with start_blocking_portal() as portal:
        manager = open_agent_process(
            command,
            env=env,
            cwd=cwd,
            stderr_path=stderr_path,
            handlers=handlers,
            refuse_unhandled=refuse_unhandled,
            wait_s=timeout,
            kill_at_exit=kill_at_exit,
        )
        with portal.wrap_async_context_manager(manager) as running:
            yield BlockingAgent(portal, running, timeout)
