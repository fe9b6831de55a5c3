"""Disk full and read-only directories: StoreWriteError, and nothing on disk is damaged.

The tests run as root, which chmod cannot stop, so the failures are injected by replacing
``os.write`` / ``os.open`` / ``os.replace`` with versions that raise ENOSPC or EROFS.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from iac_code.store import SessionStore, StoreWriteError, new_session_id

_real_write = os.write
_real_open = os.open


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _populated(tmp_path: Path) -> tuple[SessionStore, str]:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w", title="kept")
    store.append_many(session_id, [{"n": 1}, {"n": 2}])
    return store, session_id


def _failing(code: int) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise OSError(code, os.strerror(code))

    return fail


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EIO])
def test_failed_append_raises_and_leaves_the_log_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    store, session_id = _populated(tmp_path)
    before = _snapshot(tmp_path)
    monkeypatch.setattr(os, "write", _failing(code))
    with pytest.raises(StoreWriteError) as caught:
        store.append(session_id, {"n": 3})
    assert caught.value.errno == code
    monkeypatch.undo()

    assert _snapshot(tmp_path) == before
    store.append(session_id, {"n": 4})  # the caller reports the error and carries on
    assert store.load_events(session_id) == [{"n": 1}, {"n": 2}, {"n": 4}]


def test_a_half_written_append_is_rolled_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, session_id = _populated(tmp_path)
    events_file = store.sessions_dir / session_id / "events.jsonl"
    before = events_file.read_bytes()
    calls = 0

    def disk_fills_up(fd: int, data: Any) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return _real_write(fd, bytes(data[: len(data) // 2]))  # short write
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", disk_fills_up)
    with pytest.raises(StoreWriteError):
        store.append_many(session_id, [{"n": 3, "text": "x" * 1000}, {"n": 4}])
    monkeypatch.undo()
    assert calls == 2
    assert events_file.read_bytes() == before
    assert store.load_events(session_id) == [{"n": 1}, {"n": 2}]


def test_read_only_session_directory_refuses_appends_but_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, session_id = _populated(tmp_path)
    with (store.sessions_dir / session_id / "events.jsonl").open("ab") as handle:
        handle.write(b'{"torn')
    before = _snapshot(tmp_path)

    def read_only_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system")
        return _real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only_open)
    with pytest.raises(StoreWriteError):
        store.append(session_id, {"n": 3})
    with pytest.raises(StoreWriteError):
        store.update_meta(session_id, title="changed")
    with pytest.raises(StoreWriteError):
        store.create(new_session_id(), "/w")
    with pytest.raises(StoreWriteError):
        store.fork(session_id, new_session_id())
    # Reading still works; the torn tail simply cannot be repaired yet.
    assert store.load_events(session_id) == [{"n": 1}, {"n": 2}]
    assert store.get_meta(session_id).title == "kept"  # type: ignore[union-attr]
    assert [meta.session_id for meta in SessionStore(tmp_path).list()[0]] == [session_id]
    monkeypatch.undo()
    assert _snapshot(tmp_path) == before


def test_failed_metadata_update_keeps_the_old_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, session_id = _populated(tmp_path)
    before = _snapshot(tmp_path)
    monkeypatch.setattr(os, "replace", _failing(errno.ENOSPC))
    with pytest.raises(StoreWriteError):
        store.update_meta(session_id, title="new title")
    monkeypatch.undo()
    assert _snapshot(tmp_path) == before, "no temporary file may be left behind either"
    assert SessionStore(tmp_path).get_meta(session_id).title == "kept"  # type: ignore[union-attr]


def test_failed_create_leaves_no_half_made_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, session_id = _populated(tmp_path)
    before = _snapshot(tmp_path)
    monkeypatch.setattr(os, "write", _failing(errno.ENOSPC))
    new_id = new_session_id()
    with pytest.raises(StoreWriteError):
        store.create(new_id, "/w", title="a title long enough to need a write")
    monkeypatch.undo()
    assert not (store.sessions_dir / new_id).exists()
    assert _snapshot(tmp_path) == before
    assert [meta.session_id for meta in store.list()[0]] == [session_id]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_real_read_only_directory(tmp_path: Path) -> None:
    store, session_id = _populated(tmp_path)
    session_dir = store.sessions_dir / session_id
    (session_dir / "events.jsonl").chmod(0o400)
    try:
        with pytest.raises(StoreWriteError):
            store.append(session_id, {"n": 3})
    finally:
        (session_dir / "events.jsonl").chmod(0o600)
    assert store.load_events(session_id) == [{"n": 1}, {"n": 2}]
