"""deploy/ as plain processes: the Dockerfile's entrypoint with the compose file's replica
commands (two replicas on one PostgreSQL from the test fixture), and HAProxy with
deploy/haproxy.cfg in front when ``haproxy`` is installed. Containers are not available here,
so the only changes are the ones one host needs: loopback addresses and free ports, the
fixture's database URL and the tokens file's path."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml
from acp_scripted_llm import ScriptedLLMServer
from anyio.abc import Process

from tests.agent.remote.remote_kit import INIT, TIMEOUT, announced_url, http_client
from tests.agent.store.postgres_server import (
    PostgresServer,
    free_port,
    running_server,
    skip_or_fail,
)

pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("postgres")]

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
TOKENS_SECRET = "/run/secrets/acp-tokens"
ALICE = "alice-token-for-the-deploy-test"
BOB = "bob-token-for-the-deploy-test"
HAPROXY_REQUIRED = "IAC_CODE_REQUIRE_HAPROXY"


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[PostgresServer]:
    with running_server() as server:
        yield server


def entrypoint() -> list[str]:
    """The Dockerfile's ENTRYPOINT (exec form)."""
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        if line.startswith("ENTRYPOINT "):
            value: list[str] = json.loads(line.removeprefix("ENTRYPOINT "))
            return value
    raise AssertionError("deploy/Dockerfile has no ENTRYPOINT")


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def test_the_image_and_compose_file_say_what_the_brief_asks() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "\nUSER iac\n" in dockerfile  # not root
    assert '"./runtime[http,postgres,jwt]"' in dockerfile and "./generated" in dockerfile
    assert entrypoint()[:4] == ["iac-code", "acp", "--transport", "http"]
    services = compose()["services"]
    assert {"postgres", "replica1", "replica2", "haproxy"} <= set(services)
    assert services["replica1"] == services["replica2"]
    assert services["haproxy"]["environment"]["REPLICA1_ADDR"] == "replica1:8765"


def replica_command(tokens: Path, port: int) -> list[str]:
    """The compose service's command after the image's entrypoint, as this host runs it."""
    service = compose()["services"]["replica1"]
    args = [str(tokens) if arg == TOKENS_SECRET else arg for arg in service["command"]]
    program = [sys.executable, "-m", "iac_code.cli"]  # the `iac-code` script of this venv
    # Later flags win: one host, so loopback and distinct ports instead of 0.0.0.0:8765.
    return [*program, *entrypoint()[1:], *args, "--host", "127.0.0.1", "--port", str(port)]


@asynccontextmanager
async def started(
    command: list[str], env: dict[str, str], ready: str | None
) -> AsyncIterator[Process]:
    async with await anyio.open_process(command, env=env, cwd=ROOT) as process:
        try:
            if ready is not None:
                assert process.stderr is not None
                await announced_url(process.stderr)
            yield process
        finally:
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(TIMEOUT):
                    await process.wait()
            if process.returncode is None:
                process.kill()


async def _wait_until_routed(http: httpx.AsyncClient, url: str) -> None:
    """HAProxy marks servers up after its first health checks: ask until it answers 200."""
    with anyio.fail_after(TIMEOUT * 2):
        while True:
            try:
                if (await http.get(url.replace("/acp", "/healthz"))).status_code == 200:
                    ready = await http.post(url, json=_initialize(), headers=_auth())
                    if ready.status_code == 200:
                        return
            except httpx.TransportError:
                pass
            await anyio.sleep(0.1)


def _initialize() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}


def _auth() -> dict[str, str]:
    return {"authorization": f"Bearer {ALICE}"}


