"""``iac_code.session_files``: the start-up fast path's session, read back by the store."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from iac_code import session_files
from iac_code.store import SessionStore, index, session_store
from iac_code.store.meta import SessionMeta


def test_the_names_are_the_store_s() -> None:
    assert session_files.SESSIONS_DIR == session_store.SESSIONS_DIR
    assert session_files.EVENTS_FILE == session_store.EVENTS_FILE
    assert session_files.META_FILE == session_store.META_FILE
    assert session_files.LOCK_FILE == session_store.LOCK_FILE
    assert session_files.INDEX_FILE == index.INDEX_FILE
    assert session_files.INDEX_LOCK_FILE == index.INDEX_LOCK_FILE


def test_a_session_written_here_is_a_full_store_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = str(tmp_path / "project é")
    session_files.create_session(str(home / "sessions"), "fast-1", cwd)
    store = SessionStore(home)
    meta = store.get_meta("fast-1")
    assert meta is not None and meta.cwd == cwd and meta.title is None
    assert meta.created_at == meta.updated_at
    assert store.load_events("fast-1") == []
    sessions, _ = store.list()
    assert [s.session_id for s in sessions] == ["fast-1"]
    with store.lock("fast-1"):
        store.append("fast-1", {"type": "user_message", "text": "hi"})
    assert store.load_events("fast-1") == [{"type": "user_message", "text": "hi"}]
    # Byte for byte what the store itself writes, apart from the id and the times.
    made = store.create("store-1", cwd)
    ours = json.loads((home / "sessions" / "fast-1" / "meta.json").read_bytes())
    theirs = json.loads((home / "sessions" / "store-1" / "meta.json").read_bytes())
    assert list(ours) == list(theirs)
    assert SessionMeta.from_json(ours).to_json() == ours
    assert {**ours, "id": "x", "createdAt": "t", "updatedAt": "t"} == {
        **made.to_json(),
        "id": "x",
        "createdAt": "t",
        "updatedAt": "t",
    }
    for name in ("sessions", "sessions/fast-1"):
        assert (home / name).stat().st_mode & 0o777 == 0o700
    for name in ("meta.json", "events.jsonl", "lock"):
        assert (home / "sessions" / "fast-1" / name).stat().st_mode & 0o777 == 0o600


def test_the_timestamp_has_the_store_s_fixed_width_form() -> None:
    stamp = session_files.utc_timestamp()
    assert len(stamp) == len("2026-01-01T00:00:00.000000Z") and stamp.endswith("Z")
    assert (
        SessionMeta.from_json(
            {"id": "a", "cwd": "/", "createdAt": stamp, "updatedAt": stamp}
        ).created_at
        == stamp
    )


def test_a_torn_index_line_is_not_glued_to_the_new_record(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    SessionStore(tmp_path).create("before", "/w")
    with open(sessions / "index.jsonl", "ab") as handle:
        handle.write(b'{"id":"torn","cw')  # a writer killed mid-append
    session_files.create_session(str(sessions), "after", "/w")
    listed, _ = SessionStore(tmp_path).list()
    assert sorted(s.session_id for s in listed) == ["after", "before"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EIO])
def test_a_refused_write_leaves_no_half_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    def refuse(*args: Any) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(session_files, "_replace", refuse)
    with pytest.raises(OSError) as caught:
        session_files.create_session(str(tmp_path / "sessions"), "fast-1", "/w")
    assert caught.value.errno == code
    assert not (tmp_path / "sessions" / "fast-1").exists()
    assert SessionStore(tmp_path).list()[0] == []


def test_a_refused_index_append_leaves_no_half_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write_all = session_files._write_all

    def full_on_the_index(fd: int, data: bytes) -> None:
        if b'"updatedAt"' in data and b"schemaVersion" not in data:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_write_all(fd, data)

    monkeypatch.setattr(session_files, "_write_all", full_on_the_index)
    with pytest.raises(OSError):
        session_files.create_session(str(tmp_path / "sessions"), "fast-1", "/w")
    assert not (tmp_path / "sessions" / "fast-1").exists()
    assert SessionStore(tmp_path).get_meta("fast-1") is None


def test_a_file_where_the_store_folder_belongs_is_refused(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("not a folder")
    with pytest.raises(NotADirectoryError):
        session_files.create_session(str(tmp_path / "home" / "sessions"), "fast-1", "/w")


def _record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names descriptors via /proc")
@pytest.mark.parametrize("writer", ["fast path", "store"])
def test_what_a_load_reads_is_fsynced_before_create_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str
) -> None:
    home = tmp_path.resolve() / "home"
    (home / "sessions").mkdir(parents=True)
    synced = _record_fsyncs(monkeypatch)
    if writer == "fast path":
        session_files.create_session(str(home / "sessions"), "s-1", "/w")
    else:
        SessionStore(home).create("s-1", "/w")
    folder = home / "sessions" / "s-1"
    assert {str(folder / "meta.json"), str(folder), str(home / "sessions")} <= set(synced)


def test_a_path_that_cannot_be_synced_raises_whatever_its_place(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileNotFoundError):
        session_files.sync_paths([str(tmp_path / "missing"), str(tmp_path / "file")])
    with pytest.raises(FileNotFoundError):
        session_files.sync_paths([str(tmp_path / "file"), str(tmp_path / "missing")])
    session_files.sync_paths([str(tmp_path), str(tmp_path / "file")])
