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
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

import iac_code

JsonDict = dict[str, Any]

# -P: never put the working directory on sys.path. The agent often runs in the user's
# repository, and a file there such as "json.py" must not be imported (and so run) by the
# worker.
WORKER_ARGV = (sys.executable, "-P", "-m", "iac_code.tools.search_worker")
# Environment variables the worker needs: the sensitive-path rules read HOME and
# IAC_CODE_HOME; the rest keeps Python's own behaviour (encoding, locale). The agent's
# credentials are deliberately not passed.
_WORKER_ENV_NAMES = ("HOME", "IAC_CODE_HOME", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONUTF8", "TMPDIR")
# A worker answer larger than this is treated as a failure (results are capped well below).
_MAX_ANSWER_BYTES = 64 * 1024 * 1024


class SearchTimeout(Exception):
    """The worker did not finish before the deadline and was killed."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"timed out after {timeout_s:g} s")
        self.timeout_s = timeout_s


class SearchFailed(Exception):
    """The worker could not run the request; the message says why (for the model)."""


def _worker_env() -> dict[str, str]:
    env = {name: os.environ[name] for name in _WORKER_ENV_NAMES if name in os.environ}
    # The worker imports this very package, from wherever the agent imported it.
    package_parent = os.fspath(Path(iac_code.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(
        [package_parent, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    return env


async def _spawn() -> anyio.abc.Process:
    return await anyio.open_process(
        list(WORKER_ARGV),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd="/",
        env=_worker_env(),
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
    # Shielded: a cancel landing inside the spawn would lose the process object, and with it
    # the chance to kill the worker.
    with anyio.CancelScope(shield=True):
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