async def test_compose_services_as_processes_route_by_connection_id(
    tmp_path: Path,
    workspace: Path,
    llm_server: ScriptedLLMServer,
    postgres_server: PostgresServer,
) -> None:
    tokens = tmp_path / "acp-tokens"
    tokens.write_text(f"# deploy test\n{ALICE} alice\n{BOB} bob\n")
    store_url = postgres_server.url(schema=postgres_server.new_schema())
    service_env = compose()["services"]["replica1"]["environment"]
    assert service_env["IAC_CODE_STORE_URL"].startswith("postgresql://")
    env = {
        **os.environ,
        "IAC_CODE_STORE_URL": store_url,  # the fixture's server instead of the postgres service
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": llm_server.url,
    }
    ports = [free_port(), free_port()]
    async with AsyncExitStack() as stack:
        processes = []
        for index, port in enumerate(ports):
            home = {"IAC_CODE_HOME": str(tmp_path / f"home{index}")}
            processes.append(
                await stack.enter_async_context(
                    started(replica_command(tokens, port), {**env, **home}, ready="serving")
                )
            )
        replicas = [f"http://127.0.0.1:{port}/acp" for port in ports]
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            for url in replicas:
                assert (await http.get(url.replace("/acp", "/readyz"))).status_code == 200
                assert (await http.post(url, json=_initialize())).status_code == 401
        haproxy = shutil.which("haproxy")
        if haproxy is None:
            message = "haproxy is not installed (apt-get install -y haproxy): routing not tested"
            skip_or_fail(message, HAPROXY_REQUIRED)
        front = free_port()
        proxy_env = {
            **os.environ,
            "ACP_BIND": f"127.0.0.1:{front}",
            "REPLICA1_ADDR": f"127.0.0.1:{ports[0]}",
            "REPLICA2_ADDR": f"127.0.0.1:{ports[1]}",
        }
        command = shlex.split(" ".join(compose()["services"]["haproxy"]["command"]))
        command = [haproxy, *command[1:]]
        command[command.index("/usr/local/etc/haproxy/haproxy.cfg")] = str(DEPLOY / "haproxy.cfg")
        await stack.enter_async_context(started(command, proxy_env, ready=None))
        url = f"http://127.0.0.1:{front}/acp"
        # A fresh TCP connection per request: routing must hold without keep-alive.
        fresh = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=TIMEOUT, limits=fresh) as http:
            await _wait_until_routed(http, url)
            owners: dict[str, int] = {}
            for _ in range(4):  # round robin: both replicas get connections
                http.cookies.clear()  # a new client: no replica cookie yet
                answer = await http.post(url, json=_initialize(), headers=_auth())
                assert answer.status_code == 200
                assert "ACP_REPLICA=" in answer.headers.get("set-cookie", "")
                connection_id = answer.headers["acp-connection-id"]
                owners[connection_id] = await _owner(http, replicas, connection_id)
            assert set(owners.values()) == {0, 1}
            http.cookies.clear()
            listing = {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}}
            for connection_id in owners:
                for _ in range(3):
                    headers = {**_auth(), "acp-connection-id": connection_id}
                    routed = await http.post(url, json=listing, headers=headers)
                    assert routed.status_code == 202, routed.text  # 404 = the wrong replica
                    http.cookies.clear()
        # A whole session through the balancer: SSE streams and answers come back.
        async with http_client(url, **_auth()) as client:
            await client.initialize()
            session_id = await client.new_session(workspace)
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
            answer = await client.request("session/prompt", prompt, stream=session_id)
            assert answer["stopReason"] == "end_turn"
            await client.request("session/close", {"sessionId": session_id}, stream=session_id)
        # Bob, on whichever replica the balancer picks, cannot see or load it (a shared store).
        for _ in range(2):
            bob = {"authorization": f"Bearer {BOB}"}
            async with http_client(url, **bob) as other:
                await other.initialize()
                assert (await other.request("session/list", {}))["sessions"] == []
                await other.transport.open_stream(session_id)
                error = (await other.load(session_id, workspace)).frame["error"]
                assert (error["code"], error["message"]) == (-32602, "Unknown session.")
        # The replica holding a connection dies: the balancer sends the connection's next
        # request to the survivor, which does not serve it but says to reconnect; the client
        # does, through the balancer, and loads its session from the shared store.
        connection_id, holder = next(iter(owners.items()))
        processes[holder].kill()
        with anyio.fail_after(TIMEOUT):  # bounded like every wait (SIGKILL ends it at once)
            await processes[holder].wait()
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            headers = {**_auth(), "acp-connection-id": connection_id}
            assert_reconnect(await http.post(url, json=listing, headers=headers))
        async with http_client(url, **_auth()) as client:
            await client.initialize()
            await client.transport.open_stream(session_id)
            assert "error" not in (await client.load(session_id, workspace)).frame


def assert_reconnect(answer: httpx.Response) -> None:
    """The wrong replica's answer: 404, and a body that tells the client to start over."""
    assert answer.status_code == 404, answer.text
    error = answer.json()["error"]
    assert error["message"].startswith("Unknown Acp-Connection-Id: start a new connection")
    assert error["data"]["reconnect"] == "initialize"


async def _owner(http: httpx.AsyncClient, replicas: list[str], connection_id: str) -> int:
    """Which replica holds the connection, asked directly: the other one never serves it
    (404 telling the client to reconnect), for a request, a notification or a stream."""
    found = []
    for index, url in enumerate(replicas):
        headers = {**_auth(), "acp-connection-id": connection_id}
        listing = {"jsonrpc": "2.0", "id": 7, "method": "session/list", "params": {}}
        answer = await http.post(url, json=listing, headers=headers)
        if answer.status_code == 202:
            found.append(index)
            continue
        assert_reconnect(answer)
        assert answer.json()["id"] == 7  # the refusal names the request it refuses
        ping = {"jsonrpc": "2.0", "method": "$/ping"}
        assert_reconnect(await http.post(url, json=ping, headers=headers))
        stream = {**headers, "accept": "text/event-stream"}
        assert_reconnect(await http.get(url, headers=stream))
    assert len(found) == 1, found
    return found[0]
