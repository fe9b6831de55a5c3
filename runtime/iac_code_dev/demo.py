"""``iac-code-dev demo``: one short session end to end, offline.

Starts the scripted model server (``acp_scripted_llm``) on 127.0.0.1, starts
``iac-code acp`` as a real subprocess pointed at it, and plays the client: initialize, a new
session in a temporary workspace, a prompt whose scripted answer writes ``main.tf`` (the
permission request is approved), then ``session/load`` in a second process to show the
replay. Every message is printed, one line each, so the wire can be read. The client is the
shared one the tests use (:mod:`iac_code_dev.wire_client`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from .wire_client import AgentProcess, WireError, allow_once, open_agent_process

_MAIN_TF = """\
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 5.0" }
  }
}

resource "aws_s3_bucket" "logs" {
  bucket = "example-logs"
}

resource "aws_s3_bucket_public_access_block" "logs" {
  bucket                  = aws_s3_bucket.logs.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}
"""

_TIMEOUT = 120.0


def _script() -> list[Any]:
    from acp_scripted_llm.script import Turn

    return [
        Turn()
        .thinking("The user wants a private S3 bucket for logs; write main.tf.")
        .text("I'll create `main.tf` with a logs bucket and a public access block.", chunks=4)
        .tool_use("write_file", {"path": "main.tf", "content": _MAIN_TF}, id="toolu_demo_write")
        .stop("tool_use"),
        Turn()
        .text(
            "Done: `main.tf` defines `aws_s3_bucket.logs` with all public access blocked.", chunks=6
        )
        .stop("end_turn"),
    ]


def _short(message: dict[str, Any], limit: int = 160) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_message(direction: str, message: Any) -> None:
    print(f"{'→' if direction == 'sent' else '←'} {_short(message)}")


@asynccontextmanager
async def _agent(env: dict[str, str], cwd: Path) -> AsyncIterator[AgentProcess]:
    """``iac-code acp`` with every message printed; the user clicks "Allow once"."""
    async with open_agent_process(
        env=env, cwd=cwd, handlers={"session/request_permission": allow_once}, wait_s=_TIMEOUT
    ) as agent:
        agent.client.observers.append(_print_message)
        yield agent


async def _close(agent: AgentProcess) -> int:
    await agent.close_stdin()
    try:
        return await agent.wait_exit(5)
    except TimeoutError:
        agent.kill()
        return -9


async def _run(env: dict[str, str], workspace: Path) -> int:
    async with _agent(env, workspace) as agent:
        client = agent.client
        await client.initialize()
        session_id = await client.new_session(workspace)
        text = "Create a private S3 bucket for logs in Terraform."
        result = await client.prompt(session_id, text)
        code = await _close(agent)
    written = (workspace / "main.tf").read_text() if (workspace / "main.tf").exists() else ""
    stop = result["stopReason"]
    print(f"\n# stop reason: {stop}; main.tf written: {written == _MAIN_TF}; exit {code}")

    print("\n# a new process loads the session and replays it:\n")
    async with _agent(env, workspace) as again:
        await again.client.request("initialize", {"protocolVersion": 1})
        await again.client.load_session(session_id, workspace)
        await _close(again)
    ok = stop == "end_turn" and written == _MAIN_TF
    print("\n# demo " + ("succeeded" if ok else "FAILED"))
    return 0 if ok else 1


def run_offline(
    script: list[Any],
    run: Callable[[dict[str, str], Path], Awaitable[int]],
    prepare: Callable[[Path], None] | None = None,
) -> int:
    """Serve ``script`` from the scripted model server, make a temporary workspace (filled
    by ``prepare``) and agent home, and ``run(env, workspace)`` with an environment that
    points ``iac-code acp`` at that server."""
    from acp_scripted_llm import ScriptedLLMServer

    with (
        tempfile.TemporaryDirectory(prefix="iac-code-demo-") as tmp,
        ScriptedLLMServer(script) as llm,
    ):
        workspace = Path(tmp, "workspace")
        workspace.mkdir()
        if prepare is not None:
            prepare(workspace)
        env = dict(
            os.environ,
            ANTHROPIC_BASE_URL=llm.url,
            ANTHROPIC_API_KEY="offline-demo",
            IAC_CODE_HOME=str(Path(tmp, "home")),
        )
        print(f"# scripted model server at {llm.url}; workspace {workspace}\n")
        try:
            return anyio.run(run, env, workspace)
        except TimeoutError:
            raise SystemExit("demo: the agent did not answer in time") from None
        except WireError as exc:
            raise SystemExit(f"demo: {exc}") from None


def main() -> int:
    return run_offline(_script(), _run)
