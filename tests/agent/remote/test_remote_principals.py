"""Principals on the HTTP transport (``--auth tokens FILE``, ``--workspace-root``): two users of
one real server, each seeing only their own sessions and connections, and another user's
session answered exactly like one that never existed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer
from iac_code.remote.options import RemoteOptions
from iac_code.remote.principals import AuthConfigError, TokenTable, parse_token_lines
from iac_code.remote.serve import agent_handler_factory
from iac_code.store import new_session_id

from tests.agent.remote.remote_kit import (
    INIT,
    RunningServer,
    agent_settings,
    http_client,
    running_server,
    ws_client,
)

pytestmark = pytest.mark.anyio

ALICE_TOKEN = "alice-token-0123456789"
BOB_TOKEN = "bob-token-0123456789ab"
TOKENS_FILE = f"""# the team's tokens
{ALICE_TOKEN} alice

{BOB_TOKEN}   bob
"""
ROOT = Path(__file__).resolve().parents[3]


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@asynccontextmanager
async def team_server(
    home: Path, llm_url: str, workspace_root: Path | None = None
) -> AsyncIterator[RunningServer]:
    table = TokenTable(parse_token_lines(TOKENS_FILE, "tokens"))
    factory = agent_handler_factory(
        agent_settings(home, llm_url), owners=True, workspace_root=workspace_root
    )
    options = RemoteOptions(authenticator=table, workspace_root=workspace_root)
    async with running_server(factory, options) as server:
        yield server


def _error(reply: Any) -> dict[str, Any]:
    error: dict[str, Any] = reply.frame["error"]
    return error


async def test_another_principals_session_answers_like_an_unknown_one(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    root = tmp_path / "team"
    (root / "alice" / "infra").mkdir(parents=True)
    (root / "bob").mkdir()
    cwd = root / "alice" / "infra"
    async with (
        team_server(tmp_path / "home", llm_server.url, root) as server,
        http_client(server.url, **bearer(ALICE_TOKEN)) as alice,
        http_client(server.url, **bearer(BOB_TOKEN)) as bob,
    ):
        await alice.initialize()
        await bob.initialize()
        mine = await alice.new_session(cwd)
        await alice.request("session/close", {"sessionId": mine}, stream=mine)
        nobody = new_session_id()

        # session/list: bob sees nothing, alice sees hers.
        assert (await bob.request("session/list", {}))["sessions"] == []
        listed = await alice.request("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [mine]

        async def answers(session_id: str) -> list[Any]:
            """Bob's answers to every session method on ``session_id`` (ids masked)."""
            base = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
            calls: list[tuple[str, dict[str, Any]]] = [
                ("session/load", base),
                ("session/resume", base),
                ("session/fork", base),
                (
                    "session/prompt",
                    {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]},
                ),
                ("session/close", {"sessionId": session_id}),
                ("session/delete", {"sessionId": session_id}),
            ]
            await bob.transport.open_stream(session_id)  # where session answers arrive
            seen = []
            for method, params in calls:
                reply = await bob.call(method, params, stream=session_id)
                frame = {k: v for k, v in reply.frame.items() if k != "id"}
                seen.append((method, frame))
            return seen

        theirs = await answers(mine)
        unknown = await answers(nobody)
        assert theirs == unknown
        load_error = dict(theirs)["session/load"]["error"]
        assert load_error["code"] == -32602 and load_error["message"] == "Unknown session."

        # Bob's delete did nothing: alice still loads and prompts her session.
        loaded = await alice.load(mine, cwd)
        assert "result" in loaded.frame
        prompt = {"sessionId": mine, "prompt": [{"type": "text", "text": "still mine"}]}
        assert (await alice.request("session/prompt", prompt, stream=mine))[
            "stopReason"
        ] == "end_turn"

        # Alice's connection id is unknown to bob (404 like any unknown id).
        assert alice.transport.connection_id is not None
        async with httpx.AsyncClient() as http:
            headers = {"acp-connection-id": alice.transport.connection_id, **bearer(BOB_TOKEN)}
            message = {"jsonrpc": "2.0", "id": 9, "method": "session/list", "params": {}}
            stolen = await http.post(server.url, json=message, headers=headers)
            headers["acp-connection-id"] = "no-such-connection"
            made_up = await http.post(server.url, json=message, headers=headers)
            assert stolen.status_code == made_up.status_code == 404
            assert stolen.json()["error"] == made_up.json()["error"]
            gone = await http.delete(
                server.url, headers={**headers, "acp-connection-id": alice.transport.connection_id}
            )
            assert gone.status_code == 404


async def test_workspace_root_confines_session_directories(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    root = tmp_path / "team"
    for folder in ("alice/a", "bob/b"):
        (root / folder).mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "alice" / "escape").symlink_to(outside)
    async with (
        team_server(tmp_path / "home", llm_server.url, root) as server,
        http_client(server.url, **bearer(ALICE_TOKEN)) as alice,
    ):
        await alice.initialize()
        assert await alice.new_session(root / "alice")
        assert await alice.new_session(root / "alice" / "a")
        for refused in (root / "bob" / "b", outside, root, root / "alice" / "escape"):
            reply = await alice.call("session/new", {"cwd": str(refused), "mcpServers": []})
            error = _error(reply)
            assert error["code"] == -32602, refused
            assert error["message"] == "The directory is outside your workspace."
            assert str(root / "alice") in error["data"]["cwd"]
        extra = {
            "cwd": str(root / "alice"),
            "mcpServers": [],
            "additionalDirectories": [str(outside)],
        }
        error = _error(await alice.call("session/new", extra))
        assert error["code"] == -32602 and "additionalDirectories[0]" in error["data"]


