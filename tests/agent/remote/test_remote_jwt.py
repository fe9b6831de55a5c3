"""``--auth jwt``: bearer tokens signed with keys the test makes (RS256 and ES256), published
as a JWKS by a local HTTP server, checked by a real agent server for signature, expiry,
issuer and audience; the principal comes from ``sub`` or a configured claim."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer

jwt = pytest.importorskip("jwt", reason="--auth jwt needs the jwt extra (PyJWT[crypto])")

from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from iac_code.remote.jwt_auth import JwtVerifier  # noqa: E402
from iac_code.remote.options import RemoteOptions  # noqa: E402
from iac_code.remote.serve import agent_handler_factory  # noqa: E402

from tests.agent.remote.remote_kit import INIT, agent_settings, http_client, running_server  # noqa: E402

pytestmark = pytest.mark.anyio

ISSUER = "https://id.example.test"
AUDIENCE = "iac-code"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}


class Keys:
    """Two signing keys and the JWKS that publishes their public halves."""

    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwks(self) -> bytes:
        keys = []
        for kid, key, alg in (("rsa-1", self.rsa, "RS256"), ("ec-1", self.ec, "ES256")):
            algorithm = jwt.get_algorithm_by_name(alg)
            jwk = json.loads(algorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "alg": alg, "use": "sig"})
        return json.dumps({"keys": keys}).encode()

    def token(self, kind: str = "rsa", **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 600}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        if kind == "ec":
            return jwt.encode(body, self.ec, algorithm="ES256", headers={"kid": "ec-1"})
        if kind == "stranger":  # signed by a key the JWKS does not hold, under a known kid
            return jwt.encode(body, self.stranger, algorithm="RS256", headers={"kid": "rsa-1"})
        return jwt.encode(body, self.rsa, algorithm="RS256", headers={"kid": "rsa-1"})


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


@pytest.fixture(scope="module")
def jwks_url(keys: Keys) -> Iterator[str]:
    body = keys.jwks()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            del format, args

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _server(home: Path, llm_url: str, verifier: JwtVerifier) -> Any:
    factory = agent_handler_factory(agent_settings(home, llm_url), owners=True)
    return running_server(factory, RemoteOptions(authenticator=verifier))


async def test_tokens_are_checked_against_the_jwks(
    tmp_path: Path, llm_server: ScriptedLLMServer, keys: Keys, jwks_url: str
) -> None:
    verifier = JwtVerifier(jwks_url, issuer=ISSUER, audience=AUDIENCE)
    async with (
        _server(tmp_path / "home", llm_server.url, verifier) as server,
        httpx.AsyncClient() as http,
    ):

        async def answer(token: str | None) -> httpx.Response:
            headers = {} if token is None else {"authorization": f"Bearer {token}"}
            return await http.post(server.url, json=INITIALIZE, headers=headers)

        assert (await answer(keys.token("rsa"))).status_code == 200
        assert (await answer(keys.token("ec"))).status_code == 200
        refusals = {
            "missing": (None, "Missing bearer token"),
            "expired": (keys.token(exp=int(time.time()) - 120), "has expired"),
            "issuer": (keys.token(iss="https://evil.test"), "wrong issuer"),
            "audience": (keys.token(aud="another-app"), "wrong audience"),
            "no exp": (keys.token(exp=None), "Invalid bearer token"),
            "signature": (keys.token("stranger"), "Invalid bearer token"),
            "garbage": ("not.a.jwt", "Invalid bearer token"),
            "bad sub": (keys.token(sub="../root"), "'sub' claim is not a usable name"),
        }
        for case, (token, message) in refusals.items():
            refused = await answer(token)
            assert refused.status_code == 401, case
            assert refused.headers["www-authenticate"] == "Bearer", case
            assert message in refused.json()["error"]["message"], case


async def test_sessions_belong_to_the_token_subject(
    tmp_path: Path, llm_server: ScriptedLLMServer, keys: Keys, jwks_url: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    verifier = JwtVerifier(jwks_url, issuer=ISSUER, audience=AUDIENCE, principal_claim="email")
    alice = {"authorization": f"Bearer {keys.token(email='alice@example.test')}"}
    # Signed with the other key, another subject claim: only ``email`` names the principal.
    also_alice = {
        "authorization": f"Bearer {keys.token('ec', sub='x', email='alice@example.test')}"
    }
    bob = {"authorization": f"Bearer {keys.token(email='bob@example.test')}"}
    async with _server(tmp_path / "home", llm_server.url, verifier) as server:
        async with http_client(server.url, **alice) as first:
            await first.initialize()
            session_id = await first.new_session(workspace)
        async with (
            http_client(server.url, **also_alice) as again,
            http_client(server.url, **bob) as other,
        ):
            await again.initialize()
            await other.initialize()
            listed = await again.request("session/list", {})
            assert [s["sessionId"] for s in listed["sessions"]] == [session_id]
            assert (await other.request("session/list", {}))["sessions"] == []


async def test_an_unreachable_jwks_is_503_not_a_crash(
    tmp_path: Path, llm_server: ScriptedLLMServer, keys: Keys
) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    verifier = JwtVerifier(f"http://127.0.0.1:{port}/jwks.json", issuer=ISSUER, audience=AUDIENCE)
    async with (
        _server(tmp_path / "home", llm_server.url, verifier) as server,
        httpx.AsyncClient() as http,
    ):
        headers = {"authorization": f"Bearer {keys.token()}"}
        refused = await http.post(server.url, json=INITIALIZE, headers=headers)
        assert refused.status_code == 503
        assert "cannot be fetched" in refused.json()["error"]["message"]
        assert (await http.get(server.url.replace("/acp", "/healthz"))).status_code == 200
