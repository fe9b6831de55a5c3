"""Issue 34 item 9: the saved key is read off the event loop, only from a small regular
file, and read again only when the file's stat changes. Real files and a real FIFO."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import anyio
import pytest
from iac_code import credentials
from iac_code.credentials import (
    MAX_CREDENTIALS_BYTES,
    CredentialError,
    credentials_path,
    resolve_api_key_async,
    store_api_key,
    stored_api_key,
)

from tests.agent.handlers.agent_harness import make_settings

WAIT = 10.0


def test_a_fifo_in_place_of_the_file_is_refused_at_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    os.mkfifo(credentials_path(home))
    outcome: list[BaseException | str | None] = []

    def look_up() -> None:
        try:
            outcome.append(stored_api_key(home))
        except CredentialError as exc:
            outcome.append(str(exc))

    reader = threading.Thread(target=look_up, daemon=True)
    reader.start()
    reader.join(WAIT)
    if reader.is_alive():  # the old read blocks until a writer opens the FIFO: release it
        with open(credentials_path(home), "wb"):
            pass
        reader.join(WAIT)
        pytest.fail("reading the saved key blocked on a FIFO")
    assert outcome and "is not a regular file" in str(outcome[0])


def test_an_oversized_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    padding = " " * (MAX_CREDENTIALS_BYTES + 1)
    credentials_path(home).write_text(
        json.dumps({"anthropicApiKey": "sk-ant-ok"}) + padding, encoding="utf-8"
    )
    with pytest.raises(CredentialError, match="more than a saved key can be"):
        stored_api_key(home)


def test_the_file_is_read_again_only_when_its_stat_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    store_api_key(home, "sk-ant-first")
    reads: list[Path] = []
    real_read = credentials._read_saved_key

    def counting(path: Path) -> str | CredentialError | None:
        reads.append(path)
        return real_read(path)

    monkeypatch.setattr(credentials, "_read_saved_key", counting)
    assert [stored_api_key(home) for _ in range(5)] == ["sk-ant-first"] * 5
    assert len(reads) == 1
    store_api_key(home, "sk-ant-second")  # a login while the agent runs: a new inode
    assert stored_api_key(home) == "sk-ant-second"
    assert len(reads) == 2


@pytest.mark.anyio
async def test_the_lookup_runs_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    store_api_key(home, "sk-ant-saved")
    threads: list[str] = []
    real_read = credentials.SAVED_KEYS.read

    def recording(path: Path) -> str | None:
        threads.append(threading.current_thread().name)
        return real_read(path)

    monkeypatch.setattr(credentials.SAVED_KEYS, "read", recording)
    with anyio.fail_after(WAIT):
        key = await resolve_api_key_async(make_settings(home, api_key=None))
    assert key == "sk-ant-saved"
    assert threads and threads[0] != threading.main_thread().name


def test_a_damaged_file_is_no_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for content in ("not json", "[]", '{"anthropicApiKey": 5}', "{}"):
        credentials_path(home).write_text(content, encoding="utf-8")
        assert stored_api_key(home) is None


def test_store_refuses_a_key_with_a_control_character(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(CredentialError) as caught:
        store_api_key(home, "sk-ant-secret-part\r")
    assert "secret-part" not in str(caught.value) and "'sk-a...'" in str(caught.value)
    assert not credentials_path(home).exists()
