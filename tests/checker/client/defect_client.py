"""A raw-NDJSON ACP client with one seeded defect (``--defect NAME``), for the client checks.

Without a defect it is a plain, correct client: initialize, session/new, one prompt, and an
answer to every agent request until the prompt is answered.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from typing import Any


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    parser.add_argument("--defect", default="")
    args = parser.parse_args()
    if args.defect == "exit-at-once":
        print("defect client: giving up at once", file=sys.stderr)
        return 4
    agent = subprocess.Popen(shlex.split(args.agent), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin and agent.stdout

    def send(message: dict[str, Any]) -> None:
        agent.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        agent.stdin.flush()  # type: ignore[union-attr]

    def answer(request_id: Any) -> Any:
        while line := agent.stdout.readline():  # type: ignore[union-attr]
            msg = json.loads(line)
            if msg.get("id") == request_id and "method" not in msg:
                return msg
            handle(msg)
        return None

    def handle(msg: dict[str, Any]) -> None:
        params = msg.get("params") or {}
        if msg.get("method") == "session/update":
            kind = params.get("update", {}).get("sessionUpdate")
            if args.defect == "crash-unknown" and kind not in ("agent_message_chunk",):
                raise SystemExit(f"defect client: unknown update kind {kind!r}")
            return
        if "id" not in msg:
            return
        echo = 999 if args.defect == "no-echo" else msg["id"]
        if msg["method"] == "session/request_permission":
            option = (
                "no-such-option"
                if args.defect == "bad-option"
                else params["options"][0]["optionId"]
            )
            result: Any = {"outcome": {"outcome": "selected", "optionId": option}}
        else:
            result = {}
        send({"jsonrpc": "2.0", "id": echo, "result": result})

    if args.defect == "garbage":
        agent.stdin.write(b"this is not json\n")
        agent.stdin.flush()
    if args.defect == "huge-line":  # 64 MiB in one line, over the checker's line cap
        for _ in range(64):
            agent.stdin.write(b"x" * (1024 * 1024))
        agent.stdin.write(b"\n")
        agent.stdin.flush()
    if args.defect == "deep":
        agent.stdin.write(b"[" * 200_000 + b"]" * 200_000 + b"\n")
        agent.stdin.flush()
    if args.defect == "surrogate":
        agent.stdin.write(b'{"jsonrpc":"2.0","method":"_note","params":{"t":"\\ud800"}}\n')
        agent.stdin.flush()
    if args.defect == "before-init":
        send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "session/new",
                "params": {"cwd": "/", "mcpServers": []},
            }
        )
        answer(0)
    send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
    )
    answer(1)
    if args.defect == "hang":
        agent.stdout.read()  # type: ignore[union-attr]  # waits for an agent that waits too
    import os

    send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": os.getcwd(), "mcpServers": []},
        }
    )
    session = answer(2)["result"]["sessionId"]
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
    answer(3)
    agent.stdin.close()
    agent.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
