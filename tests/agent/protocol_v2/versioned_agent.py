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

from tests.agent.handlers.agent_harness import AgentClient, open_agent


@asynccontextmanager
async def open_versioned_agent(
    tmp_path: Path, model: Iterable[Any] | None = None
) -> AsyncIterator[AgentClient]:
    async with open_agent(tmp_path, model, versioned=True) as harness:
        yield harness
