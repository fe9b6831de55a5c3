"""web_fetch's SSRF guard through the agent: loopback targets ask first (SPEC §5)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from acp_scripted_llm import Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    allow,
    final_update,
    in_memory_agent,
    result_text,
    statuses,
    tool_results_in,
)

pytestmark = pytest.mark.anyio


class LocalSite:
    """A tiny HTTP server on 127.0.0.1 that records the paths it was asked for."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.paths.append(self.path)
                if self.path == "/hop":
                    self.send_response(302)
                    self.send_header("Location", f"http://localhost:{site.port}/secret")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"<html><body><h1>Internal admin</h1><p>token=abc</p></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> LocalSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with LocalSite() as server:
        yield server


def fetch_turn(url: str, tool_id: str) -> Turn:
    return Turn().tool_use("web_fetch", {"url": url}, id=tool_id)


async def test_rejected_loopback_fetch_never_reaches_the_server(
    workspace: Path, home: Path, site: LocalSite
) -> None:
    url = f"http://127.0.0.1:{site.port}/admin"
    model = ScriptedModelClient([fetch_turn(url, "f1")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("reject_once")
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "fetch")

        [ask] = run.client.requests_for("session/request_permission")
        assert ask["params"]["toolCall"]["toolCallId"] == "f1"
        assert ask["params"]["toolCall"]["kind"] == "fetch"
        assert "loopback" in ask["params"]["_meta"]["iac_code"]["reason"].lower()
        assert site.paths == []
        assert statuses(run.client, "f1") == ["pending", "failed"]
        block = tool_results_in(model.requests[-1].messages)["f1"]
        assert "declined" in result_text(block) and "token" not in result_text(block)


async def test_allowed_loopback_fetch_is_fetched_and_asks_every_time(
    workspace: Path, home: Path, site: LocalSite
) -> None:
    url = f"http://127.0.0.1:{site.port}/admin"
    model = ScriptedModelClient([fetch_turn(url, "f1"), fetch_turn(url, "f2")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("allow_always")
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "fetch twice")

        assert site.paths == ["/admin", "/admin"]
        # allow_always never covers a private-network target: the second fetch asked too.
        assert len(run.client.requests_for("session/request_permission")) == 2
        final = final_update(run.client, "f1")
        assert final["status"] == "completed"
        assert final["rawOutput"]["status"] == 200
        text = result_text(tool_results_in(model.requests[-1].messages)["f2"])
        assert "Internal admin" in text and "<h1>" not in text


async def test_a_redirect_to_another_private_host_is_checked_again(
    workspace: Path, home: Path, site: LocalSite
) -> None:
    model = ScriptedModelClient(
        [fetch_turn(f"http://127.0.0.1:{site.port}/hop", "f1")], timing=False
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("allow_once")
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "follow")
        assert site.paths == ["/hop"]  # /secret on "localhost" was never requested
        assert final_update(run.client, "f1")["status"] == "failed"
        assert "Blocked a redirect" in result_text(
            tool_results_in(model.requests[-1].messages)["f1"]
        )
