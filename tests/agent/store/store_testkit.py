"""Helpers shared by the store tests: child processes driven over a pipe, with bounded waits."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import TracebackType


class Child:
    """A Python child process running ``code`` that reports progress as lines on stdout.

    Every wait is bounded; leaving the ``with`` block kills the child if it still runs.
    """

    def __init__(self, code: str, *args: str | Path | int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._buffer = b""

    def read_line(self, timeout: float = 60.0) -> str:
        """The next line the child printed; fails the test if none comes in ``timeout``."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    raise AssertionError(f"child printed no line within {timeout} s")
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise AssertionError(f"child exited early: {self.stderr_text()}")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def wait_for(self, expected: str, timeout: float = 60.0) -> None:
        line = self.read_line(timeout)
        assert line == expected, f"expected {expected!r}, child said {line!r}"

    def tell(self, text: str) -> None:
        """Send one line to the child's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()

    def finish(self, timeout: float = 60.0) -> int:
        return self.process.wait(timeout)

    def stderr_text(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")

    def __enter__(self) -> Child:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
