"""Real ``iac-code acp`` processes sharing one PostgreSQL store URL (issue 37, items 1-2).

Each process is a stdio agent started the way editors start it (plain ``iac-code acp``,
so the start-up fast path is in play) with IAC_CODE_STORE_URL naming a fresh schema on the
session's PostgreSQL server. No prompt is needed: ``session/set_mode`` persists an event.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from iac_code.agent.store_errors import IN_USE

from tests.agent.process.stdio_harness import BlockingAgent, agent_environment, run_agent
from tests.agent.store.postgres_server import PostgresServer

pytestmark = [pytest.mark.subprocess, pytest.mark.xdist_group("postgres")]

INIT = {"protocolVersion": 1, "clientCapabilities": {}}
#: Short leases keep the takeover test quick; renewal runs every third of this, so a
#: renewal thread held up for two seconds by a loaded machine does not lose the lease.
LEASE_SECONDS = 3.0
BOUND_S = 60.0


@pytest.fixture
def store_url(postgres_server: PostgresServer) -> str:
    return postgres_server.url(schema=postgres_server.new_schema())


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


class Agents:
    """Starts agents on one store URL, each with its own (empty) state folder."""

    def __init__(self, tmp_path: Path, url: str) -> None:
        self.tmp_path, self.url, self.count = tmp_path, url, 0
        tmp_path.mkdir(parents=True, exist_ok=True)

    def env(self, lease_seconds: float) -> dict[str, str]:
        self.count += 1
        home = self.tmp_path / f"home{self.count}"
        env = agent_environment(home, None, api_key=None)
        env["IAC_CODE_STORE_URL"] = self.url
        env["IAC_CODE_STORE_LEASE_SECONDS"] = str(lease_seconds)
        return env

    def start(self, lease_seconds: float = LEASE_SECONDS) -> Any:
        env = self.env(lease_seconds)
        home = Path(env["IAC_CODE_HOME"])
        home.mkdir(parents=True)
        return run_agent(env, stderr_path=home / "stderr.log")


@pytest.fixture
def agents(tmp_path: Path, store_url: str) -> Iterator[Agents]:
    yield Agents(tmp_path, store_url)


def _new_session_together_with_initialize(agent: BlockingAgent, workspace: Path) -> str:
    """What an eager editor sends: the fast path would answer session/new with files."""
    init = {"jsonrpc": "2.0", "id": "raw-1", "method": "initialize", "params": INIT}
    params = {"cwd": str(workspace), "mcpServers": []}
    new = {"jsonrpc": "2.0", "id": "raw-2", "method": "session/new", "params": params}
    agent.send_raw((json.dumps(init) + "\n" + json.dumps(new) + "\n").encode())
    session_id: str = agent.reply("raw-2").result["sessionId"]
    return session_id


def _rows(url: str, query: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as connection:
        return connection.execute(query.encode()).fetchall()


def test_sessions_live_in_postgres_and_another_process_loads_them(
    agents: Agents, workspace: Path, postgres_server: PostgresServer, store_url: str
) -> None:
    with agents.start() as first:
        session_id = _new_session_together_with_initialize(first, workspace)
        mode = {"sessionId": session_id, "modeId": "read_only"}
        assert first.call("session/set_mode", mode).result == {}
        assert first.call("session/close", {"sessionId": session_id}).result == {}
        first.close_stdin()
        assert first.wait_exit() == 0
    assert not list(agents.tmp_path.glob("home*/sessions/*/events.jsonl"))  # no files
    rows = _rows(
        store_url,
        f"SELECT seq, event->>'type' FROM iac_session_events WHERE session_id = '{session_id}'",
    )
    assert rows == [(0, "mode")]

    with agents.start() as second:
        second.initialize()
        listed = second.call("session/list", {}).result["sessions"]
        assert [entry["sessionId"] for entry in listed] == [session_id]
        loaded = second.load(session_id, workspace)
        assert loaded.result["modes"]["currentModeId"] == "read_only"


def _lease(url: str, session_id: str) -> tuple[int, Any] | None:
    import psycopg

    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT token, expires_at FROM iac_session_leases WHERE session_id = %s",
            (session_id,),
        ).fetchone()
    return None if row is None else (row[0], row[1])


def _wait_for(condition: Any, what: str) -> Any:
    """Poll a condition on shared state (the database) until it holds, bounded."""
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {BOUND_S} s: {what}")


def test_one_writer_per_session_across_processes_with_takeover_after_kill_9(
    agents: Agents, workspace: Path, store_url: str
) -> None:
    with agents.start() as owner, agents.start() as other:
        session_id = _new_session_together_with_initialize(owner, workspace)
        first_lease = _lease(store_url, session_id)
        assert first_lease is not None
        # The owner sits idle: its lease is renewed (several lease periods pass) ...
        _wait_for(
            lambda: (
                (lease := _lease(store_url, session_id)) is not None
                and lease[0] == first_lease[0]
                and (lease[1] - first_lease[1]).total_seconds() > 2 * LEASE_SECONDS
            ),
            "the idle owner renewed its lease for more than two lease periods",
        )
        # ... so the other process is refused as for a locked session, on load and resume.
        other.initialize()
        refused = other.load(session_id, workspace).error
        assert refused["code"] == -32602 and refused["data"] == {"sessionId": IN_USE}
        resume = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        refused = other.call("session/resume", resume).error
        assert refused["code"] == -32602 and refused["data"] == {"sessionId": IN_USE}

        mode = {"sessionId": session_id, "modeId": "read_only"}
        assert owner.call("session/set_mode", mode).result == {}
        owner.signal(signal.SIGKILL)
        owner.wait_exit()

        # Once the dead owner's lease expires the other process takes the session over.
        taken = _wait_for(
            lambda: "result" in (reply := other.load(session_id, workspace)).frame and reply,
            "the other process loaded the session after the owner died",
        )
        assert taken.result["modes"]["currentModeId"] == "read_only"
        new_lease = _lease(store_url, session_id)
        assert new_lease is not None and new_lease[0] > first_lease[0]  # a larger token
        mode = {"sessionId": session_id, "modeId": "default"}
        assert other.call("session/set_mode", mode).result == {}
    rows = _rows(
        store_url,
        f"SELECT event->>'modeId' FROM iac_session_events WHERE session_id = '{session_id}'"
        " ORDER BY seq",
    )
    assert rows == [("read_only",), ("default",)]


def test_a_database_that_refuses_writes_is_a_clear_error_and_the_agent_stays_up(
    tmp_path: Path, postgres_server: PostgresServer, workspace: Path
) -> None:
    schema = postgres_server.new_schema()
    writable = Agents(tmp_path / "rw", postgres_server.url(schema=schema))
    with writable.start() as agent:  # creates the tables and one session
        agent.initialize()
        kept = agent.new_session(workspace)
    read_only = postgres_server.url(schema=schema, default_transaction_read_only="on")
    with Agents(tmp_path / "ro", read_only).start() as agent:
        agent.initialize()
        refused = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []}).error
        assert refused["code"] == -32603
        assert refused["message"] == (
            "The session store cannot be written: the file system is read-only."
        )
        assert "read-only transaction" in refused["data"]["store"]
        # Still up, and what was stored is still there to list.
        listed = agent.call("session/list", {}).result["sessions"]
        assert [entry["sessionId"] for entry in listed] == [kept]


def test_an_owner_that_exits_releases_its_leases_at_once(
    agents: Agents, workspace: Path, store_url: str
) -> None:
    """With hour-long leases, only a release on exit lets the next process in."""
    with agents.start(lease_seconds=3600) as owner:
        owner.initialize()
        session_id = owner.new_session(workspace)
        assert _lease(store_url, session_id) is not None
        owner.close_stdin()  # the editor quits without closing the session
        assert owner.wait_exit() == 0
    assert _lease(store_url, session_id) is None
    with agents.start(lease_seconds=3600) as successor:
        successor.initialize()
        assert successor.load(session_id, workspace).result is not None
