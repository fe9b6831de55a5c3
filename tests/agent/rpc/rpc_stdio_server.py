"""A tiny stdio server for the subprocess tests: it prints and spawns noisy children."""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from iac_code.rpc import Connection, RequestContext
from iac_code.rpc.stdio import serve_stdio


class NoisyHandler:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def handle_request(self, ctx: RequestContext, method: str, params: Any) -> object:
        print("stray print from a handler")
        if method == "spawn":
            # A child inheriting the standard descriptors writes to "stdout" and reads "stdin".
            child = [sys.executable, "-c", "import sys; print('child says hi'); sys.stdin.read()"]
            with anyio.fail_after(60):
                await anyio.run_process(child, stdin=None, stdout=None, stderr=None)
            return {"spawned": True}
        if method == "stream":
            for index in range(params["count"]):
                await self.connection.send_notification("update", {"index": index, "text": "x\ny"})
            return {"streamed": params["count"]}
        if method == "hang":
            await anyio.sleep_forever()
        return {"echo": params}

    async def handle_notification(self, method: str, params: object) -> None:
        print("stray print from a notification")


async def on_shutdown() -> None:
    print("on_shutdown called", file=sys.stderr, flush=True)


async def main() -> None:
    prefix = sys.argv[1].encode() if len(sys.argv) > 1 else b""
    # How long requests still in flight at end of input or SIGTERM may take: short for the
    # tests that cancel a hanging one, long for those whose requests must all finish (a
    # child process started on a loaded machine takes seconds).
    grace = float(os.environ.get("RPC_STDIO_SERVER_GRACE", "0.2"))
    await serve_stdio(NoisyHandler, prefix=prefix, on_shutdown=on_shutdown, shutdown_grace=grace)


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(0)
