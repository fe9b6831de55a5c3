"""Bench rows for the remote transport (``iac-code acp --transport http``, a real subprocess).

- ``remote_initialize``: POST ``initialize`` round trip, each one opening a new connection;
- ``remote_relay``: the relay turn of the ``relay`` metric streamed over SSE and over
  WebSocket, next to the same turn over stdio measured in the same run (ratios);
- ``remote_concurrent``: 100 clients at once, each with its own connection, streams, session
  and prompt turn: errors, wall time and the server's memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx
from acp_scripted_llm import Turn

from ._client import HarnessError
from .context import INITIALIZE_PARAMS, BenchContext, prompt_params
from .llm import relay_text, run_relay, scripted_llm
from .procinfo import tree_memory
from .remote_client import HttpSession, WsSession, http_session, remote_server, ws_session
from .results import Row, mib, ms_samples, summarize, timing_text

INITIALIZE_CALLS = 50
RELAY_DELTAS = 20_000
RELAY_RUNS = 3
CONCURRENT_CLIENTS = 100


def run_initialize(ctx: BenchContext, calls: int = INITIALIZE_CALLS) -> list[Row]:
    workspace = ctx.workspace("remote_initialize")
    with (
        scripted_llm(Turn().text("ok").to_dict()) as (llm, _),
        remote_server(ctx, workspace, llm.url) as server,
    ):
        samples = anyio.run(_initialize_samples, server.url, calls, ctx.timeout)
    summary = summarize(samples)
    return [
        Row(
            metric="remote_initialize",
            value=timing_text(summary),
            target="-",
            verdict="info",
            notes="POST initialize → 200 with Acp-Connection-Id, keep-alive HTTP/1.1 client,"
            " new connection (agent + router) each time; DELETE after each",
            data={"samples_ms": ms_samples(samples)},
        )
    ]


async def _initialize_samples(url: str, calls: int, bound: float) -> list[float]:
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE_PARAMS}
    samples: list[float] = []
    async with httpx.AsyncClient(timeout=bound) as http:
        await http.post(url, json=body)  # warm-up: imports, first connection
        for _ in range(calls):
            started = time.perf_counter()
            response = await http.post(url, json=body)
            samples.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise HarnessError(f"initialize answered {response.status_code}")
            await http.delete(
                url, headers={"acp-connection-id": response.headers["acp-connection-id"]}
            )
    return samples


def run_relay_remote(
    ctx: BenchContext, deltas: int = RELAY_DELTAS, runs: int = RELAY_RUNS
) -> list[Row]:
    stdio_rows = run_relay(ctx, deltas=deltas, runs=runs)
    stdio_rate = float(stdio_rows[0].data["chunks_per_second"]["median"])
    workspace = ctx.workspace("remote_relay")
    expected = relay_text(deltas)
    big = Turn().text(expected, chunks=deltas).to_dict()
    rows: list[Row] = []
    with scripted_llm(big) as (llm, turns), remote_server(ctx, workspace, llm.url) as server:
        for label, opener, url in (
            ("sse", _open_http, server.url),
            ("websocket", _open_ws, server.ws_url),
        ):
            turns.push(Turn().text("warm-up").to_dict())
            rates, intact = anyio.run(
                _relay_rates,
                opener,
                url,
                str(workspace.project),
                runs,
                deltas,
                expected,
                ctx.timeout,
            )
            summary = summarize(rates)
            ratio = summary.median / stdio_rate if stdio_rate else 0.0
            rows.append(
                Row(
                    metric=f"remote_relay_{label}",
                    value=f"median {summary.median:,.0f} chunks/s"
                    f" (min {summary.min:,.0f}, n={summary.n})",
                    target="-",
                    verdict="info" if intact else "MISSED",
                    notes=f"{ratio:.2f}x stdio ({stdio_rate:,.0f} chunks/s in this run); "
                    f"{deltas} one-character deltas per turn; text "
                    f"{'intact' if intact else 'CORRUPTED OR INCOMPLETE'}",
                    data={
                        "chunks_per_second": summary.as_dict(),
                        "stdio_chunks_per_second": stdio_rate,
                        "ratio_to_stdio": round(ratio, 3),
                        "intact": intact,
                    },
                )
            )
    return [*stdio_rows, *rows]


Opener = Callable[[str, float], Any]


def _open_http(url: str, timeout: float) -> Any:
    return http_session(url, timeout)


def _open_ws(url: str, timeout: float) -> Any:
    return ws_session(url, timeout)


async def _relay_rates(
    opener: Opener, url: str, cwd: str, runs: int, deltas: int, expected: str, bound: float
) -> tuple[list[float], bool]:
    rates: list[float] = []
    intact = True
    async with opener(url, bound) as client:
        session_id = await client.new_session(cwd)
        await _prompt(client, session_id, "warm-up")
        for _ in range(runs):
            client.chunk_times[session_id] = []
            client.chunk_text[session_id] = []
            await _prompt(client, session_id, "stream a lot")
            times = client.chunk_times[session_id]
            if not times:
                raise HarnessError("the relay prompt produced no agent_message_chunk")
            window = times[-1] - times[0]
            rates.append(deltas / window if window > 0 else float("inf"))
            intact = intact and "".join(client.chunk_text[session_id]) == expected
    return rates, intact


async def _prompt(client: HttpSession | WsSession, session_id: str, text: str) -> Any:
    session = session_id if isinstance(client, HttpSession) else None
    return await client.call("session/prompt", prompt_params(session_id, text), session)


def run_concurrent_remote(ctx: BenchContext, clients: int = CONCURRENT_CLIENTS) -> list[Row]:
    workspace = ctx.workspace("remote_concurrent")
    with (
        scripted_llm(Turn().text("concurrent answer").to_dict()) as (llm, _),
        remote_server(ctx, workspace, llm.url) as server,
    ):
        before = tree_memory(server.pid)
        errors, wall, durations = anyio.run(
            _concurrent, server.url, str(workspace.project), clients, ctx.timeout
        )
        after = tree_memory(server.pid)
    summary = summarize(durations) if durations else None
    memory = f"server RSS {mib(after.rss)} (was {mib(before.rss)})" if after and before else ""
    return [
        Row(
            metric="remote_concurrent",
            value=f"{clients} connections, {len(errors)} errors, {wall:.2f} s wall",
            target="0 errors",
            verdict="ok" if not errors else "MISSED",
            notes=(f"per client {timing_text(summary)}; " if summary else "")
            + "each: initialize, 2 SSE streams, session/new, prompt turn, DELETE; "
            + memory,
            data={
                "errors": errors[:10],
                "wall_seconds": round(wall, 3),
                "client_ms": ms_samples(durations),
                "rss_before": before.rss if before else None,
                "rss_after": after.rss if after else None,
            },
        )
    ]


async def _concurrent(
    url: str, cwd: str, clients: int, bound: float
) -> tuple[list[str], float, list[float]]:
    errors: list[str] = []
    durations: list[float] = []
    ready = anyio.Event()

    async def one(index: int) -> None:
        await ready.wait()
        started = time.perf_counter()
        try:
            async with http_session(url, bound) as client:
                session_id = await client.new_session(cwd)
                await _prompt(client, session_id, f"client {index}")
                await client.close()
        except Exception as exc:  # a failure is a measured error, not a harness error
            errors.append(f"client {index}: {exc!r}"[:200])
            return
        durations.append(time.perf_counter() - started)

    # Warm-up client: the server's first prompt finishes loading the model client.
    async with http_session(url, bound) as client:
        await _prompt(client, await client.new_session(cwd), "warm-up")
        await client.close()
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(one, index)
        started = time.perf_counter()
        ready.set()
    return errors, time.perf_counter() - started, durations
