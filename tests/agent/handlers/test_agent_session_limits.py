"""Open sessions are capped per connection, idle ones hold no descriptor (issue 8, item 9)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from iac_code.store import SessionStore, new_session_id

from tests.agent.handlers.agent_harness import make_settings, open_agent

pytestmark = pytest.mark.anyio


async def test_the_session_cap_is_a_clear_invalid_params_error(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "home")
    settings = settings.with_overrides(max_open_sessions=2)
    async with open_agent(tmp_path, settings=settings) as client:
        first = await client.new_session()
        await client.new_session()
        refused = await client.call("session/new", {"cwd": str(client.workspace), "mcpServers": []})
        assert refused.error["code"] == -32602
        assert "limit 2" in refused.error["message"]
        fork = await client.call(
            "session/fork", {"sessionId": first, "cwd": str(client.workspace), "mcpServers": []}
        )
        assert fork.error["code"] == -32602
        listed = await client.call("session/list", {})
        assert len(listed.result["sessions"]) == 2  # nothing was written for the refusals

        await client.call("session/close", {"sessionId": first})
        third = await client.new_session()
        load = await client.call(
            "session/load", {"sessionId": first, "cwd": str(client.workspace), "mcpServers": []}
        )
        assert load.error["code"] == -32602
        await client.call("session/close", {"sessionId": third})
        assert "error" not in (await client.load(first)).frame


async def test_running_out_of_descriptors_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_agent(tmp_path) as client:

        def exhausted(**kwargs: Any) -> Any:
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))

        monkeypatch.setattr(client.agent.store, "list", exhausted)
        error = (await client.call("session/list", {})).error
    assert error["code"] == -32603
    assert error["message"].startswith("The agent has too many open files")
    assert error["data"] == {"errno": "EMFILE"}


def _open_descriptors(under: Path) -> int:
    """Descriptors of this process open on files below ``under``: other threads of the test
    process (a model SDK preload, worker threads) open and close files of their own meanwhile."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # closed since the listing
            continue
        count += target.startswith(str(under))
    return count


def test_locked_sessions_share_one_descriptor(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    ids = [new_session_id() for _ in range(100)]
    for session_id in ids:
        store.create(session_id, "/w")
    store.lock(ids[0]).release()  # the shared lock file is open from here on
    before = _open_descriptors(tmp_path)
    assert before >= 1  # the shared lock file: the count sees the store's descriptors
    locks = [store.lock(session_id) for session_id in ids]
    assert _open_descriptors(tmp_path) == before
    other = SessionStore(tmp_path)  # another holder still sees every one of them as taken
    assert sum(1 for session_id in ids if _refused(other, session_id)) == len(ids)
    for lock in locks:
        lock.release()
    with other.lock(ids[0]) as lock:
        assert lock.held


def _refused(store: SessionStore, session_id: str) -> bool:
    from iac_code.store import SessionLockedError

    try:
        store.lock(session_id).release()
    except SessionLockedError:
        return True
    return False


_NO_FREE_DESCRIPTOR = textwrap.dedent(
    """
    import os, resource, sys
    from iac_code.stdio_runtime import warm_handler_modules
    from acp_bindings.methods import METHODS

    if sys.argv[1] == "warm":
        warm_handler_modules()
    # From here on, opening any file fails with EMFILE.
    in_use = len(os.listdir("/proc/self/fd"))
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (in_use - 1, hard))
    failed = []
    for name, spec in METHODS.items():
        if spec.side in ("agent", "protocol"):
            try:
                spec.params_model()
            except OSError:
                failed.append(name)
    import iac_code.mcp.manager
    print(len(failed), flush=True)
    """
)


@pytest.mark.subprocess
def test_handler_modules_are_imported_before_they_are_needed() -> None:
    warmed = subprocess.run(
        [sys.executable, "-c", _NO_FREE_DESCRIPTOR, "warm"],
        capture_output=True,
        timeout=60,
    )
    assert warmed.returncode == 0, warmed.stderr.decode()
    assert warmed.stdout == b"0\n"