async def test_unknown_or_missing_token_is_401(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    async with (
        team_server(tmp_path / "home", llm_server.url) as server,
        httpx.AsyncClient() as http,
    ):
        for headers in ({}, bearer("not-a-listed-token-at-all"), {"authorization": ALICE_TOKEN}):
            refused = await http.post(server.url, json=initialize, headers=headers)
            assert refused.status_code == 401, headers
            assert refused.headers["www-authenticate"] == "Bearer"
        accepted = await http.post(server.url, json=initialize, headers=bearer(BOB_TOKEN))
        assert accepted.status_code == 200


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "no 'TOKEN PRINCIPAL' line"),
        ("# only a comment\n\n", "no 'TOKEN PRINCIPAL' line"),
        (f"{ALICE_TOKEN}\n", "line 1: expected 'TOKEN PRINCIPAL', got 1 fields"),
        (f"\n{ALICE_TOKEN} alice extra\n", "line 2: expected 'TOKEN PRINCIPAL', got 3 fields"),
        ("short alice\n", "line 1: the token is shorter than 16 characters"),
        (f"{ALICE_TOKEN} ../alice\n", "line 1: bad principal '../alice'"),
        (f"{ALICE_TOKEN} alice\n{ALICE_TOKEN} bob\n", "line 2: this token is listed twice"),
    ],
)
def test_bad_tokens_files_are_refused_with_the_line(text: str, expected: str) -> None:
    with pytest.raises(AuthConfigError, match=expected.replace("(", r"\(")):
        parse_token_lines(text, "tokens.txt")


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "iac_code.cli", "acp", "--transport", "http", "--port", "0"]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=60, check=False, cwd=ROOT
    )


def test_a_bad_auth_configuration_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "tokens.txt"
    bad.write_text("just-one-field-here-long\n")
    cases = [
        (["--auth", "tokens", str(tmp_path / "missing.txt")], "cannot read the tokens file"),
        (["--auth", "tokens", str(bad)], "line 1: expected 'TOKEN PRINCIPAL'"),
        (["--auth", "tokens"], "--auth tokens needs exactly one FILE"),
        (["--auth", "basic"], "--auth must be 'tokens FILE' or 'jwt'"),
        (["--auth", "jwt", "--jwt-issuer", "https://id.test"], "--auth jwt needs --jwt-jwks-url"),
        (["--jwt-audience", "x"], "need --auth jwt"),
        (["--workspace-root", str(tmp_path / "nope")], "not a directory"),
    ]
    for args, expected in cases:
        done = _serve(*args)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (args, done.stderr)


async def test_websocket_connections_belong_to_their_principal(
    tmp_path: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    async with team_server(tmp_path / "home", llm_server.url) as server:
        async with ws_client(server.ws_url, **bearer(ALICE_TOKEN)) as alice:
            await alice.initialize()
            mine = await alice.new_session(workspace)
        async with ws_client(server.ws_url, **bearer(BOB_TOKEN)) as bob:
            await bob.initialize()
            assert (await bob.request("session/list", {}))["sessions"] == []
            error = (await bob.load(mine, workspace)).frame["error"]
            assert (error["code"], error["message"]) == (-32602, "Unknown session.")
        async with ws_client(server.ws_url, **bearer(ALICE_TOKEN)) as again:
            await again.initialize()
            listed = await again.request("session/list", {})
            assert [s["sessionId"] for s in listed["sessions"]] == [mine]


async def test_each_principal_pages_its_own_sessions_and_a_cursor_is_its_owners(
    tmp_path: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    """Listing filters by owner in the store: alice pages through her 60 sessions while bob's
    60 sit in between; her cursor, or a mangled one, is an invalid cursor (-32602) for bob."""
    from iac_code.store import SessionStore

    home = tmp_path / "home"
    seeded = SessionStore(home)
    alices: list[str] = []
    for number in range(120):
        owner = "alice" if number % 2 else "bob"
        session_id = seeded.create(new_session_id(), str(workspace), owner=owner).session_id
        seeded.update_meta(
            session_id, updated_at=f"2026-04-04T00:{number // 60:02d}:{number % 60:02d}Z"
        )
        if owner == "alice":
            alices.append(session_id)
    async with (
        team_server(home, llm_server.url) as server,
        http_client(server.url, **bearer(ALICE_TOKEN)) as alice,
        http_client(server.url, **bearer(BOB_TOKEN)) as bob,
    ):
        await alice.initialize()
        await bob.initialize()
        first = await alice.request("session/list", {})
        cursor = first["nextCursor"]
        rest = await alice.request("session/list", {"cursor": cursor})
        listed = [s["sessionId"] for s in first["sessions"] + rest["sessions"]]
        assert listed == list(reversed(alices)) and "nextCursor" not in rest

        for hostile in (cursor, cursor[:-3], "not a cursor", "A" * 600):
            reply = await bob.call("session/list", {"cursor": hostile})
            error = _error(reply)
            assert (error["code"], error["message"]) == (-32602, "Invalid cursor.")
        theirs = await bob.request("session/list", {})
        assert len(theirs["sessions"]) == 50 and "nextCursor" in theirs
        assert not set(alices) & {s["sessionId"] for s in theirs["sessions"]}
