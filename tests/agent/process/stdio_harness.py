"""``iac-code acp`` as a real subprocess, driven by the shared wire client from plain tests.

The client is :class:`iac_code_dev.wire_client.blocking_agent.BlockingAgent`: every stdout
line is kept verbatim (``raw_lines``) so tests can check that stdout carries nothing but
JSON-RPC frames, frames are collected in order as they arrive (``frames``), the agent's
requests are left for the test to answer, and every wait is bounded by a timeout.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from iac_code_dev.wire_client import Frame, agent_command
from iac_code_dev.wire_client.blocking_agent import BlockingAgent, blocking_agent_process

__all__ = [
    "BlockingAgent",
    "Frame",
    "agent_environment",
    "allow_permission",
    "run_agent",
    "run_agent_command",
    "spawn",
    "write_fast_retry_config",
]

# Generous: the first prompt of a process imports the model SDK (~2 s of CPU, several times
# that while parallel test workers share two CPUs). Only a failing test ever waits this long.
TIMEOUT = 120.0
_process_numbers = itertools.count(1)


def agent_environment(
    home: Path, llm_url: str | None, *, api_key: str | None = "test-key"
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "IAC_CODE_"))}
    env["IAC_CODE_HOME"] = str(home)
    if llm_url is not None:
        env["ANTHROPIC_BASE_URL"] = llm_url
    if api_key is not None:
        env["ANTHROPIC_API_KEY"] = api_key
    return env


def write_fast_retry_config(home: Path) -> None:
    """Retries of transient model failures wait ~nothing, so fault tests stay fast."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("retry_base_delay = 0.001\n", encoding="utf-8")


def run_agent(
    env: Mapping[str, str], *args: str, stderr_path: Path
) -> AbstractContextManager[BlockingAgent]:
    """``python -m iac_code.cli acp ARGS`` with pipes; killed when the block ends."""
    return run_agent_command(agent_command(*args), env=env, stderr_path=stderr_path)


def run_agent_command(
    command: Sequence[str], *, env: Mapping[str, str], stderr_path: Path
) -> AbstractContextManager[BlockingAgent]:
    """Any agent command line with pipes; killed when the block ends."""
    return blocking_agent_process(command, env=env, stderr_path=stderr_path, timeout=TIMEOUT)


@contextmanager
def spawn(
    home: Path, llm_url: str | None, *args: str, api_key: str | None = "test-key"
) -> Iterator[BlockingAgent]:
    """Start an agent with its state in ``home`` talking to ``llm_url``; reap it afterwards."""
    write_fast_retry_config(home)
    env = agent_environment(home, llm_url, api_key=api_key)
    stderr_path = home / f"stderr-{next(_process_numbers)}.log"
    with run_agent(env, *args, stderr_path=stderr_path) as agent:
        yield agent


def allow_permission(agent: BlockingAgent, start: int, *, timeout: float | None = None) -> None:
    """Answer the agent's next permission question (from frame ``start``) with "allow once".

    The outcome has the same shape in v1 and v2, so either version's client can use it.
    """
    index = agent.wait_frame(
        lambda f: f.get("method") == "session/request_permission", start=start, timeout=timeout
    )
    request = agent.frames[index]
    option = next(o for o in request["params"]["options"] if o["kind"] == "allow_once")
    agent.send(
        {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": option["optionId"]}},
        }
    )
