"""The ASGI application: ``/acp`` (HTTP and WebSocket), ``/openapi.json``, ``/metrics``,
``/healthz`` and ``/readyz``, behind the guard."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute

from iac_code import telemetry
from iac_code.remote.guard import GuardMiddleware
from iac_code.remote.health import Readiness
from iac_code.remote.http_endpoint import AcpHttpEndpoint
from iac_code.remote.options import RemoteOptions, is_loopback_host
from iac_code.remote.registry import ConnectionRegistry
from iac_code.remote.remote_connection import HandlerFactory
from iac_code.remote.websocket import AcpWebSocketEndpoint

__all__ = ["build_app", "openapi_document"]


@cache
def openapi_document() -> bytes:
    """The checked-in OpenAPI document generated from ``schema/`` (see ``acp_schema.openapi``)."""
    text = resources.files("acp_bindings").joinpath("openapi.json").read_text(encoding="utf-8")
    return json.dumps(json.loads(text), separators=(",", ":")).encode()


async def _openapi(request: Request) -> Response:
    del request
    return Response(openapi_document(), media_type="application/json")


async def _metrics(request: Request) -> Response:
    """Prometheus text of the agent's metrics (``OTEL_METRICS_EXPORTER=prometheus``), else 404."""
    del request
    text = telemetry.prometheus_text()
    if text is None:
        return Response(
            "metrics are off: set OTEL_METRICS_EXPORTER=prometheus (needs iac-code-acp[otel])\n",
            status_code=404,
            media_type="text/plain",
        )
    from iac_code.telemetry.prometheus import CONTENT_TYPE

    return Response(text, media_type=CONTENT_TYPE)


def build_app(
    make_handler: HandlerFactory, options: RemoteOptions, readiness: Readiness | None = None
) -> tuple[Starlette, ConnectionRegistry]:
    """The application and its registry (the registry runs during the app's lifespan).

    ``app.state.readiness`` is what ``/readyz`` reports; a drain sets it not ready.
    """
    registry = ConnectionRegistry(make_handler, options.limits)
    readiness = readiness or Readiness()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        del app
        try:
            async with registry.running():
                yield
        finally:
            # Resources the handler factory shares between connections (a model client).
            close = getattr(make_handler, "aclose", None)
            if close is not None:
                await close()

    app = Starlette(
        routes=[
            Route("/acp", AcpHttpEndpoint(registry)),
            WebSocketRoute("/acp", AcpWebSocketEndpoint(registry)),
            Route("/openapi.json", _openapi, methods=["GET"]),
            Route("/metrics", _metrics, methods=["GET"]),
            Route("/healthz", readiness.healthz, methods=["GET"]),
            Route("/readyz", readiness.readyz, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.readiness = readiness
    app.add_middleware(
        GuardMiddleware,
        token=options.token,
        authenticator=options.authenticator,
        allowed_origins=options.allowed_origins,
        check_host=is_loopback_host(options.host),
        allowed_hosts=options.allowed_hosts,
    )
    return app, registry
