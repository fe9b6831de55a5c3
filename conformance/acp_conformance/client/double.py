"""The scripted agent double that ``acp-conformance client`` hands to the client under test.

``python -m acp_conformance.client.double --scenario NAME --record FILE`` speaks raw NDJSON
on stdio and records every line in both directions, with a timestamp, to FILE (one JSON
object a line: ``{"t", "dir", "line"}``), so the judging happens afterwards over the record
and never depends on the double's own view. It uses only the standard library: the client
under test often waits for it to answer ``initialize`` quickly.

What it does in a session is decided by :mod:`.scenarios`; this module is the wire: reading
with a bound on every wait, writing, recording, and answering what the client asks.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from ..harness.limits import LineSplitter, process_budget
from ..harness.recorder import parse_line
from .scenarios import SESSION_ID, Script, script_for

READ_CHUNK = 64 * 1024


class Wire:
    """One NDJSON stdio connection with the client, every line recorded."""

    def __init__(self, record: Path, timeout: float, out: BinaryIO, inp: BinaryIO) -> None:
        self.timeout = timeout
        self._out = out
        self._record = record.open("a", encoding="utf-8")
        #: Lines of the client (and the full length of one over the cap, else 0).
        self._lines: queue.Queue[tuple[bytes, int] | None] = queue.Queue()
        self._next_id = 0
        self.closed = False
        #: Messages that arrived while the double waited for an answer, handled next.
        self.pending: list[Any] = []
        self.cancel_seen = False
        self._budget = process_budget()
        self._unrecorded = 0
        threading.Thread(target=self._read, args=(inp,), daemon=True).start()

    def _read(self, inp: BinaryIO) -> None:
        """Lines of the client's output, each at most the line cap: of a longer one only its
        head is kept, marked with its length (the client's wire defect, judged as such)."""
        splitter = LineSplitter()
        fd = inp.fileno()
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except OSError:
                chunk = b""
            found = splitter.feed(chunk) if chunk else [x for x in [splitter.finish()] if x]
            for line in found:
                self._lines.put((line.data.rstrip(b"\r"), line.size if line.oversized else 0))
            if not chunk:
                break
        self._lines.put(None)

    def _note(self, direction: str, raw: bytes, oversized: int = 0) -> None:
        """Record one line, within the recording budget (a flooding client's lines past it
        are counted, not recorded: the record, and the judge reading it, stay bounded)."""
        if not self._budget.charge(len(raw)):
            self._unrecorded += 1
            return
        entry: dict[str, Any] = {
            "t": time.time(),
            "dir": direction,
            "line": raw.decode("utf-8", errors="replace"),
        }
        if oversized:
            entry["oversized"] = oversized
        self._record.write(json.dumps(entry) + "\n")
        self._record.flush()

    def send(self, message: dict[str, Any]) -> None:
        raw = json.dumps(message, separators=(",", ":")).encode()
        self._note("a2c", raw)
        try:
            self._out.write(raw + b"\n")
            self._out.flush()
        except (BrokenPipeError, ValueError):
            self.closed = True

    def receive(self, timeout: float | None = None) -> Any:
        """The next parsed message (``None`` at end of input or when the wait ran out;
        lines that are not JSON are recorded and skipped)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self.closed:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                item = self._lines.get(timeout=left)
            except queue.Empty:
                return None
            if item is None:
                self.closed = True
                return None
            raw, oversized = item
            if not raw.strip() and not oversized:
                continue
            self._note("c2a", raw, oversized)
            if oversized:
                continue
            msg, error = parse_line(raw)
            if error is not None:
                continue
            if isinstance(msg, dict) and msg.get("method") == "session/cancel":
                self.cancel_seen = True
            return msg
        return None

    def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        id: Any = None,
        then: list[dict[str, Any]] | None = None,
    ) -> Any:
        """Send a request (then the notifications ``then`` before waiting) and return the
        client's answer to it; other messages that arrive meanwhile are kept in ``pending``
        (``None`` if no answer came within the timeout)."""
        if id is None:
            self._next_id += 1
            id = self._next_id
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        for notification in then or []:
            self.send(notification)
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            msg = self.receive(left)
            if msg is None:
                return None
            if isinstance(msg, dict) and "method" not in msg and "id" in msg:
                return msg  # an answer; the judge checks it echoes ``id``
            self.pending.append(msg)
        return None

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})


class Double:
    """Answers the client's requests, running the scenario's script during a prompt."""

    def __init__(self, wire: Wire, script: Script) -> None:
        self.wire = wire
        self.script = script
        self.initialized = False
        self.client_capabilities: dict[str, Any] = {}
        self.cwd = os.getcwd()

    def serve(self) -> None:
        while not self.wire.closed:
            msg = self.wire.pending.pop(0) if self.wire.pending else self.wire.receive()
            if msg is None:
                return
            if isinstance(msg, dict) and isinstance(msg.get("method"), str):
                self.handle(msg)

    def handle(self, msg: dict[str, Any]) -> None:
        method, params = msg["method"], msg.get("params")
        params = params if isinstance(params, dict) else {}
        if "id" not in msg:
            return  # notifications (session/cancel is seen by the wire itself)
        if method == "initialize":
            self.initialized = True
            caps = params.get("clientCapabilities")
            self.client_capabilities = caps if isinstance(caps, dict) else {}
            self.answer(msg, self.script.initialize_result())
        elif not self.initialized:
            self.fail(msg, -32600, "initialize must come first")
        elif method in ("session/new", "session/load"):
            cwd = params.get("cwd")
            if isinstance(cwd, str) and os.path.isdir(cwd):
                self.cwd = cwd
            if method == "session/load":
                self.script.replay(self.wire, params.get("sessionId", SESSION_ID))
            self.answer(msg, {"sessionId": SESSION_ID} if method == "session/new" else {})
        elif method == "session/prompt":
            self.script.run_turn(self.wire, self.client_capabilities, self.cwd)
            error = self.script.prompt_error()
            if error is not None:
                self.fail(msg, *error)
            else:
                self.answer(
                    msg, {"stopReason": "cancelled" if self.wire.cancel_seen else "end_turn"}
                )
        elif method == "authenticate" or method.startswith("session/set_"):
            self.answer(msg, {})
        else:
            self.fail(msg, -32601, f"method not found: {method}")

    def answer(self, msg: dict[str, Any], result: Any) -> None:
        self.wire.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def fail(self, msg: dict[str, Any], code: int, message: str) -> None:
        self.wire.send(
            {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": code, "message": message}}
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acp-conformance-client-double")
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args(argv)
    wire = Wire(args.record, args.timeout, sys.stdout.buffer, sys.stdin.buffer)
    Double(wire, script_for(args.scenario)).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
