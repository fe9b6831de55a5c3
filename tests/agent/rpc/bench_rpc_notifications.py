"""Micro-benchmark: notifications per second through Connection and its FIFO writer.

Not a test (no assertions on time). Run:

    python tests/agent/rpc/bench_rpc_notifications.py [count]

"memory": one handler sends ``count`` session/update-sized notifications, then answers; the
far end of an in-memory stream drains the bytes. "stdio": the same through a real subprocess
and OS pipe (tests/agent/rpc/rpc_stdio_server.py), read by this process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from iac_code.rpc import RequestContext
from iac_code.rpc.memory import raw_peer_connection

UPDATE = {
    "sessionId": "sess_0123456789abcdef",
    "update": {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "token "},
    },
}


class Streamer:
    async def handle_request(self, ctx: RequestContext, method: str, params: Any) -> object:
        for _ in range(params["count"]):
            await ctx.connection.send_notification("session/update", UPDATE)
        return {"stopReason": "end_turn"}

    async def handle_notification(self, method: str, params: object) -> None:
        return None


async def bench_memory(count: int) -> float:
    connection, peer = raw_peer_connection(Streamer())
    async with anyio.create_task_group() as group:
        group.start_soon(connection.serve)
        started = time.perf_counter()
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "stream", "params": {"count": count}})
        lines = 0
        while lines < count + 1:
            lines += (await peer.from_connection.receive()).count(b"\n")
        elapsed = time.perf_counter() - started
        peer.close_input()
    return count / elapsed


def bench_stdio(count: int) -> float:
    server = Path(__file__).with_name("rpc_stdio_server.py")
    request = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "stream", "params": {"count": count}}
    )
    process = subprocess.Popen(
        [sys.executable, str(server)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    # Warm up (imports, first request) before timing.
    process.stdin.write(b'{"jsonrpc":"2.0","id":0,"method":"echo"}\n')
    process.stdin.flush()
    process.stdout.readline()
    started = time.perf_counter()
    process.stdin.write(request.encode() + b"\n")
    process.stdin.flush()
    for _ in range(count + 1):
        process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=10)
    return count / elapsed


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print(f"memory: {anyio.run(bench_memory, count):,.0f} notifications/s ({count:,} frames)")
    print(f"stdio:  {bench_stdio(count):,.0f} notifications/s ({count:,} frames, real pipe)")


if __name__ == "__main__":
    main()
