"""Answering requests when the configuration turned out unusable after ``initialize`` was
already answered (the start-up fast path answers it before the full settings are built).

The start-up check (:func:`iac_code.settings_core.check_start`) catches nearly everything
before any answer; what it cannot (the file edited in between) lands here. The editor already
holds a connection, so it gets a JSON-RPC error naming the problem for each request instead of
a process that dies with a traceback; the process ends with status 2 when stdin closes.
"""

from __future__ import annotations

import json
import os
import sys

#: JSON-RPC "internal error": nothing the client sent is wrong.
INTERNAL_ERROR = -32603


def refusal(request_id: object, problem: str) -> bytes:
    """The error answer to request ``request_id``."""
    error = {
        "code": INTERNAL_ERROR,
        "message": f"iac-code cannot run with its configuration: {problem}",
    }
    return (json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + "\n").encode()


def refuse_requests(problem: str, buffered: bytes, in_fd: int = 0, out_fd: int = 1) -> int:
    """Answer every request on ``in_fd`` (after ``buffered``) with the error until EOF."""
    print(f"iac-code: {problem}", file=sys.stderr, flush=True)
    pending = bytearray(buffered)
    while True:
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending = bytearray(rest)
            answer = _answer(line, problem)
            if answer is not None:
                view = memoryview(answer)
                while view:
                    view = view[os.write(out_fd, view) :]
        chunk = os.read(in_fd, 65536)
        if not chunk:
            return 2
        pending += chunk


def _answer(line: bytes, problem: str) -> bytes | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None  # not a request: nothing to answer
    if isinstance(message, dict) and "method" in message and "id" in message:
        return refusal(message["id"], problem)
    return None  # notifications and responses need no answer
