"""The store tests' PostgreSQL server (:mod:`iac_code_dev.pg_server`), skipping when none
can be started here; with ``IAC_CODE_REQUIRE_POSTGRES=1`` (set by CI) the skip is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
from iac_code_dev import pg_server
from iac_code_dev.pg_server import PostgresServer, PostgresUnavailable

REQUIRE_VARIABLE = "IAC_CODE_REQUIRE_POSTGRES"

__all__ = ["REQUIRE_VARIABLE", "PostgresServer", "running_server", "skip_or_fail"]


def skip_or_fail(reason: str) -> None:
    if os.environ.get(REQUIRE_VARIABLE) == "1":
        pytest.fail(f"{reason} ({REQUIRE_VARIABLE}=1 makes this a failure)", pytrace=False)
    pytest.skip(reason)


@contextmanager
def running_server() -> Iterator[PostgresServer]:
    with ExitStack() as stack:
        try:
            server = stack.enter_context(pg_server.running_server())
        except PostgresUnavailable as unavailable:
            skip_or_fail(str(unavailable))
            raise  # unreachable: skip_or_fail raises
        yield server
