"""The store tests' PostgreSQL server (:mod:`iac_code_dev.pg_server`), skipping when none
can be started here; with ``IAC_CODE_REQUIRE_POSTGRES=1`` (set by CI) the skip is a failure.
Also what other tests of real servers share: that skip-or-fail rule for any tool a test needs
(each with its own CI variable) and a free loopback port.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import NoReturn

import pytest
from iac_code_dev import pg_server
from iac_code_dev.pg_server import PostgresServer, PostgresUnavailable

REQUIRE_VARIABLE = "IAC_CODE_REQUIRE_POSTGRES"

__all__ = [
    "REQUIRE_VARIABLE",
    "PostgresServer",
    "free_port",
    "running_server",
    "skip_or_fail",
]


def skip_or_fail(reason: str, variable: str = REQUIRE_VARIABLE) -> NoReturn:
    """Skip for ``reason``, unless ``variable`` is ``1`` in the environment (CI sets it where
    the missing tool is installed): then the test must run, so this fails."""
    if os.environ.get(variable) == "1":
        pytest.fail(f"{reason} ({variable}=1 makes this a failure)", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    """A loopback port nobody listens on once this returns (the probe socket is closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_server() -> Iterator[PostgresServer]:
    with ExitStack() as stack:
        try:
            server = stack.enter_context(pg_server.running_server())
        except PostgresUnavailable as unavailable:
            skip_or_fail(str(unavailable))
        yield server
