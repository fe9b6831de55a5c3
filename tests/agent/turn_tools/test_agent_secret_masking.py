"""Secrets stay out of the model (SPEC §6): a canary test over read_file, grep, bash and
web_fetch. Credential-shaped values in a real file and a real page must reach neither the
model's requests, nor any frame the client receives, nor any file under the agent's home."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from acp_scripted_llm import Turn
from iac_code.tools.secret_masking import MASK
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    allow,
    final_update,
    in_memory_agent,
    result_text,
    tool_results_in,
)

pytestmark = pytest.mark.anyio

CANARIES = (
    "canary-PASSWORD-7f3a",
    "AKIACANARY0123456789",
    "wJalrCANARYsecretKEY0123456789abcdefXYZ",
    "MIIEcanaryPRIVATEkeyBODY",
    "ghp_CANARYcanaryCANARYcanaryCANARYcanary12",
)
SECRETS_FILE = f"""region      = "eu-west-1"
db_password = "{CANARIES[0]}"
aws_access_key_id     = {CANARIES[1]}
aws_secret_access_key = {CANARIES[2]}
github_token = {CANARIES[4]}
-----BEGIN RSA PRIVATE KEY-----
{CANARIES[3]}
-----END RSA PRIVATE KEY-----
"""


@pytest.fixture
def page_server() -> Iterator[str]:
    """A page on 127.0.0.1 quoting the same secrets."""
    body = f"<html><body><pre>{SECRETS_FILE}</pre></body></html>".encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/vars"
    finally:
        server.shutdown()
        server.server_close()


def files_text(root: Path) -> str:
    return "".join(
        path.read_text(errors="replace") for path in sorted(root.rglob("*")) if path.is_file()
    )


async def test_canaries_reach_neither_model_nor_client_nor_session_file(
    workspace: Path, home: Path, page_server: str
) -> None:
    (workspace / "prod.tfvars").write_text(SECRETS_FILE)
    model = ScriptedModelClient(
        [
            Turn()
            .tool_use("read_file", {"path": "prod.tfvars"}, id="t_read")
            .tool_use("grep", {"pattern": "password|key|token|PRIVATE|^[A-Z]"}, id="t_grep"),
            Turn().tool_use("bash", {"command": "cat prod.tfvars"}, id="t_bash"),
            Turn().tool_use("web_fetch", {"url": page_server}, id="t_web"),
            Turn().text("done"),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("allow_once")
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "show me the variables")
        for tool_id in ("t_read", "t_grep", "t_bash", "t_web"):
            assert final_update(run.client, tool_id)["status"] == "completed", tool_id
        client_saw = json.dumps(run.client.frames)
    model_saw = json.dumps([request.messages for request in model.requests])
    on_disk = files_text(home)
    results = tool_results_in(model.requests[-1].messages)
    for tool_id in ("t_read", "t_grep", "t_bash", "t_web"):
        text = result_text(results[tool_id])
        assert MASK in text and "db_password" in text, (tool_id, text)  # names stay
    for canary in CANARIES:
        assert canary not in model_saw, model_saw[model_saw.index(canary) - 300 :][:400]
        assert canary not in client_saw, canary
        assert canary not in on_disk, canary
    assert "db_password" in on_disk  # the names stay, only the values go


async def test_writing_the_mask_back_is_refused(workspace: Path, home: Path) -> None:
    (workspace / "prod.tfvars").write_text(SECRETS_FILE)
    masked_line = f'db_password = "{MASK}"'
    model = ScriptedModelClient(
        [
            Turn().tool_use(
                "write_file", {"path": "prod.tfvars", "content": masked_line + "\n"}, id="w1"
            ),
            Turn().tool_use(
                "edit_file",
                {"path": "prod.tfvars", "old_string": "eu-west-1", "new_string": MASK},
                id="e1",
            ),
            Turn().tool_use(
                "edit_file",
                {"path": "prod.tfvars", "old_string": masked_line, "new_string": "x = 1"},
                id="e2",
            ),
            Turn().text("done"),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "rewrite")
    assert (workspace / "prod.tfvars").read_text() == SECRETS_FILE
    results = tool_results_in(model.requests[-1].messages)
    assert "would destroy the real value" in result_text(results["w1"])
    assert "would destroy the real value" in result_text(results["e1"])
    assert "stands for a secret" in result_text(results["e2"])
