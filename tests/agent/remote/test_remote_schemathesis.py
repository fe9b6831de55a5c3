"""Property-based tests of the ASGI app from its own ``/openapi.json`` (schemathesis).

Stateless: every operation with generated headers and bodies (any JSON-RPC message the
schema allows). Stateful: the links in the document feed the ``Acp-Connection-Id`` of an
``initialize`` answer into later POSTs and into DELETE, so the generated traffic reaches
live connections and the real agent behind them. Checked on every response: no 5xx, the
status code, content type, headers and body are all the documented ones.

Agent errors (a prompt for an unknown session, a bad ``cwd``) are JSON-RPC answers on the
streams, not HTTP errors, so the "reject invalid data with 4xx" checks do not apply to
bodies and are not run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from iac_code.remote.app import build_app
from iac_code.remote.options import RemoteLimits, RemoteOptions
from iac_code.remote.serve import agent_handler_factory
from iac_code.settings import Settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

_HOME = tempfile.TemporaryDirectory(prefix="iac-remote-schemathesis-")
# Model calls go to a closed port: a generated prompt that reaches a real session fails fast.
_SETTINGS = Settings(
    home=Path(_HOME.name), api_key="k", base_url="http://127.0.0.1:9", retry_base_delay=0.0
)
_APP, _ = build_app(
    agent_handler_factory(_SETTINGS),
    # The ASGI test client sends `Host: testserver`, which a loopback server refuses (421)
    # unless it is allowed, as a user would with --allow-host.
    RemoteOptions(
        limits=RemoteLimits(max_connections=64, initialize_timeout_seconds=10),
        allowed_hosts=("testserver",),
    ),
)
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", _APP)
# Valid traffic only (see the module docstring); no shrinking keeps a failing run short.
SCHEMA.config.generation.update(modes=[GenerationMode.POSITIVE], no_shrink=True)
STATUSES: list[tuple[str, int]] = []
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
_SETTINGS_FAST = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)


LIVE_CONNECTIONS: list[str] = []
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}


@schemathesis.hook
def before_call(context: object, case: schemathesis.Case, kwargs: dict[str, object]) -> None:
    """Point generated traffic at live connections, so it reaches the agent behind them.

    Random ``Acp-Connection-Id`` values only ever meet the 404 path; here a generated id is
    swapped for a live one, and when none is live the request becomes an ``initialize``.
    """
    del context, kwargs
    if case.operation.schema is not SCHEMA:
        return
    headers = dict(case.headers or {})
    if case.method == "POST" and not LIVE_CONNECTIONS:
        case.body = dict(INITIALIZE)
    body = case.body
    if isinstance(body, dict) and body.get("method") == "initialize" and "id" in body:
        headers.pop("Acp-Connection-Id", None)
    elif LIVE_CONNECTIONS and "Acp-Connection-Id" in headers:
        headers["Acp-Connection-Id"] = LIVE_CONNECTIONS[len(STATUSES) % len(LIVE_CONNECTIONS)]
    case.headers = headers


@schemathesis.hook
def after_call(context: object, case: schemathesis.Case, response: object) -> None:
    del context
    if case.operation.schema is not SCHEMA:
        return
    status = response.status_code  # type: ignore[attr-defined]
    STATUSES.append((case.method, status))
    sent = (case.headers or {}).get("Acp-Connection-Id")
    if status == 200:
        value = response.headers.get("acp-connection-id")  # type: ignore[attr-defined]
        LIVE_CONNECTIONS.append(value[0] if isinstance(value, list) else value)
    elif sent in LIVE_CONNECTIONS and (
        (case.method == "DELETE" and status == 202) or status == 404
    ):
        # Closed by this DELETE, or no longer known to the app (CI once saw a run whose every
        # request went to such ids: only 400/404): no later request should be pointed at it.
        LIVE_CONNECTIONS.remove(sent)


@SCHEMA.exclude(method="GET").parametrize()
@_SETTINGS_FAST
def test_every_operation_answers_as_documented(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=CHECKS)


class Workflow(SCHEMA.as_state_machine()):  # type: ignore[misc]
    def validate_response(self, response, case, additional_checks=(), **kwargs):  # type: ignore[no-untyped-def]
        case.validate_response(response, checks=CHECKS)


TestStatefulWorkflow = Workflow.TestCase
TestStatefulWorkflow.settings = settings(
    max_examples=8,
    stateful_step_count=5,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)


def test_generated_traffic_reached_live_connections() -> None:
    """Guards the hooks above: without them every request would stop at 400/404.

    It drives a short stateful run of its own, so it judges something wherever pytest-xdist
    puts it (it used to read what the tests above recorded, and skipped when they ran on
    another worker). It starts with no live connections (those an earlier test on this worker
    left may be gone) and derandomized, so what it judges does not depend on the draw."""
    STATUSES.clear()
    LIVE_CONNECTIONS.clear()
    guard_settings = settings(TestStatefulWorkflow.settings, derandomize=True)
    run_state_machine_as_test(Workflow, settings=guard_settings)
    seen = {status for _, status in STATUSES}
    assert {200, 202} <= seen, seen
