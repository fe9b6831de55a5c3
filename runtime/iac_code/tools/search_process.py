"""Agent side of the bounded search: runs one request in a killable child process.

Why a process and not a thread: a backtracking regex holds the GIL for as long as it runs,
so a thread would still freeze the event loop (no request answered, stdin EOF ignored), and
a thread cannot be stopped. A child process can be killed at the deadline or when the tool
call is cancelled. (A linear-time engine such as RE2 was considered; it rejects parts of
Python's regex syntax the tool documents, and would still leave glob matching and the walk of
a huge tree unbounded, so the worker process is the one mechanism for all three.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anyio
import anyio.abc

JsonDict = dict[str, Any]

WORKER_ARGV = (sys.executable, "-m", "iac_code.tools.search_worker")
# A worker answer larger than this is treated as a failure (results are capped well below).
_MAX_ANSWER_BYTES = 64 * 1024 * 1024


class SearchTimeout(Exception):
    """The worker did not finish before the deadline and was killed."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"timed out after {timeout_s:g} s")
        self.timeout_s = timeout_s


class SearchFailed(Exception):
    """The worker could not run the request; the message says why (for the model)."""


async def _spawn() -> anyio.abc.Process:
    return await anyio.open_process(
        list(WORKER_ARGV),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


async def _exchange(process: anyio.abc.Process, payload: bytes) -> bytes:
    assert process.stdin is not None and process.stdout is not None
    await process.stdin.send(payload)
    await process.stdin.aclose()
    answer = bytearray()
    async for chunk in process.stdout:
        answer += chunk
        if len(answer) > _MAX_ANSWER_BYTES:
            raise SearchFailed("the search produced too much output")
    await process.wait()
    return bytes(answer)


async def run_search(request: JsonDict, timeout_s: float) -> JsonDict:
    """Run ``request`` in a fresh worker; its ``result`` dict, or raise.

    Raises :class:`SearchTimeout` when ``timeout_s`` passes, :class:`SearchFailed` when the
    worker reports an error or dies. The worker is killed (and reaped) whenever this returns
    early, including when the caller is cancelled.
    """
    payload = json.dumps(request).encode("utf-8")
    process = await _spawn()
    try:
        with anyio.move_on_after(timeout_s) as deadline:
            raw = await _exchange(process, payload)
        if deadline.cancelled_caught:
            raise SearchTimeout(timeout_s)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
        raise SearchFailed(f"the search worker stopped unexpectedly ({exc})") from None
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise SearchFailed(f"the search worker failed (exit code {process.returncode})")
    if not answer.get("ok"):
        raise SearchFailed(str(answer.get("error") or "the search failed"))
    result = answer.get("result")
    if not isinstance(result, dict):
        raise SearchFailed("the search worker gave no result")
    return result
