"""Session lifecycle methods, in memory: new, load, resume, fork, close, delete, list
(SPEC §2, §7)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import Turn
from iac_code.store import SessionStore

from tests.agent.handlers.agent_harness import AgentClient, open_agent, read_events

pytestmark = pytest.mark.anyio

URL_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{24,}")


def greeting_turn() -> Turn:
    return Turn().thinking("Let me think.", chunks=2).text("Hello there, operator.", chunks=3)


async def streamed_session(client: AgentClient) -> tuple[str, dict[str, Any]]:
    """A session with one finished exchange; returns its id and the streamed prompt reply."""
    session_id = await client.new_session()
    reply = await client.prompt(session_id, "say hello")
    assert reply.result["stopReason"] == "end_turn"
    return session_id, {"updates": reply.updates}


# ---------------------------------------------------------------------------- session/new


async def test_new_sessions_get_unique_url_safe_ids_with_enough_randomness(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        ids = [await client.new_session() for _ in range(20)]
    assert len(set(ids)) == 20
    for session_id in ids:
        assert URL_SAFE_ID.fullmatch(session_id), session_id  # 24 chars of base64 = 144 bits


async def test_new_session_answers_modes_and_config_options(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call("session/new", {"cwd": str(client.workspace), "mcpServers": []})
    result = reply.result
    assert result["modes"]["currentModeId"] == "default"
    assert [m["id"] for m in result["modes"]["availableModes"]] == [
        "default",
        "accept_edits",
        "read_only",
    ]
    assert [o["id"] for o in result["configOptions"]] == ["model", "thought_level"]
    assert result["configOptions"][0]["category"] == "model"
    assert all(o["type"] == "select" for o in result["configOptions"])


async def test_new_session_rejects_a_relative_cwd_naming_the_field(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call("session/new", {"cwd": "relative/dir", "mcpServers": []})
    assert reply.error["code"] == -32602
    assert set(reply.error["data"]) == {"cwd"}


async def test_new_session_rejects_a_cwd_that_does_not_exist(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        missing = str(tmp_path / "missing")
        reply = await client.call("session/new", {"cwd": missing, "mcpServers": []})
    assert reply.error["code"] == -32602
    assert set(reply.error["data"]) == {"cwd"}


async def test_new_session_accepts_missing_mcp_servers(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call("session/new", {"cwd": str(client.workspace)})
    assert URL_SAFE_ID.fullmatch(reply.result["sessionId"])


@pytest.mark.parametrize("method", ["session/load", "session/resume"])
async def test_load_and_resume_accept_missing_mcp_servers(tmp_path: Path, method: str) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        await client.call("session/close", {"sessionId": session_id})
        reply = await client.call(method, {"sessionId": session_id, "cwd": str(client.workspace)})
    assert reply.result["modes"]["currentModeId"] == "default"


async def test_new_session_rejects_relative_additional_directories(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call(
            "session/new",
            {"cwd": str(client.workspace), "mcpServers": [], "additionalDirectories": ["lib"]},
        )
    assert reply.error["code"] == -32602
    assert list(reply.error["data"]) == ["additionalDirectories[0]"]


async def test_available_commands_update_follows_the_new_session_response(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call("session/new", {"cwd": str(client.workspace), "mcpServers": []})
        session_id = reply.result["sessionId"]
        index, params = await client.wait_update("available_commands_update")
    assert reply.updates == []
    assert index > reply.index
    assert params["sessionId"] == session_id
    names = [c["name"] for c in params["update"]["availableCommands"]]
    assert names == ["validate", "review", "explain"]


# ---------------------------------------------------------------------------- session/load


async def test_load_replays_the_whole_conversation_before_answering(tmp_path: Path) -> None:
    async with open_agent(tmp_path, [greeting_turn()]) as client:
        session_id, first = await streamed_session(client)
    streamed = [u["update"] for u in first["updates"]]
    streamed_ids = {u["messageId"] for u in streamed if "messageId" in u}

    async with open_agent(tmp_path) as fresh:  # a new agent and store over the same home
        reply = await fresh.load(session_id)
    assert "result" in reply.frame
    replay = [u["update"] for u in reply.updates]
    assert [u["sessionUpdate"] for u in replay] == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "available_commands_update",  # the session's live state, also before the answer
    ]
    assert replay[0]["content"] == {"type": "text", "text": "say hello"}
    assert replay[1]["content"]["text"] == "Let me think."
    assert replay[2]["content"]["text"] == "Hello there, operator."
    # Replayed chunks of one message share the id the live stream used.
    assert replay[1]["messageId"] == replay[2]["messageId"]
    assert streamed_ids == {replay[2]["messageId"]}
    assert replay[0]["messageId"] != replay[2]["messageId"]


async def test_load_of_an_unknown_session_names_the_session_id(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.load("NoSuchSessionAtAll000000")
    assert reply.error["code"] == -32602
    assert reply.error["data"] == {"sessionId": "unknown session"}


async def test_load_with_another_cwd_is_rejected(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        await client.call("session/close", {"sessionId": session_id})
        reply = await client.load(session_id, cwd=other)
    assert reply.error["code"] == -32602
    assert "cwd" in reply.error["data"]


async def test_loading_an_active_session_replays_it_again(tmp_path: Path) -> None:
    async with open_agent(tmp_path, [greeting_turn()]) as client:
        session_id, _ = await streamed_session(client)
        first = await client.load(session_id)
        second = await client.load(session_id)
    # Each load ends its replay with the command list, before its own response.
    assert first.kinds()[-1] == second.kinds()[-1] == "available_commands_update"
    replayed = [k for k in second.kinds() if k != "available_commands_update"]
    assert (
        replayed
        == first.kinds()[:-1]
        == [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
        ]
    )


async def test_load_sends_available_commands_before_its_response(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        await client.barrier()  # session/new's own command list is behind us
        start = len(client.received)
        reply = await client.load(session_id)
        index, _ = await client.wait_update("available_commands_update", start=start)
    assert index < reply.index


# ---------------------------------------------------------------------------- resume, fork


async def test_resume_sends_no_replay_but_the_history_reaches_the_model(tmp_path: Path) -> None:
    async with open_agent(tmp_path, [greeting_turn()]) as client:
        session_id, _ = await streamed_session(client)
    async with open_agent(tmp_path, ["Welcome back."]) as fresh:
        reply = await fresh.call(
            "session/resume", {"sessionId": session_id, "cwd": str(fresh.workspace)}
        )
        assert reply.kinds() == ["available_commands_update"]  # no replay, only live state
        assert reply.result["modes"]["currentModeId"] == "default"
        await fresh.prompt(session_id, "and again")
        messages = fresh.model_requests[0].messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"][0]["text"] == "say hello"


async def test_resume_of_an_unknown_session_is_invalid_params(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call(
            "session/resume",
            {"sessionId": "unknownSession0000000000", "cwd": str(client.workspace)},
        )
    assert reply.error["data"] == {"sessionId": "unknown session"}


async def test_fork_copies_the_history_into_a_new_persisted_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with open_agent(tmp_path, [greeting_turn()]) as client:
        source_id, _ = await streamed_session(client)
        before = read_events(home, source_id)
        reply = await client.call(
            "session/fork", {"sessionId": source_id, "cwd": str(client.workspace)}
        )
        fork_id = reply.result["sessionId"]
        assert fork_id != source_id
        assert URL_SAFE_ID.fullmatch(fork_id)
    assert read_events(home, source_id) == before  # the source is untouched
    assert SessionStore(home).get_meta(fork_id).parent_id == source_id

    async with open_agent(tmp_path) as fresh:
        replay = await fresh.load(fork_id)
    texts = [u["update"]["content"].get("text") for u in replay.updates if "content" in u["update"]]
    assert texts == ["say hello", "Let me think.", "Hello there, operator."]


async def test_fork_of_an_unknown_session_is_invalid_params(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call(
            "session/fork", {"sessionId": "unknownSession0000000000", "cwd": str(client.workspace)}
        )
    assert reply.error["data"] == {"sessionId": "unknown session"}


async def test_fork_checks_additional_directories_before_writing_anything(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    extra = tmp_path / "modules"
    extra.mkdir()
    async with open_agent(tmp_path, [greeting_turn()]) as client:
        source_id, _ = await streamed_session(client)
        fork = {"sessionId": source_id, "cwd": str(client.workspace)}
        bad = await client.call("session/fork", {**fork, "additionalDirectories": ["rel/dir"]})
        assert bad.error["code"] == -32602
        assert bad.error["data"] == {"additionalDirectories[0]": "must be an absolute path"}
        assert [m.session_id for m in SessionStore(home).list()[0]] == [source_id]
        good = await client.call("session/fork", {**fork, "additionalDirectories": [str(extra)]})
        fork_id = good.result["sessionId"]
    assert SessionStore(home).get_meta(fork_id).additional_directories == (str(extra),)


# ---------------------------------------------------------------------------- close, delete


async def test_close_is_idempotent_and_requests_naming_it_fail_until_loaded(
    tmp_path: Path,
) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        assert (await client.call("session/close", {"sessionId": session_id})).result == {}
        assert (await client.call("session/close", {"sessionId": session_id})).result == {}
        unknown = await client.call("session/close", {"sessionId": "neverExisted000000000000"})
        assert unknown.result == {}

        prompt = await client.prompt(session_id, "hello?")
        assert prompt.error["code"] == -32602
        assert prompt.error["data"] == {"sessionId": "unknown session"}
        mode = await client.call(
            "session/set_mode", {"sessionId": session_id, "modeId": "read_only"}
        )
        assert mode.error["data"] == {"sessionId": "unknown session"}

        await client.load(session_id)
        again = await client.prompt(session_id, "hello again")
    assert again.result["stopReason"] == "end_turn"


async def test_close_keeps_the_history_on_disk(tmp_path: Path) -> None:
    async with open_agent(tmp_path, [greeting_turn()]) as client:
        session_id, _ = await streamed_session(client)
        await client.call("session/close", {"sessionId": session_id})
    kinds = [e["type"] for e in read_events(tmp_path / "home", session_id)]
    assert kinds == ["user_message", "assistant_message"]


async def test_delete_is_idempotent_and_removes_the_session_everywhere(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with open_agent(tmp_path) as client:
        keep = await client.new_session()
        doomed = await client.new_session()
        assert (await client.call("session/delete", {"sessionId": doomed})).result == {}
        assert (await client.call("session/delete", {"sessionId": doomed})).result == {}
        listed = (await client.call("session/list", {})).result["sessions"]
        load = await client.load(doomed)
    assert [s["sessionId"] for s in listed] == [keep]
    assert load.error["data"] == {"sessionId": "unknown session"}
    assert not (home / "sessions" / doomed).exists()
    assert SessionStore(home).get_meta(doomed) is None


# ---------------------------------------------------------------------------- session/list


async def test_list_is_empty_when_there_are_no_sessions(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call("session/list", {})
    assert reply.result == {"sessions": []}


async def test_list_shows_the_most_recently_used_session_first(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        first = await client.new_session()
        second = await client.new_session()
        third = await client.new_session()
        await client.prompt(first, "bring me to the top")
        sessions = (await client.call("session/list", {})).result["sessions"]
    assert [s["sessionId"] for s in sessions] == [first, third, second]
    stamps = [s["updatedAt"] for s in sessions]
    assert stamps == sorted(stamps, reverse=True)
    assert sessions[0]["title"] == "bring me to the top"
    assert sessions[0]["cwd"] == str(tmp_path / "ws")


async def test_list_filters_by_cwd(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    async with open_agent(tmp_path) as client:
        here = await client.new_session()
        there = await client.new_session(cwd=other)
        mine = (await client.call("session/list", {"cwd": str(client.workspace)})).result
        theirs = (await client.call("session/list", {"cwd": str(other)})).result
    assert [s["sessionId"] for s in mine["sessions"]] == [here]
    assert [s["sessionId"] for s in theirs["sessions"]] == [there]


async def test_list_pages_through_many_sessions_with_a_cursor(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        created = {await client.new_session() for _ in range(53)}
        first = (await client.call("session/list", {})).result
        assert len(first["sessions"]) == 50
        assert isinstance(first["nextCursor"], str)
        second = (await client.call("session/list", {"cursor": first["nextCursor"]})).result
    assert "nextCursor" not in second
    seen = [s["sessionId"] for s in first["sessions"] + second["sessions"]]
    assert len(seen) == len(set(seen)) == 53
    assert set(seen) == created


async def test_list_rejects_a_cursor_it_did_not_issue(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        await client.new_session()
        reply = await client.call("session/list", {"cursor": "not-a-real-cursor"})
    assert reply.error["code"] == -32602
    assert reply.error["data"] == {"cursor": "invalid cursor"}


async def test_list_includes_sessions_of_earlier_processes(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        old = await client.new_session()
    async with open_agent(tmp_path) as fresh:
        sessions = (await fresh.call("session/list", {})).result["sessions"]
    assert [s["sessionId"] for s in sessions] == [old]


async def test_sessions_list_is_an_alias_of_session_list(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        await client.new_session()
        await client.new_session()
        official = (await client.call("session/list", {})).result
        alias = (await client.call("sessions/list", {})).result
    assert alias == official
