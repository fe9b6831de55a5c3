"""Shared pytest configuration: anyio runs async tests on asyncio; the Python processes the
tests start may cache compiled modules."""

import os
import sys

import pytest

# The suite starts hundreds of Python processes (agents, checkers, fixture agents and
# clients). Where the environment says PYTHONDONTWRITEBYTECODE (as these machines' does),
# each of them compiled the project's modules from source again — the generated bindings
# alone are ~150 modules. Writing __pycache__ (ignored by git, never packaged) saves that.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
