"""``iac-code-dev demo``: one short session end to end, offline.

Starts the scripted model server (``acp_scripted_llm``) on 127.0.0.1, starts
``iac-code acp`` as a real subprocess pointed at it, and plays the client: initialize, a new
session in a temporary workspace, a prompt whose scripted answer writes ``main.tf`` (the
permission request is approved), then ``session/load`` in a second process to show the
replay. Every message is printed, one line each, so the wire can be read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from queue import Empty, Queue
from typing import Any

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

_TIMEOUT = 20.0


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


class _Agent:
    """A raw NDJSON client over a real ``iac-code acp`` subprocess."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "iac_code.cli", "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self._lines: Queue[bytes] = Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._next_id = 0

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        print(f"→ {_short(message)}")
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=_TIMEOUT)
        except Empty:
            raise SystemExit("demo: the agent did not answer in time") from None
        if not line:
            raise SystemExit("demo: the agent closed its output")
        message: dict[str, Any] = json.loads(line)
        print(f"← {_short(message)}")
        return message

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise SystemExit(f"demo: {method} failed: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result
            if message.get("method") == "session/request_permission":
                # The user clicks "Allow once".
                answer = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return -9


def _short(message: dict[str, Any], limit: int = 160) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main() -> int:
    from acp_scripted_llm import ScriptedLLMServer

    with (
        tempfile.TemporaryDirectory(prefix="iac-code-demo-") as tmp,
        ScriptedLLMServer(_script()) as llm,
    ):
        workspace = Path(tmp, "workspace")
        workspace.mkdir()
        env = dict(
            os.environ,
            ANTHROPIC_BASE_URL=llm.url,
            ANTHROPIC_API_KEY="offline-demo",
            IAC_CODE_HOME=str(Path(tmp, "home")),
        )
        print(f"# scripted model server at {llm.url}; workspace {workspace}\n")
        agent = _Agent(env, workspace)
        agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session_id = agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})[
            "sessionId"
        ]
        prompt = [{"type": "text", "text": "Create a private S3 bucket for logs in Terraform."}]
        result = agent.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
        code = agent.close()
        written = (workspace / "main.tf").read_text() if (workspace / "main.tf").exists() else ""
        stop = result["stopReason"]
        print(f"\n# stop reason: {stop}; main.tf written: {written == _MAIN_TF}; exit {code}")

        print("\n# a new process loads the session and replays it:\n")
        again = _Agent(env, workspace)
        again.request("initialize", {"protocolVersion": 1})
        again.request(
            "session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        )
        again.close()
        ok = result["stopReason"] == "end_turn" and written == _MAIN_TF
        print("\n# demo " + ("succeeded" if ok else "FAILED"))
        return 0 if ok else 1
