"""The connection's request handler: one :class:`Router` per negotiated protocol version.

``initialize`` picks the version (:func:`~iac_code.protocol_versions.negotiate_initialize`) and is
served by that version's router; every later message goes to the router of the version the
last ``initialize`` agreed on. Until then — and whenever the client asks for 1 — the v1
router serves the connection unchanged. The v2 router, its handlers and the v2 bindings are
built on the first v2 ``initialize`` only, so v1 start-up never imports them.

Errors need no translation between the versions: every version's bindings re-export one
error tree (``acp_bindings.shared_errors``), so an error a v2 handler raises is the
``RpcError`` the connection answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iac_code.negotiated_peer import NegotiatedPeer
from iac_code.protocol_versions import negotiate_initialize
from iac_code.router import Router

if TYPE_CHECKING:
    from collections.abc import Callable

    from iac_code.agent.acp_agent import IacAgent
    from iac_code.rpc.connection import Connection
    from iac_code.rpc.context import RequestContext


def route_versions(
    connection: Connection, build_agent: Callable[[NegotiatedPeer], IacAgent]
) -> tuple[IacAgent, VersionedRouter]:
    """The agent on ``connection`` and the router to serve it, for either protocol version.

    The agent (built by ``build_agent``) sends through a :class:`NegotiatedPeer`, which the
    router switches to the version each ``initialize`` agrees on.
    """
    peer = NegotiatedPeer(connection)
    agent = build_agent(peer)
    return agent, VersionedRouter(agent, peer)


def requested_version(params: object) -> int | None:
    """The ``protocolVersion`` an ``initialize`` asks for, when it is a plain integer."""
    if not isinstance(params, dict):
        return None
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int):
        return None
    return version


class VersionedRouter:
    def __init__(self, agent: IacAgent, peer: NegotiatedPeer) -> None:
        self._agent = agent
        self._peer = peer
        self._routers: dict[int, Router] = {1: Router(agent)}

    @property
    def version(self) -> int:
        return self._peer.version

    def adopt_fast_initialize(self, params: dict[str, Any]) -> None:
        """The start-up fast path answered ``initialize``; take on the version it agreed."""
        version = negotiate_initialize(params)
        self._peer.version = version
        if version == 1:
            self._agent.remember_fast_initialize(params)
        else:
            from iac_code.v2.info import v1_client_capabilities  # v2 only: imported on use

            caps = v1_client_capabilities(params.get("capabilities"))
            self._agent.remember_fast_initialize({"clientCapabilities": caps})
            self._router(version)  # load the v2 bindings now, not on the first session/new

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        if method != "initialize":
            return await self._call(self.version, ctx, method, params)
        requested = requested_version(params)
        # A malformed version is left to the current router, which answers -32602.
        version = self.version
        if requested is not None and isinstance(params, dict):
            version = negotiate_initialize(params)
        result = await self._call(version, ctx, method, params)
        self._peer.version = version
        return result

    async def handle_notification(self, method: str, params: object) -> None:
        await self._router(self.version).handle_notification(method, params)

    async def _call(self, version: int, ctx: RequestContext, method: str, params: object) -> object:
        return await self._router(version).handle_request(ctx, method, params)

    def _router(self, version: int) -> Router:
        router = self._routers.get(version)
        if router is None:
            router = self._routers[version] = self._build(version)
        return router

    def _build(self, version: int) -> Router:
        if version != 2:
            raise ValueError(f"no handlers for protocol version {version}")
        from acp_bindings.v2.methods import METHODS as V2_METHODS

        from iac_code.v2.handlers import V2Handlers

        # Build the validators of the first requests of a session now (the models defer
        # building until first use), as the v1 runtime does for its models at start-up.
        for method in ("session/new", "session/prompt"):
            V2_METHODS[method].params_model().model_rebuild(force=True)
        return Router(V2Handlers(self._agent, self._peer.v2_rewriter()), V2_METHODS)
