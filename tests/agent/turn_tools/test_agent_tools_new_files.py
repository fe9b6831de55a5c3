"""Writing a new file through an editor client never makes the client report an error.

Before writing, the agent reads the file's current text (for the diff). A client such as acpx
answers a read of a file that does not exist with "Resource not found" and shows that error to
the user, so the agent checks the disk first and never asks the client about a new file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn

from tests.agent.turn_tools.agent_tools_kit import FakeEditor, final_update, in_memory_agent

pytestmark = pytest.mark.anyio


async def test_writing_a_new_file_never_reads_it_through_the_client(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    new_file = workspace / "modules" / "net.tf"
    editor = FakeEditor()
    llm.script.add(
        Turn().tool_use("write_file", {"path": "modules/net.tf", "content": "# vpc\n"}, id="w1"),
        Turn().tool_use("write_file", {"path": "fresh/dir/out.tf", "content": "# o\n"}, id="w2"),
        Turn().text("done").stop("end_turn"),
    )  # fmt: skip
    async with in_memory_agent(home, llm_url=llm.url, capabilities=FakeEditor.CAPABILITIES) as run:
        client = run.client
        editor.install(client)
        session = await client.new_session(workspace)
        assert (await client.prompt(session, "add files"))["stopReason"] == "end_turn"
        assert client.requests_for("fs/read_text_file") == []  # nothing the client could fail
        for call_id in ("w1", "w2"):
            final = final_update(client, call_id)
            assert final["status"] == "completed"
            assert final["rawOutput"]["created"] is True
            assert final["rawOutput"]["via"] == "client"
    assert editor.written[str(new_file)] == "# vpc\n"


async def test_an_existing_file_is_still_read_through_the_client(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    main_tf = str(workspace / "main.tf")
    editor = FakeEditor(buffers={main_tf: "# unsaved\n"})
    llm.script.add(
        Turn().tool_use("write_file", {"path": "main.tf", "content": "# replaced\n"}, id="w1"),
        Turn().text("done").stop("end_turn"),
    )
    async with in_memory_agent(home, llm_url=llm.url, capabilities=FakeEditor.CAPABILITIES) as run:
        client = run.client
        editor.install(client)
        session = await client.new_session(workspace)
        await client.prompt(session, "replace")
        # Read twice: for the diff on the tool_call, then again when the write runs.
        reads = client.requests_for("fs/read_text_file")
        assert [read["params"]["path"] for read in reads] == [main_tf, main_tf]
        final = final_update(client, "w1")
        assert final["rawOutput"]["created"] is False
        assert final["content"][0]["oldText"] == "# unsaved\n"  # the editor's buffer


async def test_reading_a_missing_file_is_still_the_client_s_answer(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    editor = FakeEditor()
    llm.script.add(
        Turn().tool_use("read_file", {"path": "nope.tf"}, id="r1"),
        Turn().text("done").stop("end_turn"),
    )
    async with in_memory_agent(home, llm_url=llm.url, capabilities=FakeEditor.CAPABILITIES) as run:
        client = run.client
        editor.install(client)
        session = await client.new_session(workspace)
        await client.prompt(session, "read")
        # The model asked for this file by name: the client (unsaved buffers) decides.
        assert len(client.requests_for("fs/read_text_file")) == 1
        final = final_update(client, "r1")
        assert final["status"] == "failed"
