"""Remote ACP: the Streamable HTTP (POST + SSE) and WebSocket transport on one ``/acp`` endpoint.

The transport is a thin shell. Every remote connection owns an ordinary
:class:`~iac_code.rpc.connection.Connection` (with its own router and agent, exactly as over
stdio) wired to in-memory byte pipes; this package only moves JSON-RPC messages between those
pipes and HTTP requests, SSE streams or WebSocket frames, and enforces the transport's rules.

Modules, each with one job:

- :mod:`.protocol` — header names, which methods are session-scoped, message classification;
- :mod:`.options` — host, port, token, origins and limits;
- :mod:`.streams` — one outbound event stream: SSE ids, single reader, bounded replay buffer;
- :mod:`.connection` — one remote connection: the agent connection, routing of its output;
- :mod:`.registry` — the live connections, the connection limit, the idle reaper;
- :mod:`.responses` — transport error answers (status code + JSON-RPC error body);
- :mod:`.guard` — Origin, bearer token and ``Acp-Protocol-Version`` checks (ASGI middleware);
- :mod:`.http_endpoint` — POST / GET (SSE) / DELETE on ``/acp``;
- :mod:`.sse` — the SSE response body;
- :mod:`.websocket` — the WebSocket profile;
- :mod:`.app` — the Starlette application; :mod:`.serve` — Hypercorn, signals, start-up checks.

Nothing here is imported on the stdio start-up path.
"""
