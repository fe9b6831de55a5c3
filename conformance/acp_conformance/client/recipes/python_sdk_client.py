"""A small ACP client on the official Python SDK (``agent-client-protocol``), shipped so that
``acp-conformance client`` can be tried on a real client:

    acp-conformance client -- python -m acp_conformance.client.recipes.python_sdk_client \\
        --scenario {scenario} --agent {agent}

It spawns the agent, sends initialize (advertising fs read/write), session/new and one
prompt, answers permission requests with the first "allow" option, reads and writes files
for the agent, and exits when the prompt is answered. In the ``cancel`` scenario it cancels
the turn from inside the permission request and answers it ``cancelled``; in the ``load``
scenario it loads an earlier session instead of creating one, and prompts in it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
from pathlib import Path
from typing import Any, cast

import acp
from acp import schema

from acp_conformance.client.scenarios import EARLIER_SESSION_ID


class RecipeClient:
    """The SDK calls these by name (``acp.Client`` is a protocol; the rest stay unset)."""

    def __init__(self, cancel: bool) -> None:
        self.cancel = cancel
        self.conn: Any = None

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        if self.cancel:
            await self.conn.cancel(session_id=session_id)
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        allow = next((o for o in options if str(o.kind).startswith("allow")), options[0])
        chosen = schema.AllowedOutcome(outcome="selected", option_id=allow.option_id)
        return schema.RequestPermissionResponse(outcome=chosen)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        await asyncio.to_thread(Path(path).write_text, content, encoding="utf-8")
        return schema.WriteTextFileResponse()


async def drive(agent: list[str], cancel: bool, load: bool, prompt: str) -> int:
    client = RecipeClient(cancel)
    async with acp.spawn_agent_process(cast(Any, client), agent[0], *agent[1:]) as (conn, _process):
        client.conn = conn
        caps = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True),
            terminal=False,
        )
        await conn.initialize(
            protocol_version=1,
            client_capabilities=caps,
            client_info=schema.Implementation(name="python-sdk-recipe", version="1"),
        )
        if load:
            await conn.load_session(cwd=os.getcwd(), session_id=EARLIER_SESSION_ID, mcp_servers=[])
            session_id = EARLIER_SESSION_ID
        else:
            session_id = (await conn.new_session(cwd=os.getcwd(), mcp_servers=[])).session_id
        try:
            await conn.prompt(session_id=session_id, prompt=[acp.text_block(prompt)])
        except acp.RequestError as exc:
            print(f"python-sdk-recipe: prompt failed: {exc}", file=sys.stderr)
            return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True, help="the agent command (one string)")
    parser.add_argument("--scenario", default="")
    parser.add_argument("--cancel", action="store_true")
    parser.add_argument("--prompt", default="Hello")
    args = parser.parse_args()
    cancel = args.cancel or args.scenario == "cancel"
    load = args.scenario == "load"
    return asyncio.run(drive(shlex.split(args.agent), cancel, load, args.prompt))


if __name__ == "__main__":
    sys.exit(main())
