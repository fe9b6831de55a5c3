"""The SDK's first import (seconds on a busy machine) never holds up the event loop: it runs
in a worker thread, and a cancel does not wait for it."""

from __future__ import annotations

import threading

import anyio
import pytest
from iac_code.llm import anthropic_client
from iac_code.llm.anthropic_client import AnthropicModelClient
from iac_code.llm.contract import ModelRequest

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(
    model="claude-test", messages=[{"role": "user", "content": "hi"}], max_tokens=16
)


async def test_the_first_call_imports_the_sdk_in_a_thread_and_a_cancel_does_not_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entered = threading.Event()
    release = threading.Event()
    importer: list[threading.Thread] = []

    def slow_import() -> None:  # stands in for an import that takes as long as it likes
        importer.append(threading.current_thread())
        entered.set()
        release.wait(10)

    monkeypatch.setattr(anthropic_client, "preload_sdk", slow_import)
    client = AnthropicModelClient("test-key", "http://127.0.0.1:9")
    finished = anyio.Event()

    async def first_call() -> None:
        async for _ in client.stream(REQUEST):
            pass

    try:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:

                async def run_and_note() -> None:
                    with anyio.CancelScope() as scope:
                        cancel_scopes.append(scope)
                        await first_call()
                    finished.set()

                cancel_scopes: list[anyio.CancelScope] = []
                tg.start_soon(run_and_note)
                # The loop is free while the import runs: this wait is served by it.
                assert await anyio.to_thread.run_sync(entered.wait, 5)
                cancel_scopes[0].cancel()
                await finished.wait()
            # The call ended although the import had not.
            assert not release.is_set()
            assert importer and importer[0] is not threading.main_thread()
    finally:
        release.set()
        await client.aclose()
