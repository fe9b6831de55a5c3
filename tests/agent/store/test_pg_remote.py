"""The HTTP transport on a PostgreSQL store: every connection of the server shares one store,
so a session open on one connection is "in use" for another until it is closed."""

from __future__ import annotations

from pathlib import Path

import pytest
from iac_code.agent.store_errors import IN_USE
from iac_code.remote.serve import agent_handler_factory
from iac_code.settings import Settings
from iac_code.store.open_store import open_store
from iac_code.store.pg_store import PostgresSessionStore

from tests.agent.remote.remote_kit import http_client, running_server
from tests.agent.store.postgres_server import PostgresServer

pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("postgres")]


async def test_two_http_connections_share_the_database_store(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    url = postgres_server.url(schema=postgres_server.new_schema())
    settings = Settings(home=tmp_path / "home", store_url=url)
    try:
        async with (
            running_server(agent_handler_factory(settings)) as server,
            http_client(server.url) as first,
            http_client(server.url) as second,
        ):
            await first.initialize()
            await second.initialize()
            session_id = await first.new_session(workspace)
            listed = await second.request("session/list", {})
            assert [entry["sessionId"] for entry in listed["sessions"]] == [session_id]
            refused = (await second.load(session_id, workspace)).frame["error"]
            assert refused["code"] == -32602 and refused["data"] == {"sessionId": IN_USE}
            await first.request("session/close", {"sessionId": session_id}, stream=session_id)
            assert "result" in (await second.load(session_id, workspace)).frame
        assert not (tmp_path / "home" / "sessions").exists()  # nothing went to files
    finally:
        store = open_store(settings)
        assert isinstance(store, PostgresSessionStore)
        store.close()
