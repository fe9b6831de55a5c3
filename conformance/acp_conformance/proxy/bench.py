"""``python -m acp_conformance.proxy.bench``: what the proxy costs a session it watches.

A measurement, not a test, and never imported by the proxy. A small standard-library agent
answers ``initialize``/``session/new``, streams ``--chunks`` ``agent_message_chunk`` updates
per prompt and answers ``_bench/ping`` at once. The same client drives it over a direct
pipe and through ``acp-conformance proxy`` (which judges every frame):

* relay: chunks per second from the prompt request to its result, proxied vs direct
  (target ≥ 0.8x); before each measured turn the machine is let settle, so the judge's
  catching up after a proxied turn (it holds back while a session streams) is not charged
  to the next turn;
* latency: median round trip of a ping, proxied minus direct, halved because a round trip
  crosses the proxy twice (target ≤ 1 ms added per message).

``--json`` prints the numbers as one JSON object (the ``iac-code-dev bench`` row reads it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

AGENT = r"""
import json, sys
out = sys.stdout.buffer
def send(msg):
    out.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
for line in sys.stdin.buffer:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1,
              "agentCapabilities": {}, "authMethods": []}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "bench-session"}})
    elif method == "session/prompt":
        n = int(msg["params"]["prompt"][0]["text"])
        text = "the quick brown fox jumps over the lazy dog " * 3
        for i in range(n):
            send({"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": "bench-session", "update": {"sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text + str(i)}}}})
        send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    out.flush()
"""


class Client:
    """Blocking NDJSON client over one process's pipes (bench only: plain reads)."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """Send a request; return its response and how many lines came before it."""
        self.next_id += 1
        rid = self.next_id
        line = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        self.stdin.write(json.dumps(line).encode() + b"\n")
        self.stdin.flush()
        before = 0
        while True:
            raw = self.stdout.readline()
            if not raw:
                raise RuntimeError(f"{method}: the process closed stdout")
            msg = json.loads(raw)
            if msg.get("id") == rid and "method" not in msg:
                return msg, before
            before += 1

    def close(self) -> int:
        self.stdin.close()
        code = self.proc.wait(timeout=60)
        return code


def _session(client: Client) -> None:
    client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    client.call("session/new", {"cwd": os.getcwd(), "mcpServers": []})


def _cpu_busy_fraction(interval: float = 0.1) -> float | None:
    """How busy the machine's CPUs were over ``interval`` (from /proc/stat; None elsewhere)."""

    def sample() -> tuple[int, int] | None:
        try:
            with open("/proc/stat", encoding="ascii") as stat:
                fields = [int(v) for v in stat.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields), idle

    first = sample()
    time.sleep(interval)
    second = sample()
    if first is None or second is None or second[0] == first[0]:
        return None
    return 1 - (second[1] - first[1]) / (second[0] - first[0])


def _settle(limit: float = 15.0) -> None:
    """Wait until the machine is nearly idle: the proxy's judge catches up on a turn's
    frames in the pause after it (on purpose, see relay.JUDGE_QUIET), and that catching up
    must not land on the next turn measured, whichever side it is."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        busy = _cpu_busy_fraction()
        if busy is None or busy < 0.15:
            return


def _turn_rate(client: Client, chunks: int) -> float:
    prompt = {"sessionId": "bench-session", "prompt": [{"type": "text", "text": str(chunks)}]}
    started = time.perf_counter()
    _, seen = client.call("session/prompt", prompt)
    return seen / (time.perf_counter() - started)


def _relay_rates(
    direct: list[str], proxied: list[str], chunks: int, rounds: int
) -> tuple[float, float, float]:
    """Median chunks/s of each, and the median of the per-round ratios. The two turns of a
    round run back to back, so a neighbour's load on this shared machine hits both alike."""
    clients = [Client(direct), Client(proxied)]
    try:
        for client in clients:
            _session(client)
            _turn_rate(client, 200)  # warm-up
        pairs = []
        for n in range(rounds):
            order = clients if n % 2 == 0 else clients[::-1]
            rates = {}
            for client in order:
                _settle()
                rates[id(client)] = _turn_rate(client, chunks)
            pairs.append((rates[id(clients[0])], rates[id(clients[1])]))
    finally:
        for client in clients:
            client.close()
    return (
        statistics.median(d for d, _ in pairs),
        statistics.median(p for _, p in pairs),
        statistics.median(p / d for d, p in pairs),
    )


def _round_trips(argv: list[str], pings: int) -> list[float]:
    client = Client(argv)
    try:
        _session(client)
        times = []
        for _ in range(pings):
            started = time.perf_counter()
            client.call("_bench/ping", {})
            times.append(time.perf_counter() - started)
        return times[pings // 10 :]  # the first ones warm caches on both sides
    finally:
        client.close()


def _judge_rate(frames: int) -> float:
    """Frames per second the live judge keeps up with (in this process, no pipes)."""
    from .monitor import LiveMonitor

    monitor = LiveMonitor()
    rpc = {"jsonrpc": "2.0"}
    setup = [
        ("c2a", {**rpc, "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
        ("a2c", {**rpc, "id": 1, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        ("c2a", {**rpc, "id": 2, "method": "session/new",
                 "params": {"cwd": "/", "mcpServers": []}}),
        ("a2c", {**rpc, "id": 2, "result": {"sessionId": "bench-session"}}),
    ]  # fmt: skip
    for direction, message in setup:
        monitor.feed(direction, json.dumps(message).encode())  # type: ignore[arg-type]
    text = "the quick brown fox jumps over the lazy dog " * 3
    lines = [
        json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "bench-session", "update": {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"{text}{i}"}}}}).encode()
        for i in range(frames)
    ]  # fmt: skip
    started = time.perf_counter()
    for line in lines:
        monitor.feed("a2c", line)
    return frames / (time.perf_counter() - started)


def _exit_after_eof(argv: list[str], chunks: int) -> float:
    """Seconds from closing the proxy's stdin after a turn of ``chunks`` to its exit (the
    judge finishing what it has not judged yet, plus the agent's own exit)."""
    client = Client(argv)
    _session(client)
    prompt = {"sessionId": "bench-session", "prompt": [{"type": "text", "text": str(chunks)}]}
    client.call("session/prompt", prompt)
    started = time.perf_counter()
    client.close()
    return time.perf_counter() - started


def measure(chunks: int = 20_000, rounds: int = 9, pings: int = 2000) -> dict[str, Any]:
    agent = [sys.executable, "-c", AGENT]
    proxied = [sys.executable, "-m", "acp_conformance.cli", "proxy", "--", *agent]
    direct_rate, proxy_rate, ratio = _relay_rates(agent, proxied, chunks, rounds)
    direct_rtt = statistics.median(_round_trips(agent, pings))
    proxy_rtt = statistics.median(_round_trips(proxied, pings))
    added_ms = (proxy_rtt - direct_rtt) / 2 * 1000
    judge_rate = _judge_rate(chunks)
    exit_direct = _exit_after_eof(agent, chunks)
    exit_proxy = _exit_after_eof(proxied, chunks)
    return {
        "chunks": chunks,
        "directChunksPerSecond": round(direct_rate),
        "proxyChunksPerSecond": round(proxy_rate),
        "relayRatio": round(ratio, 3),
        "directRoundTripMs": round(direct_rtt * 1000, 3),
        "proxyRoundTripMs": round(proxy_rtt * 1000, 3),
        "addedMsPerMessage": round(added_ms, 3),
        "judgeFramesPerSecond": round(judge_rate),
        "directExitAfterEofSeconds": round(exit_direct, 3),
        "proxyExitAfterEofSeconds": round(exit_proxy, 3),
        "targets": {"relayRatio": ">= 0.8", "addedMsPerMessage": "<= 1"},
        "met": ratio >= 0.8 and added_ms <= 1.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acp_conformance.proxy.bench")
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--pings", type=int, default=2000)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    data = measure(args.chunks, args.rounds, args.pings)
    if args.json:
        print(json.dumps(data))
        return 0
    print(
        f"relay: {data['proxyChunksPerSecond']} chunks/s through the proxy vs "
        f"{data['directChunksPerSecond']} direct = {data['relayRatio']}x (target >= 0.8x)\n"
        f"latency: round trip {data['proxyRoundTripMs']} ms vs {data['directRoundTripMs']} ms "
        f"direct = {data['addedMsPerMessage']} ms added per message (target <= 1 ms)\n"
        f"judge: {data['judgeFramesPerSecond']} chunk frames/s validated; exit after EOF "
        f"{data['proxyExitAfterEofSeconds']} s vs {data['directExitAfterEofSeconds']} s direct"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
