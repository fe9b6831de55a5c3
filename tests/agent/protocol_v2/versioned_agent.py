"""An in-memory agent behind the versioned router, wired as ``iac-code acp`` wires it.

Like :func:`tests.agent.handlers.agent_harness.open_agent`, but wired by
:func:`~iac_code.versioned_router.route_versions` (what ``iac-code acp`` uses): the agent
sends through a :class:`~iac_code.negotiated_peer.NegotiatedPeer` and requests go to the
:class:`~iac_code.versioned_router.VersionedRouter`, so the test's ``initialize`` may
negotiate either protocol version.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from iac_code.agent.server import IacAgent
from iac_code.rpc.memory import raw_peer_connection
from iac_code.store import SessionStore
from iac_code.versioned_router import route_versions
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.handlers.agent_harness import AgentClient, make_settings


@asynccontextmanager
async def open_versioned_agent(
    tmp_path: Path, model: Iterable[Any] | None = None
) -> AsyncIterator[AgentClient]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    settings = make_settings(tmp_path / "home")
    client = ScriptedModelClient(model, timing=False)
    connection, raw = raw_peer_connection(None)
    agent, connection.handler = route_versions(
        connection,
        lambda peer: IacAgent(settings, peer, SessionStore(settings.home), model_client=client),
    )
    harness = AgentClient(peer=raw, agent=agent, model=client, workspace=workspace)
    async with anyio.create_task_group() as group:
        group.start_soon(connection.serve)
        try:
            yield harness
        finally:
            with anyio.fail_after(5):
                await agent.shutdown()
                raw.close_input()
                await raw.receive_until_eof()
