"""Permissions through the agent (SPEC §5 paths, §6): every answer shape, memory, modes.

Each test drives a real prompt turn with the in-memory fake model; the client's permission
handler gives the answer under test and the file system shows what really happened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    CANCELLED_ANSWER,
    ErrorAnswer,
    Frame,
    WireClient,
    allow,
    answers,
    final_update,
    in_memory_agent,
    result_text,
    selected,
    statuses,
    tool_results_in,
)

pytestmark = pytest.mark.anyio


def write_turn(path: str, tool_id: str, content: str = "x = 1\n") -> Turn:
    return Turn().tool_use("write_file", {"path": path, "content": content}, id=tool_id)


def model_for(*turns: Turn) -> ScriptedModelClient:
    return ScriptedModelClient(list(turns), timing=False)


def asked_ids(client: WireClient) -> list[str]:
    return [
        frame["params"]["toolCall"]["toolCallId"]
        for frame in client.requests_for("session/request_permission")
    ]


# --- one answer, one write ---------------------------------------------------------------------

ALLOWING = [
    pytest.param(selected("allow_once"), id="allow_once"),
    pytest.param(selected("allow_always"), id="allow_always"),
    pytest.param({"outcome": "allowed", "option_id": "allow_once"}, id="legacy-allowed"),
]
DENYING = [
    pytest.param(selected("reject_once"), id="reject_once"),
    pytest.param(selected("reject_always"), id="reject_always"),
    pytest.param(CANCELLED_ANSWER, id="cancelled"),
    pytest.param(selected("allow_everything"), id="unknown-option"),
    pytest.param({"outcome": {"outcome": "selected"}}, id="selected-without-option"),
    pytest.param({"outcome": 42}, id="malformed-outcome"),
    pytest.param({}, id="empty-object"),
    pytest.param("yes", id="not-an-object"),
    pytest.param({"outcome": "denied"}, id="legacy-denied"),
    pytest.param(ErrorAnswer(-32603, "Internal error"), id="error-answer"),
]


@pytest.mark.parametrize("answer", ALLOWING)
async def test_allowing_answers_write_the_file(workspace: Path, home: Path, answer: Any) -> None:
    model = model_for(write_turn("a.tf", "w1"))
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = answers(answer)
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "write")
        assert (workspace / "a.tf").read_text() == "x = 1\n"
        assert asked_ids(run.client) == ["w1"]
        assert statuses(run.client, "w1") == ["pending", "in_progress", "completed"]


@pytest.mark.parametrize("answer", DENYING)
async def test_denying_answers_leave_the_disk_alone(
    workspace: Path, home: Path, answer: Any
) -> None:
    model = model_for(write_turn("a.tf", "w1"))
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = answers(answer)
        session = await run.client.new_session(workspace)
        result = await run.client.prompt(session, "write")

        assert result["stopReason"] == "end_turn"
        assert not (workspace / "a.tf").exists()
        assert asked_ids(run.client) == ["w1"]
        # Never started: straight from pending to failed.
        assert statuses(run.client, "w1") == ["pending", "failed"]
        assert final_update(run.client, "w1")["rawOutput"]["declined"] is True
        block = tool_results_in(model.requests[-1].messages)["w1"]
        assert block["is_error"] is True
        assert "declined permission for write_file" in result_text(block)


# --- remembered answers ------------------------------------------------------------------------


def permission_rules_on_disk(run: Any, session: str) -> list[dict[str, Any]]:
    return [e for e in run.agent.store.load_events(session) if e.get("type") == "permission_rule"]


async def test_allow_always_is_remembered_and_survives_load(workspace: Path, home: Path) -> None:
    first = model_for(write_turn("a.tf", "w1"), Turn().text("ok"), write_turn("b.tf", "w2"))
    async with in_memory_agent(home, model_client=first) as run:
        run.client.handlers["session/request_permission"] = answers(selected("allow_always"))
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "first")
        await run.client.prompt(session, "second")
        assert (workspace / "a.tf").exists() and (workspace / "b.tf").exists()
        assert asked_ids(run.client) == ["w1"]  # the second write asked no more
        assert permission_rules_on_disk(run, session) == [
            {"type": "permission_rule", "tool": "write_file", "choice": "allow_always"}
        ]
        # Another tool is not covered.
        assert statuses(run.client, "w2")[-1] == "completed"

    second = model_for(write_turn("c.tf", "w3"), Turn().text("ok"), Turn().tool_use(
        "bash", {"command": "true"}, id="b1"
    ))  # fmt: skip
    async with in_memory_agent(home, model_client=second) as run:
        await run.client.load_session(session, workspace)
        await run.client.prompt(session, "third")
        assert (workspace / "c.tf").exists()
        assert asked_ids(run.client) == []
        await run.client.prompt(session, "bash")
        assert asked_ids(run.client) == ["b1"]


async def test_reject_always_is_remembered(workspace: Path, home: Path) -> None:
    model = model_for(write_turn("a.tf", "w1"), Turn().text("ok"), write_turn("b.tf", "w2"))
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = answers(selected("reject_always"))
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "first")
        await run.client.prompt(session, "second")
        assert not (workspace / "a.tf").exists() and not (workspace / "b.tf").exists()
        assert asked_ids(run.client) == ["w1"]
        assert statuses(run.client, "w2") == ["pending", "failed"]
        block = tool_results_in(model.requests[-1].messages)["w2"]
        assert "always reject write_file" in result_text(block)


async def test_allow_once_asks_every_time(workspace: Path, home: Path) -> None:
    model = model_for(write_turn("a.tf", "w1"), write_turn("b.tf", "w2"))
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "write twice")
        assert asked_ids(run.client) == ["w1", "w2"]
        assert (workspace / "b.tf").exists()


# --- restricted paths are never covered by allow_always ----------------------------------------


def escape_cases(workspace: Path, tmp_path: Path) -> list[tuple[str, Path]]:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    (workspace / "link").symlink_to(elsewhere, target_is_directory=True)
    return [
        ("../up.tf", tmp_path / "up.tf"),
        (str(elsewhere / "abs.tf"), elsewhere / "abs.tf"),
        ("link/through.tf", elsewhere / "through.tf"),
        (".env", workspace / ".env"),
        (".git/config", workspace / ".git" / "config"),
    ]


async def test_allow_always_never_covers_outside_or_sensitive_paths(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    cases = escape_cases(workspace, tmp_path)
    turns = [write_turn("inside.tf", "w0")]
    turns += [write_turn(raw, f"w{n}") for n, (raw, _) in enumerate(cases, start=1)]
    turns += [write_turn("inside2.tf", "w_last")]
    model = model_for(*turns)
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("allow_always")
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "write everywhere")
        expected = ["w0"] + [f"w{n}" for n in range(1, len(cases) + 1)]
        assert asked_ids(run.client) == expected  # every restricted write asked again
        for _, target in cases:
            assert target.exists()  # allowed each time it was asked
        reasons = [
            frame["params"]["_meta"]["iac_code"]["reason"]
            for frame in run.client.requests_for("session/request_permission")[1:]
        ]
        assert all("outside the workspace" in r for r in reasons[:3]), reasons
        assert all("sensitive" in r for r in reasons[3:]), reasons
        assert (workspace / "inside2.tf").exists()


async def test_outside_write_asks_even_in_accept_edits(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    model = model_for(write_turn("inside.tf", "w1"), write_turn("../outside.tf", "w2"))
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("reject_once")
        session = await run.client.new_session(workspace)
        await run.client.set_mode(session, "accept_edits")
        await run.client.prompt(session, "write")
        assert (workspace / "inside.tf").exists()  # inside the roots: no question
        assert asked_ids(run.client) == ["w2"]
        assert not (tmp_path / "outside.tf").exists()


async def test_reading_a_sensitive_file_asks(workspace: Path, home: Path) -> None:
    (workspace / ".env").write_text("TOKEN=secret\n")
    model = model_for(Turn().tool_use("read_file", {"path": ".env"}, id="r1"))
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("reject_once")
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "read the secrets")
        assert asked_ids(run.client) == ["r1"]
        assert "secret" not in result_text(tool_results_in(model.requests[-1].messages)["r1"])


# --- modes -------------------------------------------------------------------------------------


async def test_read_only_mode_refuses_without_asking(workspace: Path, home: Path) -> None:
    model = model_for(
        write_turn("a.tf", "w1"),
        Turn().tool_use("bash", {"command": f"touch {workspace}/b"}, id="b1"),
        Turn().tool_use("read_file", {"path": "main.tf"}, id="r1"),
    )
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.set_mode(session, "read_only")
        await run.client.prompt(session, "try")
        assert asked_ids(run.client) == []
        assert not (workspace / "a.tf").exists() and not (workspace / "b").exists()
        assert statuses(run.client, "w1") == ["pending", "failed"]
        assert statuses(run.client, "b1") == ["pending", "failed"]
        assert statuses(run.client, "r1")[-1] == "completed"
        results = tool_results_in(model.requests[-1].messages)
        assert "read-only mode" in result_text(results["w1"])


async def test_accept_edits_mode_edits_inside_roots_without_asking(
    workspace: Path, home: Path
) -> None:
    model = model_for(
        write_turn("a.tf", "w1"),
        Turn().tool_use(
            "edit_file", {"path": "main.tf", "old_string": "# end", "new_string": "# fin"}, id="e1"
        ),
        Turn().tool_use("bash", {"command": "true"}, id="b1"),
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("reject_once")
        session = await run.client.new_session(workspace)
        await run.client.set_mode(session, "accept_edits")
        await run.client.prompt(session, "edit")
        assert (workspace / "a.tf").exists()
        assert "# fin" in (workspace / "main.tf").read_text()
        assert asked_ids(run.client) == ["b1"]  # commands still ask


# --- a misbehaving client ----------------------------------------------------------------------


async def test_second_answer_and_unknown_ids_are_ignored(workspace: Path, home: Path) -> None:
    async def answer_twice(client: WireClient, frame: Frame) -> Any:
        await client.answer(frame["id"], selected("allow_once"))
        await client.answer(frame["id"], selected("reject_always"))
        await client.answer(987_654, selected("reject_once"))
        await client.send(
            {"jsonrpc": "2.0", "id": "no-such-id", "error": {"code": -32603, "message": "x"}}
        )
        from tests.agent.turn_tools.agent_tools_kit import NO_ANSWER

        return NO_ANSWER

    model = model_for(write_turn("a.tf", "w1"), Turn().text("ok"), write_turn("b.tf", "w2"))
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = answer_twice
        session = await run.client.new_session(workspace)
        result = await run.client.prompt(session, "write")
        assert result["stopReason"] == "end_turn"
        assert (workspace / "a.tf").exists()
        assert statuses(run.client, "w1")[-1] == "completed"
        # The stray reject_always was not remembered: the next write asks and goes ahead.
        await run.client.prompt(session, "again")
        assert asked_ids(run.client) == ["w1", "w2"]
        assert (workspace / "b.tf").exists()
        # The agent is still healthy.
        listed = await run.client.request("session/list", {})
        assert any(s["sessionId"] == session for s in listed["sessions"])


async def test_permission_request_carries_the_tool_call(workspace: Path, home: Path) -> None:
    model = model_for(write_turn("dir/a.tf", "w1"))
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "write")
        [ask] = run.client.requests_for("session/request_permission")
        tool_call = ask["params"]["toolCall"]
        announced = run.client.tool_events("w1")[0]
        assert tool_call["toolCallId"] == announced["toolCallId"] == "w1"
        assert tool_call["title"] == announced["title"] == "Write dir/a.tf"
        assert tool_call["kind"] == "edit"
        assert tool_call["locations"] == [{"path": os.fspath(workspace / "dir" / "a.tf")}]
        for option in ask["params"]["options"]:
            assert option["optionId"] == option["kind"] and option["name"]
