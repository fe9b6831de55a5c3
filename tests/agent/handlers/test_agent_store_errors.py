"""Expected store failures get a clear wire error, never the opaque "Internal error" (item 14)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from iac_code.store import fsio

from tests.agent.handlers.agent_harness import open_agent
from tests.agent.store.store_testkit import Child

pytestmark = pytest.mark.anyio

_HOLD_LOCK = """
import sys
from pathlib import Path
from iac_code.store import SessionStore
lock = SessionStore(Path(sys.argv[1])).lock(sys.argv[2])
print("locked", flush=True)
sys.stdin.readline()
"""


def _refuse_with(code: int) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError(code, os.strerror(code))

    return refuse


async def test_disk_full_on_session_new_names_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_agent(tmp_path) as client:
        before = await client.new_session()
        monkeypatch.setattr(fsio, "create_private_file", _refuse_with(errno.ENOSPC))
        reply = await client.call("session/new", {"cwd": str(client.workspace), "mcpServers": []})
        error = reply.error
        assert error["code"] == -32603
        assert error["message"] == "The session store cannot be written: the disk is full."
        assert error["data"]["errno"] == "ENOSPC"
        assert "errorId" not in error["data"]
        fork = await client.call(
            "session/fork", {"sessionId": before, "cwd": str(client.workspace), "mcpServers": []}
        )
        assert fork.error["message"].endswith("the disk is full.")
        monkeypatch.undo()
        listed = await client.call("session/list", {})
        assert [s["sessionId"] for s in listed.result["sessions"]] == [before]


async def test_a_session_locked_by_another_process_is_invalid_params(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        await client.call("session/close", {"sessionId": session_id})
        with Child(_HOLD_LOCK, tmp_path / "home", session_id) as holder:
            holder.wait_for("locked")
            for method in ("session/load", "session/resume", "session/delete"):
                params = {"sessionId": session_id, "cwd": str(client.workspace), "mcpServers": []}
                if method == "session/delete":
                    params = {"sessionId": session_id}
                error = (await client.call(method, params)).error
                assert error["code"] == -32602, (method, error)
                assert error["data"] == {"sessionId": "session is in use by another process"}
        assert (tmp_path / "home" / "sessions" / session_id / "meta.json").exists()
