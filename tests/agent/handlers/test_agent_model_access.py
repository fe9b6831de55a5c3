"""ModelAccess: the lazily created model client and the retry policy every request shares."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp_scripted_llm import error_turn, text_turn
from iac_code.agent.model_access import ModelAccess
from iac_code.llm.contract import ModelRequest, ModelResponse
from iac_code.llm.retry import RetryNotice
from iac_code.settings import Settings
from iac_code_dev.fake_llm import ScriptedModelClient

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(model="m", messages=[{"role": "user", "content": "hi"}])


def settings(tmp_path: Path, api_key: str | None = "key") -> Settings:
    return Settings(home=tmp_path, api_key=api_key, retry_base_delay=0.0)


def test_without_an_api_key_there_is_no_client(tmp_path: Path) -> None:
    assert ModelAccess(settings(tmp_path, api_key=None)).client() is None


def test_an_injected_client_is_used_until_forgotten(tmp_path: Path) -> None:
    fake = ScriptedModelClient([text_turn("hi")], timing=False)
    access = ModelAccess(settings(tmp_path, api_key=None), fake)
    assert access.client() is fake
    access.forget_client()
    assert access.client() is None  # no key: nothing to create in its place


async def test_retries_are_reported_to_the_hook_and_the_stream_ends_with_the_response(
    tmp_path: Path,
) -> None:
    fake = ScriptedModelClient([error_turn(529), text_turn("done")], timing=False)
    notices: list[RetryNotice] = []

    async def heard(notice: RetryNotice) -> None:
        notices.append(notice)

    access = ModelAccess(settings(tmp_path), fake, on_retry=heard)
    with anyio.fail_after(60):
        events = [event async for event in access.stream(fake, REQUEST)]
    assert [notice.attempt for notice in notices] == [1]
    assert isinstance(events[-1], ModelResponse)
    assert events[-1].text == "done"


async def test_complete_returns_the_whole_response(tmp_path: Path) -> None:
    fake = ScriptedModelClient([text_turn("summary")], timing=False)
    access = ModelAccess(settings(tmp_path), fake)
    with anyio.fail_after(60):
        response = await access.complete(fake, REQUEST)
    assert response.text == "summary"
    assert len(fake.requests) == 1
