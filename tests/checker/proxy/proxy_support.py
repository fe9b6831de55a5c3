"""A scripted editor for the proxy tests: it starts ``acp-conformance proxy`` as a real
subprocess, writes NDJSON to it and reads what comes back, keeping every byte.

``teed(argv, folder)`` wraps an agent command so that the bytes the agent actually read and
wrote are saved (``in.bin``, ``out.bin``), to compare with what the editor wrote and read.

It is not the shared wire client on purpose: these tests check a relay byte for byte, so the
editor records every byte it wrote and read (unterminated tails and blank lines included),
closes its end of the proxy's stdout after N lines from the reading thread itself, and reads
stderr live while the proxy runs; none of that is what a test client of an agent needs.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

TIMEOUT = 120.0
RAW_AGENT = Path(__file__).parents[1] / "checks" / "fixtures" / "raw_agent.py"


def raw_agent(*args: str) -> list[str]:
    return [sys.executable, str(RAW_AGENT), *args]


def teed(argv: list[str], folder: Path) -> list[str]:
    """``argv`` behind two ``tee``s recording its stdin and stdout byte for byte."""
    script = 'tee "$IN" | "$@" | tee "$OUT"'
    return ["env", f"IN={folder / 'in.bin'}", f"OUT={folder / 'out.bin'}", "sh", "-c", script,
            "sh", *argv]  # fmt: skip


class ProxyProcess:
    def __init__(
        self,
        agent: list[str],
        folder: Path,
        *options: str,
        env: dict[str, str] | None = None,
        stop_reading_after: int | None = None,
    ) -> None:
        #: After this many lines the editor closes its end of the proxy's stdout.
        self.stop_reading_after = stop_reading_after
        self.report_path = folder / "report.json"
        argv = [sys.executable, "-m", "acp_conformance.cli", "proxy"]
        # The tests read the reports once the proxy exited: it waits for its judge as long.
        argv += ["--report-json", str(self.report_path), "--judge-wait", str(TIMEOUT)]
        argv += [*options, "--", *agent]
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.sent = bytearray()
        self.received = bytearray()
        self.stderr_lines: list[str] = []
        self._frames: queue.Queue[Any] = queue.Queue()
        self._stderr: queue.Queue[str | None] = queue.Queue()
        self._ids = 100
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        partial = b""
        count = 0
        while data := os.read(self.proc.stdout.fileno(), 65536):
            self.received += data
            partial += data
            *lines, partial = partial.split(b"\n")
            for line in lines:
                count += 1
                try:
                    self._frames.put(json.loads(line))
                except ValueError:
                    self._frames.put({"__line__": line})
            if self.stop_reading_after is not None and count >= self.stop_reading_after:
                # Closed here, by the only thread reading it, so the pipe really closes.
                self.proc.stdout.close()
                break
        self._frames.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            text = line.decode("utf-8", "replace")
            self.stderr_lines.append(text)
            self._stderr.put(text)
        self._stderr.put(None)

    # -- writing ------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.sent += data
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and return its response (frames before it are kept)."""
        self._ids += 1
        rid = self._ids
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait_for(lambda m: m.get("id") == rid and "method" not in m)

    def wait_for(self, predicate: Any) -> dict[str, Any]:
        while True:
            frame = self._frames.get(timeout=TIMEOUT)
            if frame is None:
                self._frames.put(None)
                raise EOFError("the proxy closed stdout")
            if isinstance(frame, dict) and predicate(frame):
                return frame

    def wait_for_eof(self) -> None:
        while self._frames.get(timeout=TIMEOUT) is not None:
            pass

    def wait_for_stderr(self, needle: str) -> str:
        """The first stderr line containing ``needle`` (while the proxy keeps running)."""
        while True:
            line = self._stderr.get(timeout=TIMEOUT)
            if line is None:
                raise EOFError(f"stderr closed without {needle!r}")
            if needle in line:
                return line

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.proc.send_signal(signum)

    def wait(self) -> int:
        code = self.proc.wait(timeout=TIMEOUT)
        return code

    def report(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.report_path.read_text(encoding="utf-8"))
        return data

    def __enter__(self) -> ProxyProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=TIMEOUT)


def start_session(proxy: ProxyProcess, cwd: Path) -> str:
    init = proxy.request(
        "initialize",
        {"protocolVersion": 1, "clientCapabilities": {"fs": {}, "terminal": False}},
    )
    assert init["result"]["protocolVersion"] == 1
    new = proxy.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    session_id: str = new["result"]["sessionId"]
    return session_id


def prompt(proxy: ProxyProcess, session_id: str, text: str) -> dict[str, Any]:
    return proxy.request(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
    )
