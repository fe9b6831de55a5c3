"""Fixtures for the MCP tests."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture
def mcp_logger() -> logging.Logger:
    return logging.getLogger("tests.mcp")
