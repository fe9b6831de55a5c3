"""``/healthz`` and ``/readyz``: what a load balancer or orchestrator asks, without a token.

``/healthz`` answers 200 while the process serves HTTP at all (liveness: restart it when this
fails). ``/readyz`` answers 200 only when new work should come here (readiness: route to it):
503 while the server drains after SIGTERM, and 503 while the PostgreSQL session store does not
answer. The store probe is one short connection and ``SELECT 1`` in a worker thread, reused for
a second, so a balancer probing every replica often costs the database next to nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

__all__ = ["Readiness", "postgres_probe"]

log = logging.getLogger("iac_code.remote")

#: Seconds a store probe's answer is reused.
PROBE_REUSE_SECONDS = 1.0
#: Seconds a store probe may take before the store counts as unreachable.
PROBE_TIMEOUT_SECONDS = 2

StoreProbe = Callable[[], str | None]
"""Runs in a worker thread; returns why the store cannot be used, or None."""


def postgres_probe(url: str) -> StoreProbe:
    def probe() -> str | None:
        import psycopg

        try:
            with psycopg.connect(url, connect_timeout=PROBE_TIMEOUT_SECONDS) as connection:
                connection.execute("SELECT 1")
        except psycopg.Error as error:
            first = str(error).strip().splitlines()
            return f"PostgreSQL is unreachable: {first[0] if first else type(error).__name__}"
        return None

    return probe


class Readiness:
    def __init__(self, store_probe: StoreProbe | None = None) -> None:
        self.draining = False
        self._probe = store_probe
        self._last: tuple[float, str | None] | None = None
        self._lock = anyio.Lock()  # one probe at a time; the others reuse its answer

    async def healthz(self, request: Request) -> JSONResponse:
        del request
        return JSONResponse({"status": "ok"})

    async def readyz(self, request: Request) -> JSONResponse:
        del request
        problem = "draining: the server is shutting down" if self.draining else None
        if problem is None:
            problem = await self._store_problem()
        if problem is not None:
            return JSONResponse({"status": "unavailable", "reason": problem}, status_code=503)
        return JSONResponse({"status": "ready"})

    async def _store_problem(self) -> str | None:
        if self._probe is None:
            return None
        async with self._lock:
            now = anyio.current_time()
            if self._last is not None and now - self._last[0] < PROBE_REUSE_SECONDS:
                return self._last[1]
            problem = await anyio.to_thread.run_sync(self._probe)
            if problem is not None and (self._last is None or self._last[1] is None):
                log.warning("not ready: %s", problem)
            self._last = (anyio.current_time(), problem)
            return problem
