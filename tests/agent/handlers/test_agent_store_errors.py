"""Expected store failures get a clear wire error, never the opaque "Internal error" (item 14)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import Turn
from iac_code.store import (
    SessionStore,
    SessionTakenOverError,
    StoreUnreachableError,
    StoreWriteError,
    fsio,
)
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.handlers.agent_harness import open_agent, read_events
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


class _RefusingStore(SessionStore):
    """The JSONL store, refusing appends with ``refusal`` while it is set."""

    refusal: StoreWriteError | None = None

    def append(self, session_id: str, event: dict[str, Any]) -> None:
        if self.refusal is not None:
            raise self.refusal
        super().append(session_id, event)


@pytest.mark.parametrize(
    ("refusal", "cause"),
    [
        (
            SessionTakenOverError("taken over", errno=errno.EBUSY),
            "another iac-code process took the session over",
        ),
        (StoreUnreachableError("PostgreSQL is unreachable"), "the database is unreachable"),
    ],
)
async def test_an_event_a_database_refuses_ends_the_turn_and_closes_the_session_here(
    tmp_path: Path, refusal: StoreWriteError, cause: str
) -> None:
    """Memory would be ahead of the stored log: the prompt answers the cause, nothing more
    is written, and a load (here or on another replica) goes on from what was stored."""
    store = _RefusingStore(tmp_path / "home")
    async with open_agent(tmp_path, store=store) as client:
        session_id = await client.new_session()
        assert "result" in (await client.prompt(session_id, "kept")).frame
        stored = read_events(tmp_path / "home", session_id)
        store.refusal = refusal
        error = (await client.prompt(session_id, "refused")).error
        assert error["code"] == -32603
        assert error["message"] == f"The session store cannot be written: {cause}."
        store.refusal = None
        closed = (await client.prompt(session_id, "too early")).error
        assert (closed["code"], closed["message"]) == (-32602, "Unknown session.")
        assert read_events(tmp_path / "home", session_id) == stored
        assert "result" in (await client.load(session_id)).frame
        assert "result" in (await client.prompt(session_id, "after the load")).frame


class _RefusingAnnouncements(SessionStore):
    """Refuses tool call announcements as an unreachable database would."""

    def append(self, session_id: str, event: dict[str, Any]) -> None:
        if event.get("type") == "tool_call":
            raise StoreUnreachableError("PostgreSQL is unreachable")
        super().append(session_id, event)


async def test_tool_calls_side_by_side_meeting_a_refusing_store_answer_the_cause_once(
    tmp_path: Path,
) -> None:
    """Read-only calls run side by side in a task group: the first refusal cancels the
    other call, and the answer is the store's cause, not an opaque internal error."""
    two_listings = Turn().tool_use("list_files", {}, id="l1").tool_use("list_files", {}, id="l2")
    model = ScriptedModelClient([two_listings], timing=False)
    async with open_agent(
        tmp_path, model, store=_RefusingAnnouncements(tmp_path / "home")
    ) as client:
        session_id = await client.new_session()
        error = (await client.prompt(session_id, "list twice")).error
        assert error["code"] == -32603
        assert error["message"] == (
            "The session store cannot be written: the database is unreachable."
        )
