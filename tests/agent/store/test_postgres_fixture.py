"""Without PostgreSQL the database tests skip with one clear reason; CI makes that a failure."""

from __future__ import annotations

import pytest
from iac_code_dev import pg_server

from tests.agent.store import postgres_server


def test_no_server_binaries_skip_or_fail_as_ci_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_server, "server_binaries", lambda: None)
    monkeypatch.delenv(postgres_server.REQUIRE_VARIABLE, raising=False)
    with (
        pytest.raises(pytest.skip.Exception, match="apt-get install -y postgresql"),
        postgres_server.running_server(),
    ):
        pass
    monkeypatch.setenv(postgres_server.REQUIRE_VARIABLE, "1")
    with (
        pytest.raises(pytest.fail.Exception, match="IAC_CODE_REQUIRE_POSTGRES=1"),
        postgres_server.running_server(),
    ):
        pass
