"""Fixtures for the code generator tests: one fresh in-memory build shared by the session."""

from __future__ import annotations

import pytest
from acp_schema import codegen


@pytest.fixture(scope="session")
def fresh_build() -> dict[str, str]:
    """Every generated file as rendered now from ``schema/`` (path → content)."""
    return codegen.build()
