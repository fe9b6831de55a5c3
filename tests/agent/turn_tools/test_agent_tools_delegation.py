"""fs/* and terminal/* through the client, only when it advertised them (SPEC §5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    NO_ANSWER,
    FakeEditor,
    Frame,
    WireClient,
    final_update,
    in_memory_agent,
    result_text,
    tool_results_in,
)

pytestmark = pytest.mark.anyio

CLIENT_METHODS = {
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
}


def three_tools(workspace: Path) -> list[Turn]:
    return [
        Turn().tool_use("read_file", {"path": "main.tf"}, id="r1"),
        Turn().tool_use("write_file", {"path": "new.tf", "content": "# new\n"}, id="w1"),
        Turn().tool_use(
            "edit_file", {"path": "main.tf", "old_string": "unsaved", "new_string": "saved"},
            id="e1",
        ),
        Turn().tool_use("bash", {"command": "touch ran-locally && echo hi"}, id="b1"),
        Turn().text("done").stop("end_turn"),
    ]  # fmt: skip


async def test_an_editor_client_gets_files_and_commands(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    main_tf = str(workspace / "main.tf")
    editor = FakeEditor(buffers={main_tf: "# unsaved buffer text\n"})
    llm.script.add(*three_tools(workspace))
    async with in_memory_agent(home, llm_url=llm.url, capabilities=FakeEditor.CAPABILITIES) as run:
        client = run.client
        editor.install(client)
        session = await client.new_session(workspace)
        assert (await client.prompt(session, "work"))["stopReason"] == "end_turn"

        # read_file saw the editor's buffer, not the disk.
        [read] = client.requests_for("fs/read_text_file")[:1]
        assert read["params"]["sessionId"] == session and read["params"]["path"] == main_tf
        sent = {r["tool_use_id"]: r for m in llm.model_requests for r in tool_results_in(
            m.messages
        ).values()}  # fmt: skip
        assert "# unsaved buffer text" in result_text(sent["r1"])
        assert final_update(client, "r1")["rawOutput"]["source"] == "client"

        # write_file went to the client; the agent did not touch the disk.
        assert editor.written[str(workspace / "new.tf")] == "# new\n"
        assert not (workspace / "new.tf").exists()
        assert final_update(client, "w1")["rawOutput"]["via"] == "client"

        # edit_file edited the buffer (read and written through the client).
        assert editor.written[main_tf] == "# saved buffer text\n"
        assert "demo" in (workspace / "main.tf").read_text()  # disk unchanged
        [diff] = final_update(client, "e1")["content"]
        assert diff["oldText"] == "# unsaved buffer text\n"

        # bash ran in the client's terminal, embedded in the tool call, and was released.
        [create] = client.requests_for("terminal/create")
        assert create["params"]["cwd"] == str(workspace)
        assert "touch ran-locally" in " ".join(
            [create["params"]["command"], *create["params"]["args"]]
        )
        assert not (workspace / "ran-locally").exists()
        terminal_id = "term-1"
        final = final_update(client, "b1")
        assert final["content"] == [{"type": "terminal", "terminalId": terminal_id}]
        assert final["rawOutput"]["terminalId"] == terminal_id
        assert editor.released == [terminal_id]
        methods = [
            f["method"] for f in client.agent_requests if f["method"].startswith("terminal/")
        ]
        assert methods == [
            "terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release",
        ]  # fmt: skip
        # The terminal was shown to the client before it was released.
        embedded = [{"type": "terminal", "terminalId": terminal_id}]
        shown_at = next(
            i for i, f in enumerate(client.frames)
            if f.get("method") == "session/update"
            and f["params"]["update"].get("content") == embedded
        )  # fmt: skip
        release_at = client.frames.index(client.requests_for("terminal/release")[0])
        assert shown_at < release_at
        assert "hello from the client terminal" in result_text(sent["b1"])


async def test_a_hanging_client_terminal_times_out_and_is_still_released(
    workspace: Path, home: Path
) -> None:
    editor = FakeEditor()

    async def never_exits(client: WireClient, frame: Frame) -> Any:
        return NO_ANSWER

    model = ScriptedModelClient(
        [Turn().tool_use("bash", {"command": "sleep 1000", "timeout": 1}, id="b1")], timing=False
    )
    async with in_memory_agent(
        home, model_client=model, capabilities=FakeEditor.CAPABILITIES
    ) as run:
        editor.install(run.client)
        run.client.handlers["terminal/wait_for_exit"] = never_exits
        session = await run.client.new_session(workspace)
        assert (await run.client.prompt(session, "wait"))["stopReason"] == "end_turn"
        final = final_update(run.client, "b1")
        assert final["status"] == "failed" and final["rawOutput"]["timedOut"] is True
        assert editor.killed == ["term-1"] and editor.released == ["term-1"]
        assert "timed out" in result_text(tool_results_in(model.requests[-1].messages)["b1"])


@pytest.mark.parametrize(
    "capabilities",
    [
        pytest.param({}, id="nothing"),
        pytest.param(
            {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
            id="all-false",
        ),
    ],
)
async def test_without_capabilities_no_client_method_is_called(
    workspace: Path, home: Path, capabilities: dict[str, Any]
) -> None:
    model = ScriptedModelClient(three_tools(workspace), timing=False)
    (workspace / "main.tf").write_text("# unsaved on disk too\n")
    async with in_memory_agent(home, model_client=model, capabilities=capabilities) as run:
        FakeEditor().install(run.client)  # would answer, but must never be asked
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "work")
        assert run.client.agent_methods() == {"session/request_permission"}
        assert (workspace / "new.tf").read_text() == "# new\n"
        assert (workspace / "main.tf").read_text() == "# saved on disk too\n"
        assert (workspace / "ran-locally").exists()
        assert final_update(run.client, "b1")["content"][0]["type"] == "content"


async def test_only_the_advertised_half_is_delegated(workspace: Path, home: Path) -> None:
    editor = FakeEditor(buffers={str(workspace / "main.tf"): "# buffer\n"})
    model = ScriptedModelClient(three_tools(workspace)[:2], timing=False)
    async with in_memory_agent(
        home, model_client=model, capabilities={"fs": {"readTextFile": True}}
    ) as run:
        editor.install(run.client)
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "work")
        assert run.client.agent_methods() & CLIENT_METHODS == {"fs/read_text_file"}
        assert (workspace / "new.tf").read_text() == "# new\n"
        assert editor.written == {}
