"""v1 ``session/prompt`` results: root fields from the stable schema unless the client opted in.

Stable ACP 1.21 allows only ``stopReason`` and ``_meta`` at the root of the result;
``usage`` exists only in the unstable schema, so it is sent only to a client that asked
(``clientCapabilities._meta.iac_code.unstable: true``). The numbers are always in
``_meta.iac_code.usage``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_scripted_llm import Turn

from tests.agent.handlers.agent_harness import open_agent

pytestmark = pytest.mark.anyio


def _script() -> list[Any]:
    return [Turn().text("done").usage(input_tokens=12, output_tokens=3)]


@pytest.mark.parametrize(
    "capabilities",
    [{}, {"_meta": {"iac_code": {"unstable": False}}}, {"_meta": {"other": {"unstable": True}}}],
    ids=["no meta", "opt-in false", "another vendor"],
)
async def test_the_result_has_only_stable_root_fields_by_default(
    tmp_path: Path, capabilities: dict[str, Any]
) -> None:
    async with open_agent(tmp_path, _script()) as client:
        await client.initialize(clientCapabilities=capabilities)
        session_id = await client.new_session()
        with anyio.fail_after(60):
            reply = await client.prompt(session_id, "count")
    assert set(reply.result) == {"stopReason", "_meta"}
    assert reply.result["_meta"]["iac_code"]["usage"]["totalTokens"] == 15


async def test_a_client_that_opted_in_gets_the_unstable_usage_field(tmp_path: Path) -> None:
    async with open_agent(tmp_path, _script()) as client:
        await client.initialize(clientCapabilities={"_meta": {"iac_code": {"unstable": True}}})
        session_id = await client.new_session()
        with anyio.fail_after(60):
            reply = await client.prompt(session_id, "count")
    assert reply.result["usage"]["totalTokens"] == 15
    assert reply.result["_meta"]["iac_code"]["usage"]["totalTokens"] == 15
