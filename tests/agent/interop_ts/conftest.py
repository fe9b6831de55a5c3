"""The TypeScript interop tests need node and ``npm install`` run in this folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def node() -> str:
    executable = shutil.which("node")
    if executable is None:
        pytest.skip("node is not installed: the TypeScript SDK interop tests need it")
    if not (HERE / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.skip(
            "@agentclientprotocol/sdk is not installed: run `npm install` in tests/agent/interop_ts"
        )
    return executable
